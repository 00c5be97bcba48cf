import { renewLeases } from '../../db/sql/renewLeases.js';
import { isUuid } from '../ids.js';
import { cancelAttemptsOfCancelledTasks } from '../leases/cancelAttempts.js';
import { applyPause } from './pauseWorker.js';
import { NotFoundError } from '../errors.js';
import type { Resources } from '../resources.js';
import { markSeen } from './seen.js';
import { recordStale } from '../leases/currentAttempt.js';
import type { WorkerStatus } from '../../generated/prisma/enums.js';

export type Order = { kind: 'CANCEL'; attemptId: string; reason: string } | { kind: 'PAUSE' } | { kind: 'DRAIN' } | { kind: 'RESUME' };

export async function requireOwnWorker(r: Resources, workerTokenId: string, workerId: string) {
  const w = isUuid(workerId) ? await r.prisma.worker.findUnique({ where: { id: workerId } }) : null;
  if (!w || w.tokenId !== workerTokenId) throw new NotFoundError('Worker', workerId.slice(0, 80));
  return w;
}

/**
 * Renews every lease the worker names in one statement and answers with orders:
 * CANCEL for each attempt that is no longer current (stale, cancelled, handed on) —
 * the worker must kill that run — and its owner's orders. Never waits on anything slow
 * (invariant 3). An idle worker's heartbeat (no leases) is one statement, shared with the
 * other heartbeats in flight (seen.ts: one UPDATE … FROM unnest per flush); leases add one
 * renewal statement; nothing else runs unless a lease was refused or a task cancelled.
 */
export async function heartbeat(
  r: Resources,
  workerTokenId: string,
  workerId: string,
  leases: { attemptId: string; fencingToken: string }[],
) {
  const now = r.now();
  // Seen now (OFFLINE comes back ONLINE), which also proves it is this token's worker. The
  // status is never written from a value read earlier, so a pause committed meanwhile stays.
  const seen = isUuid(workerId) ? await markSeen(r, workerId, workerTokenId) : null;
  if (!seen) throw new NotFoundError('Worker', workerId.slice(0, 80));
  const worker = { id: seen.id, ownerId: seen.ownerId };
  const valid = leases.filter((l) => isUuid(l.attemptId));
  const renewed = new Set(await renewLeases(r.prisma, worker.id, valid, now, r.config.scheduler.leaseSec));
  const orders: Order[] = [];
  const rejected = leases.filter((l) => !renewed.has(l.attemptId));
  if (rejected.length > 0) {
    const known = await r.prisma.attempt.findMany({
      where: { id: { in: rejected.filter((l) => isUuid(l.attemptId)).map((l) => l.attemptId) }, workerId: worker.id },
      select: { id: true, status: true, leaseExpiresAt: true },
    });
    const byId = new Map(known.map((k) => [k.id, k]));
    for (const l of rejected) {
      const k = byId.get(l.attemptId);
      // Still LEASED/RUNNING but not renewed: its lease ran out before this heartbeat (the
      // tick has not marked it LOST yet) — expired all the same.
      const expired = !!k && (k.status === 'LEASED' || k.status === 'RUNNING') && k.leaseExpiresAt < now;
      orders.push({
        kind: 'CANCEL',
        attemptId: l.attemptId,
        reason: !k ? 'unknown attempt' : expired ? 'its lease expired' : `attempt is ${k.status.toLowerCase()}`,
      });
      if (k)
        await r.prisma.$transaction((tx) =>
          recordStale(tx, l.attemptId, 'heartbeat', { status: k.status, ...(expired ? { reason: 'lease expired' } : {}) }),
        );
    }
  }
  // Attempts of cancelled tasks: the worker still holds them; tell it to stop.
  const cancelled = seen.cancelledLive ? await cancelAttemptsOfCancelledTasks(r, now, worker.id) : [];
  for (const id of cancelled)
    if (!orders.some((o) => o.kind === 'CANCEL' && o.attemptId === id))
      orders.push({ kind: 'CANCEL', attemptId: id, reason: 'the job was cancelled' });
  const status = seen.status as WorkerStatus;
  if (status !== seen.previous) await r.events.emit({ type: 'worker.changed', workerId: worker.id, ownerId: worker.ownerId });
  orders.push(status === 'PAUSED' ? { kind: 'PAUSE' } : status === 'DRAINING' ? { kind: 'DRAIN' } : { kind: 'RESUME' });
  return { orders, renewed: [...renewed], status, leaseExpiresAt: new Date(now.getTime() + r.config.scheduler.leaseSec * 1000) };
}

/** The worker's own owner pausing or draining it from the machine (`chatgpu-worker pause|drain`). */
export async function setOwnPaused(r: Resources, workerTokenId: string, workerId: string, paused: boolean | 'drain') {
  return applyPause(r, await requireOwnWorker(r, workerTokenId, workerId), paused);
}
