/**
 * Black holes: a worker whose machine broke under it (a package removed, a full disk, a crashed
 * driver) fails every task it is offered, at once, and would swallow the queue. The worker checks
 * its own prerequisites and stops claiming (UNHEALTHY, worker/src/health.ts); this rule is the
 * scheduler's own defence for what that check does not see. A worker whose attempts failed,
 * within `windowMin` (out of memory and past the time limit aside: db/sql/blackHoleWorkers.ts), on
 * tasks of at least `minJobs` jobs that then succeeded on other workers is
 * QUARANTINED for `quarantineMin` (the cool-down): it claims nothing, and its owner sees why on
 * the Workers page (statusReason). Several jobs, not several tasks: one job's bad code fails on
 * every worker and succeeds on none, and one job's flaky tasks are not evidence against a machine.
 * After the cool-down it is ONLINE again (an UNHEALTHY worker says so again at its next
 * heartbeat), and only failures after that count.
 *
 * Worker status, with the owner's states in pauseWorker.ts:
 *   ONLINE|OFFLINE → UNHEALTHY (the worker: a prerequisite failed) → ONLINE (it passes again)
 *   ONLINE|OFFLINE|UNHEALTHY → QUARANTINED (this rule) → ONLINE (the tick, after the cool-down)
 */
import type { Db } from '../../db/client.js';
import { blackHoleWorkers } from '../../db/sql/blackHoleWorkers.js';

export interface Quarantined {
  workerId: string;
  ownerId: string;
  name: string;
  reason: string;
}

export async function quarantineBlackHoles(
  tx: Db,
  now: Date,
  cfg: { blackHoleJobs: number; blackHoleWindowMin: number; quarantineMin: number },
): Promise<Quarantined[]> {
  const until = new Date(now.getTime() + cfg.quarantineMin * 60_000);
  const out: Quarantined[] = [];
  for (const b of await blackHoleWorkers(tx, new Date(now.getTime() - cfg.blackHoleWindowMin * 60_000), cfg.blackHoleJobs)) {
    const last = b.lastErrorClass ? ` (last: ${b.lastErrorClass}${b.lastErrorMessage ? `: ${b.lastErrorMessage.slice(0, 200)}` : ''})` : '';
    const reason =
      `Quarantined until ${until.toISOString()}: ${b.failures} of its attempts failed on tasks of ${b.jobs} jobs within ${cfg.blackHoleWindowMin} min ` +
      `that then succeeded on other workers${last}. Check this machine (sandbox, Python, disk, GPU driver); it takes work again after the cool-down.`;
    // Conditional on the status, never written from a value read earlier (pauseWorker.ts).
    const n = await tx.worker.updateMany({
      where: { id: b.workerId, status: { in: ['ONLINE', 'OFFLINE', 'UNHEALTHY'] } },
      data: { status: 'QUARANTINED', statusReason: reason, quarantinedUntil: until },
    });
    if (n.count) out.push({ workerId: b.workerId, ownerId: b.ownerId, name: b.name, reason });
  }
  return out;
}

/** Quarantines whose cool-down is over: the workers are ONLINE again (and may claim). */
export async function releaseQuarantines(tx: Db, now: Date): Promise<{ workerId: string; ownerId: string }[]> {
  const due = await tx.worker.findMany({
    where: { status: 'QUARANTINED', quarantinedUntil: { lte: now } },
    select: { id: true, ownerId: true },
  });
  if (!due.length) return [];
  await tx.worker.updateMany({
    where: { id: { in: due.map((w) => w.id) }, status: 'QUARANTINED', quarantinedUntil: { lte: now } },
    data: { status: 'ONLINE', statusReason: null },
  });
  return due.map((w) => ({ workerId: w.id, ownerId: w.ownerId }));
}
