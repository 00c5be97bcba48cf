import type { Resources } from '../resources.js';
import { applyTransition, commitTransition } from '../jobs/jobLifecycle.js';
import { everReady, markServicesStopped } from './services.js';

/**
 * A SERVICE task ended for good (advanceJob): it ran its duration (SUCCEEDED: the job
 * succeeds, if the service ever passed its readiness check) or failed beyond its retries (the
 * job fails with the reason). Either way the service stops routing (410). A job already moved
 * (stopService, cancel) is left alone. A service that never once answered its readiness check
 * never ends SUCCEEDED, whatever its task says (a worker that did not check).
 */
export async function afterService(
  r: Resources,
  task: { jobId: string; status: string; statusReason: string | null; job: { status: string } },
) {
  if (task.job.status !== 'RUNNING') return;
  const jobId = task.jobId;
  await commitTransition(r, jobId, async (tx, now) => {
    const neverReady = task.status !== 'FAILED' && !(await everReady(tx, jobId));
    await markServicesStopped(tx, jobId, now);
    if (task.status === 'FAILED')
      return applyTransition(tx, now, jobId, 'fail', { reason: `The service failed: ${task.statusReason ?? 'no reason recorded'}` });
    if (neverReady) return applyTransition(tx, now, jobId, 'fail', { reason: 'The service never answered its readiness check.' });
    const v = await applyTransition(tx, now, jobId, 'startValidation', { reason: 'The service reached the end of its duration.' });
    const done = await applyTransition(tx, now, jobId, 'succeed', { reason: 'The service ran for its whole duration.' });
    return { eventIds: [...v.eventIds, ...done.eventIds] };
  });
}
