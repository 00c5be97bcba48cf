import type { Prisma as P } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import type { ManifestEntry } from '../blobs/paths.js';
import type { Criteria } from '../jobs/acceptance.js';
import { insertTask, type CreateTaskInput, type Requirements } from '../jobs/createTask.js';
import { applyTransition } from '../jobs/jobLifecycle.js';
import type { PlanInput } from '../jobs/planSchema.js';
import { serviceRuntime, UNTIL_STOPPED_SEC, type ServiceSpec } from './serviceSpec.js';
import { insertService, type ServiceRuntime } from './services.js';

/**
 * Losing the worker of a service is routine (a contributor's machine may vanish at any time):
 * its SERVICE task is handed to a compatible replacement many times before the job fails.
 */
export const SERVICE_MAX_ATTEMPTS = 20;

/**
 * A plan with `service` (acceptPlan, inside its transaction): the ORIGINAL code is frozen, the
 * job RUNNING and the Service row (slug, hashed token) created. Without setup steps one SERVICE
 * task is queued at once, with the readiness check and duration in its requirements (the time
 * limit is the duration, or UNTIL_STOPPED_SEC). With setup steps (`before`: `flask init-db`,
 * `make data`) their first step's RUN task (`setup`, made by the caller) is queued instead and
 * holds the Service row meanwhile, so the URL and token exist from the start and answer 503
 * (not ready) while the steps run; the last step's success queues the SERVICE task with the
 * steps' products as inputs and hands it the row (advanceJob.ts, `serviceTask`).
 */
export async function acceptServicePlan(
  tx: Db,
  now: Date,
  input: {
    jobId: string;
    planId: string;
    codeVersionId: string;
    plan: PlanInput;
    service: ServiceSpec;
    environment: Record<string, unknown>;
    requirements: Requirements;
    criteria: Criteria;
    setup: CreateTaskInput | null;
  },
  eventIds: string[],
): Promise<{ taskId: string; eventIds: string[] }> {
  const { jobId, plan, service } = input;
  const runtime = serviceRuntime(service);
  const steps = plan.before?.map((b) => `\`${b.command}\``).join(', then ');
  const moved = await applyTransition(tx, now, jobId, 'acceptPlan', {
    reason: `${steps ? `Running the setup step${plan.before!.length > 1 ? 's' : ''} ${steps} first, then starting` : 'Starting'} the service \`${plan.command}\`; it serves at its URL once ${runtime.readinessPath} answers 2xx, ${runtime.durationSec ? `for ${runtime.durationSec} s` : 'until you stop it'}.`,
    data: {
      currentPlanId: input.planId,
      acceptanceCriteria: input.criteria as unknown as P.InputJsonValue,
      frozenCodeId: input.codeVersionId,
    },
  });
  const { task, eventId } = await insertTask(
    tx,
    now,
    input.setup ?? serviceTask(jobId, input.codeVersionId, plan.command, input.environment, input.requirements, runtime, []),
  );
  await insertService(tx, { jobId, taskId: task.id, spec: { ...service, runtime } });
  return { taskId: task.id, eventIds: [...eventIds, ...moved.eventIds, eventId] };
}

/** The SERVICE task of a plan; `inputs`: what its setup steps produced, placed at their paths. */
export function serviceTask(
  jobId: string,
  codeVersionId: string,
  command: string,
  environment: Record<string, unknown>,
  requirements: Requirements,
  runtime: ServiceRuntime,
  inputs: ManifestEntry[],
): CreateTaskInput {
  return {
    jobId,
    kind: 'SERVICE',
    name: 'service',
    codeVersionId,
    command,
    environment: { ...environment, ...(inputs.length ? { inputs } : {}) },
    requirements: { ...requirements, timeoutSec: runtime.durationSec ?? UNTIL_STOPPED_SEC, service: runtime },
    maxAttempts: SERVICE_MAX_ATTEMPTS,
  };
}
