import type { Prisma as P } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import type { Criteria } from '../jobs/acceptance.js';
import { insertTask, type Requirements } from '../jobs/createTask.js';
import { applyTransition } from '../jobs/jobLifecycle.js';
import type { PlanInput } from '../jobs/planSchema.js';
import { serviceRuntime, UNTIL_STOPPED_SEC, type ServiceSpec } from './serviceSpec.js';
import { insertService } from './services.js';

/**
 * Losing the worker of a service is routine (a contributor's machine may vanish at any time):
 * its SERVICE task is handed to a compatible replacement many times before the job fails.
 */
export const SERVICE_MAX_ATTEMPTS = 20;

/**
 * A plan with `service` (acceptPlan, inside its transaction): the ORIGINAL code is frozen, the
 * job RUNNING, one SERVICE task queued with the readiness check and duration in its
 * requirements (the time limit is the duration, or UNTIL_STOPPED_SEC), and the Service row
 * (slug, hashed token) created for it.
 */
export async function acceptServicePlan(
  tx: Db,
  now: Date,
  input: { jobId: string; planId: string; codeVersionId: string; plan: PlanInput; service: ServiceSpec; environment: Record<string, unknown>; requirements: Requirements; criteria: Criteria },
  eventIds: string[],
): Promise<{ taskId: string; eventIds: string[] }> {
  const { jobId, plan, service } = input;
  const runtime = serviceRuntime(service);
  const moved = await applyTransition(tx, now, jobId, 'acceptPlan', {
    reason: `Starting the service \`${plan.command}\`; it serves at its URL once ${runtime.readinessPath} answers 2xx, ${runtime.durationSec ? `for ${runtime.durationSec} s` : 'until you stop it'}.`,
    data: { currentPlanId: input.planId, acceptanceCriteria: input.criteria as unknown as P.InputJsonValue, frozenCodeId: input.codeVersionId },
  });
  const { task, eventId } = await insertTask(tx, now, {
    jobId,
    kind: 'SERVICE',
    name: 'service',
    codeVersionId: input.codeVersionId,
    command: plan.command,
    environment: input.environment,
    requirements: { ...input.requirements, timeoutSec: runtime.durationSec ?? UNTIL_STOPPED_SEC, service: runtime },
    maxAttempts: SERVICE_MAX_ATTEMPTS,
  });
  await insertService(tx, { jobId, taskId: task.id, spec: { ...service, runtime } });
  return { taskId: task.id, eventIds: [...eventIds, ...moved.eventIds, eventId] };
}
