/**
 * Flapping workers: a worker that keeps losing its leases (it vanishes and comes back, its
 * network drops, its owner's laptop sleeps) drops other people's work again and again. The
 * per-task rule (lost twice on one worker → reassign, agents/supervisor/builtinSupervisor.ts)
 * sees it only after each task has been lost there twice; this sees it across tasks and jobs.
 *
 * A worker is flapping when the attempts it lost (LOST or STALE: its lease ran out) within
 * `windowMin` reach `threshold`. Reported once per crossing — by the tick that took the count
 * from below the threshold to it — with the active jobs whose work it lost in the window.
 */
import type { Db } from '../../db/client.js';
import { ACTIVE_JOB_STATUSES } from '../jobs/jobStatus.js';

export interface Flapping {
  workerId: string;
  /** Lost attempts in the window, counting this tick's. */
  lost: number;
  /** Active jobs with an attempt lost on it in the window. */
  jobIds: string[];
}

export async function flappingWorkers(
  tx: Db,
  now: Date,
  lostNow: { workerId: string }[],
  threshold: number,
  windowMin: number,
): Promise<Flapping[]> {
  const perWorker = new Map<string, number>();
  for (const e of lostNow) perWorker.set(e.workerId, (perWorker.get(e.workerId) ?? 0) + 1);
  const since = new Date(now.getTime() - windowMin * 60_000);
  const out: Flapping[] = [];
  for (const [workerId, thisTick] of perWorker) {
    const lost = await tx.attempt.findMany({
      where: { workerId, status: { in: ['LOST', 'STALE'] }, finishedAt: { gte: since } },
      select: { task: { select: { jobId: true, job: { select: { status: true } } } } },
    });
    if (lost.length < threshold || lost.length - thisTick >= threshold) continue;
    const jobIds = [
      ...new Set(lost.filter((a) => (ACTIVE_JOB_STATUSES as readonly string[]).includes(a.task.job.status)).map((a) => a.task.jobId)),
    ];
    out.push({ workerId, lost: lost.length, jobIds });
  }
  return out;
}
