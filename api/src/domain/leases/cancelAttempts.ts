/**
 * Ending live attempts because their task was cancelled (the job was cancelled, stopped at
 * its cap, or failed). LEASED|RUNNING → CANCELLED, each by a conditional update (an attempt
 * that completed or was lost meanwhile is left as it is), with its final usage entry in the
 * same transaction: a cancelled attempt is billed up to the moment it was cancelled, never
 * beyond and never twice (accrueUsage continues from the last entry).
 */
import type { Db } from '../../db/client.js';
import { accrueUsage } from '../billing/usage.js';
import type { Resources } from '../resources.js';
import { moveAttempts } from './taskLifecycle.js';

const LIVE = ['LEASED', 'RUNNING'] as const;

/** Cancels these attempts (those still live) inside the caller's transaction; returns the ids it cancelled. */
export async function cancelLiveAttempts(tx: Db, r: Pick<Resources, 'config'>, now: Date, attemptIds: string[]): Promise<string[]> {
  const done: string[] = [];
  for (const id of attemptIds) {
    const moved = await moveAttempts(tx, { id }, LIVE, 'CANCELLED', {
      finishedAt: now,
      errorClass: 'CANCELLED',
      errorMessage: 'The task was cancelled.',
    });
    if (moved === 0) continue;
    await accrueUsage(tx, r, id, now, { final: true });
    done.push(id);
  }
  return done;
}

/** The live attempts of a job's unfinished tasks, cancelled (attempt rows are locked before task rows, like completions and renewals). */
export async function cancelLiveAttemptsOfJob(tx: Db, r: Pick<Resources, 'config'>, now: Date, jobId: string) {
  const live = await tx.attempt.findMany({
    where: { status: { in: [...LIVE] }, task: { jobId, status: { in: ['QUEUED', 'LEASED', 'RUNNING'] } } },
    select: { id: true, workerId: true },
  });
  await cancelLiveAttempts(
    tx,
    r,
    now,
    live.map((a) => a.id),
  );
  return live;
}

/**
 * A worker's attempts still live while their task is CANCELLED (a task cancelled by a path
 * that did not end its attempts): cancelled now, with their final usage. Returns every such
 * attempt id, so the worker is told to stop each one.
 */
export async function cancelAttemptsOfCancelledTasks(
  r: Pick<Resources, 'prisma' | 'config'>,
  now: Date,
  workerId: string,
): Promise<string[]> {
  const found = await r.prisma.attempt.findMany({
    where: { workerId, status: { in: [...LIVE] }, task: { status: 'CANCELLED' } },
    select: { id: true },
  });
  if (found.length === 0) return [];
  const ids = found.map((a) => a.id);
  await r.prisma.$transaction((tx) => cancelLiveAttempts(tx, r, now, ids));
  return ids;
}
