import { NotFoundError } from '../errors.js';
import type { Resources } from '../resources.js';
import { applyTransition, commitTransition } from './jobLifecycle.js';
import { cancelOutstandingWork } from './outstandingWork.js';

/**
 * Cancels a job (the `cancel` transition): the job becomes CANCELLED, its unfinished
 * tasks CANCELLED, open questions CANCELLED. Live attempts are told to stop through
 * their worker's orders, and their late results are refused as stale. A job that is
 * already final gets an InvalidTransitionError (code INVALID_TRANSITION).
 */
export async function cancelJob(r: Resources, userId: string, jobId: string) {
  const owned = await r.prisma.job.findFirst({ where: { id: jobId, ownerId: userId }, select: { id: true } });
  if (!owned) throw new NotFoundError('Job', jobId);
  const reason = 'Cancelled by its owner.';
  const { workers } = await commitTransition(r, jobId, async (tx, now) => {
    const t = await applyTransition(tx, now, jobId, 'cancel', { reason });
    const workers = await cancelOutstandingWork(tx, r, now, jobId, 'The job was cancelled.');
    return { eventIds: t.eventIds, workers };
  });
  for (const workerId of workers) await r.events.emit({ type: 'worker.orders', workerId });
  return r.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
}
