import { NotFoundError } from '../errors.js';
import type { Resources } from '../resources.js';

/**
 * Worker status machine:
 *   (hello) → ONLINE ⇄ PAUSED (owner) ; ONLINE|PAUSED → OFFLINE (silent past
 *   WORKER_OFFLINE_SEC, set by the tick) ; OFFLINE → ONLINE|PAUSED (next hello/heartbeat
 *   restores what the owner chose) ; DRAINING: finishes its attempts, takes no new work.
 * A paused worker keeps running what it holds but gets no new work; its next heartbeat
 * answer carries the `pause` order.
 */
export async function setWorkerPaused(r: Resources, ownerId: string, workerId: string, paused: boolean) {
  const w = await r.prisma.worker.findFirst({ where: { id: workerId, ownerId } });
  if (!w) throw new NotFoundError('Worker', workerId);
  const status = paused ? 'PAUSED' : w.status === 'PAUSED' ? 'ONLINE' : w.status;
  const updated = await r.prisma.worker.update({ where: { id: w.id }, data: { status } });
  await r.events.emit({ type: 'worker.changed', workerId: w.id, ownerId });
  await r.events.emit({ type: 'worker.orders', workerId: w.id });
  if (!paused) await r.events.emit({ type: 'tasks.available' });
  return updated;
}
