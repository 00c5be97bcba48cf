import type { WorkerStatus } from '../../generated/prisma/enums.js';
import { NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
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
  const w = isUuid(workerId) ? await r.prisma.worker.findFirst({ where: { id: workerId, ownerId } }) : null;
  if (!w) throw new NotFoundError('Worker', workerId);
  return applyPause(r, w, paused);
}

/** Sets PAUSED (or back to ONLINE) and tells the worker at once; shared by the owner's and the machine's own pause. */
export async function applyPause(r: Resources, w: { id: string; ownerId: string; status: WorkerStatus }, paused: boolean) {
  const status: WorkerStatus = paused ? 'PAUSED' : w.status === 'PAUSED' ? 'ONLINE' : w.status;
  const updated = await r.prisma.worker.update({ where: { id: w.id }, data: { status } });
  await r.events.emit({ type: 'worker.changed', workerId: w.id, ownerId: w.ownerId });
  await r.events.emit({ type: 'worker.orders', workerId: w.id });
  if (!paused) await r.events.emit({ type: 'tasks.available' });
  return updated;
}
