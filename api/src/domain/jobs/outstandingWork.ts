import type { Db } from '../../db/client.js';

/**
 * Ends a job's unfinished work inside the caller's transaction (a cancel, a stop at the
 * cap, a failure): queued and live tasks CANCELLED, open questions CANCELLED. Returns the
 * workers holding live attempts, whose orders must be re-sent after commit so they stop
 * the runs now rather than at their next heartbeat.
 */
export async function cancelOutstandingWork(tx: Db, now: Date, jobId: string, reason: string): Promise<string[]> {
  const live = await tx.task.findMany({
    where: { jobId, status: { in: ['QUEUED', 'LEASED', 'RUNNING'] } },
    select: { currentAttempt: { select: { workerId: true } } },
  });
  await tx.task.updateMany({
    where: { jobId, status: { in: ['QUEUED', 'LEASED', 'RUNNING'] } },
    data: { status: 'CANCELLED', statusReason: reason, finishedAt: now },
  });
  await tx.question.updateMany({ where: { jobId, status: 'OPEN' }, data: { status: 'CANCELLED' } });
  return [...new Set(live.map((t) => t.currentAttempt?.workerId).filter((w): w is string => !!w))];
}
