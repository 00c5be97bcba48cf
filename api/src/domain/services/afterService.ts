import type { Resources } from '../resources.js';
import { applyTransition, commitTransition } from '../jobs/jobLifecycle.js';
import { markServicesStopped } from './services.js';

/**
 * A SERVICE task ended for good (advanceJob): it ran its duration (SUCCEEDED: the job
 * succeeds) or failed beyond its retries (the job fails with the reason). Either way the
 * service stops routing (410). A job already moved (stopService, cancel) is left alone.
 */
export async function afterService(r: Resources, task: { jobId: string; status: string; statusReason: string | null; job: { status: string } }) {
  if (task.job.status !== 'RUNNING') return;
  const jobId = task.jobId;
  await commitTransition(r, jobId, async (tx, now) => {
    await markServicesStopped(tx, jobId, now);
    if (task.status === 'FAILED') return applyTransition(tx, now, jobId, 'fail', { reason: `The service failed: ${task.statusReason ?? 'no reason recorded'}` });
    const v = await applyTransition(tx, now, jobId, 'startValidation', { reason: 'The service reached the end of its duration.' });
    const done = await applyTransition(tx, now, jobId, 'succeed', { reason: 'The service ran for its whole duration.' });
    return { eventIds: [...v.eventIds, ...done.eventIds] };
  });
}
