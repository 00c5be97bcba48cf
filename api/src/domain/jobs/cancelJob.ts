import { ConflictError, NotFoundError } from '../errors.js';
import type { Resources } from '../resources.js';
import { recordJobEvent } from './jobEvents.js';
import { TERMINAL_JOB_STATUSES } from './jobStatus.js';

/**
 * Cancels a job: the job becomes CANCELLED, its unfinished tasks CANCELLED, open
 * questions CANCELLED. Live attempts are told to stop through their worker's next
 * heartbeat (orders), and their late results are refused as stale.
 */
export async function cancelJob(r: Resources, userId: string, jobId: string) {
  const now = r.now();
  const result = await r.prisma.$transaction(async (tx) => {
    const job = await tx.job.findFirst({ where: { id: jobId, ownerId: userId } });
    if (!job) throw new NotFoundError('Job', jobId);
    const updated = await tx.job.updateMany({
      where: { id: jobId, status: { notIn: [...TERMINAL_JOB_STATUSES] } },
      data: { status: 'CANCELLED', statusReason: 'Cancelled by its owner.', finishedAt: now },
    });
    if (updated.count === 0) throw new ConflictError(`The job is already ${job.status.toLowerCase()}.`);
    const tasks = await tx.task.findMany({
      where: { jobId, status: { in: ['QUEUED', 'LEASED', 'RUNNING'] } },
      select: { id: true, currentAttempt: { select: { workerId: true } } },
    });
    await tx.task.updateMany({
      where: { jobId, status: { in: ['QUEUED', 'LEASED', 'RUNNING'] } },
      data: { status: 'CANCELLED', statusReason: 'The job was cancelled.', finishedAt: now },
    });
    await tx.question.updateMany({ where: { jobId, status: 'OPEN' }, data: { status: 'CANCELLED' } });
    const eventId = await recordJobEvent(tx, jobId, 'job.status', { status: 'CANCELLED', reason: 'Cancelled by its owner.' });
    const workers = [...new Set(tasks.map((t) => t.currentAttempt?.workerId).filter((w): w is string => !!w))];
    return { eventId, workers };
  });
  await r.events.emit({ type: 'job.event', jobId, eventId: result.eventId });
  await r.events.emit({ type: 'job.updated', jobId });
  for (const workerId of result.workers) await r.events.emit({ type: 'worker.orders', workerId });
  return r.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
}
