import type { Db } from '../../db/client.js';
import { cancelLiveAttemptsOfJob } from '../leases/cancelAttempts.js';
import type { Resources } from '../resources.js';
import { moveTasks } from '../leases/taskLifecycle.js';

/**
 * Ends a job's unfinished work inside the caller's transaction (a cancel, a stop at the
 * cap, a failure): live attempts CANCELLED with their final usage entry, queued and live
 * tasks CANCELLED, open questions CANCELLED. Returns the workers holding those attempts,
 * whose orders must be re-sent after commit so they stop the runs now rather than at their
 * next heartbeat.
 */
export async function cancelOutstandingWork(
  tx: Db,
  r: Pick<Resources, 'config'>,
  now: Date,
  jobId: string,
  reason: string,
): Promise<string[]> {
  const live = await cancelLiveAttemptsOfJob(tx, r, now, jobId);
  await moveTasks(tx, { jobId }, ['QUEUED', 'LEASED', 'RUNNING'], 'CANCELLED', { statusReason: reason, finishedAt: now });
  await tx.question.updateMany({ where: { jobId, status: 'OPEN' }, data: { status: 'CANCELLED' } });
  return [...new Set(live.map((a) => a.workerId))];
}
