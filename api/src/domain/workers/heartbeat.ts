import { renewLeases } from '../../db/sql/renewLeases.js';
import { isUuid } from '../ids.js';
import { applyPause } from './pauseWorker.js';
import { NotFoundError } from '../errors.js';
import type { Resources } from '../resources.js';

export type Order = { kind: 'CANCEL'; attemptId: string; reason: string } | { kind: 'PAUSE' } | { kind: 'RESUME' };


export async function requireOwnWorker(r: Resources, workerTokenId: string, workerId: string) {
  const w = isUuid(workerId) ? await r.prisma.worker.findUnique({ where: { id: workerId } }) : null;
  if (!w || w.tokenId !== workerTokenId) throw new NotFoundError('Worker', workerId.slice(0, 80));
  return w;
}

/**
 * Renews every lease the worker names in one statement and answers with orders:
 * CANCEL for each attempt that is no longer current (stale, cancelled, handed on) —
 * the worker must kill that run — and PAUSE/RESUME from its owner. Never waits on
 * anything slow (invariant 3): one UPDATE, one SELECT.
 */
export async function heartbeat(
  r: Resources,
  workerTokenId: string,
  workerId: string,
  leases: { attemptId: string; fencingToken: string }[],
) {
  const worker = await requireOwnWorker(r, workerTokenId, workerId);
  const now = r.now();
  const valid = leases.filter((l) => isUuid(l.attemptId));
  const renewed = new Set(await renewLeases(r.prisma, worker.id, valid, now, r.config.scheduler.leaseSec));
  const orders: Order[] = [];
  const rejected = leases.filter((l) => !renewed.has(l.attemptId));
  if (rejected.length > 0) {
    const known = await r.prisma.attempt.findMany({
      where: { id: { in: rejected.filter((l) => isUuid(l.attemptId)).map((l) => l.attemptId) }, workerId: worker.id },
      select: { id: true, status: true },
    });
    const status = new Map(known.map((k) => [k.id, k.status]));
    for (const l of rejected) {
      const s = status.get(l.attemptId);
      orders.push({ kind: 'CANCEL', attemptId: l.attemptId, reason: s ? `attempt is ${s.toLowerCase()}` : 'unknown attempt' });
      if (s) await r.prisma.staleReport.create({ data: { attemptId: l.attemptId, kind: 'heartbeat', detail: { status: s } } });
      if (s === 'LOST') await r.prisma.attempt.updateMany({ where: { id: l.attemptId, status: 'LOST' }, data: { status: 'STALE' } });
    }
  }
  // Attempts of cancelled tasks: the worker still holds them; tell it to stop.
  const cancelled = await r.prisma.attempt.findMany({
    where: { workerId: worker.id, status: { in: ['LEASED', 'RUNNING'] }, task: { status: 'CANCELLED' } },
    select: { id: true },
  });
  if (cancelled.length) {
    await r.prisma.attempt.updateMany({ where: { id: { in: cancelled.map((c) => c.id) } }, data: { status: 'CANCELLED', finishedAt: now, errorClass: 'CANCELLED' } });
    for (const c of cancelled) if (!orders.some((o) => o.kind === 'CANCEL' && o.attemptId === c.id)) orders.push({ kind: 'CANCEL', attemptId: c.id, reason: 'the job was cancelled' });
  }
  const status = worker.status === 'OFFLINE' ? 'ONLINE' : worker.status;
  await r.prisma.worker.update({ where: { id: worker.id }, data: { lastSeenAt: now, status } });
  if (worker.status === 'OFFLINE') await r.events.emit({ type: 'worker.changed', workerId: worker.id, ownerId: worker.ownerId });
  orders.push(status === 'PAUSED' || status === 'DRAINING' ? { kind: 'PAUSE' } : { kind: 'RESUME' });
  return { orders, renewed: [...renewed], status, leaseExpiresAt: new Date(now.getTime() + r.config.scheduler.leaseSec * 1000) };
}

/** The worker's own owner pausing it from the machine (`chatgpu-worker pause`). */
export async function setOwnPaused(r: Resources, workerTokenId: string, workerId: string, paused: boolean) {
  return applyPause(r, await requireOwnWorker(r, workerTokenId, workerId), paused);
}
