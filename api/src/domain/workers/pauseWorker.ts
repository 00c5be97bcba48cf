import { NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import type { Resources } from '../resources.js';

/**
 * Worker status machine:
 *   (hello) → ONLINE ⇄ PAUSED (owner) ; ONLINE|PAUSED → OFFLINE (silent past
 *   WORKER_OFFLINE_SEC, set by the tick) ; OFFLINE → ONLINE (next hello/heartbeat) ;
 *   DRAINING: finishes its attempts, takes no new work.
 * A paused worker keeps running what it holds but gets no new work; its next heartbeat
 * answer carries the `pause` order.
 *
 * Every writer of Worker.status (pause, resume, heartbeat, hello, the tick) writes with one
 * conditional UPDATE whose new value never depends on a status read earlier: a pause
 * committed between another writer's read and its write is never overwritten.
 */
export async function setWorkerPaused(r: Resources, ownerId: string, workerId: string, paused: boolean) {
  const w = isUuid(workerId) ? await r.prisma.worker.findFirst({ where: { id: workerId, ownerId }, select: { id: true, ownerId: true } }) : null;
  if (!w) throw new NotFoundError('Worker', workerId);
  return applyPause(r, w, paused);
}

/**
 * Pause: PAUSED whatever the status was. Resume: ONLINE only from PAUSED (an OFFLINE or
 * DRAINING worker stays as it is). Tells the worker at once; shared by the owner's and the
 * machine's own pause.
 */
export async function applyPause(r: Resources, w: { id: string; ownerId: string }, paused: boolean) {
  if (paused) await r.prisma.worker.updateMany({ where: { id: w.id }, data: { status: 'PAUSED' } });
  else await r.prisma.worker.updateMany({ where: { id: w.id, status: 'PAUSED' }, data: { status: 'ONLINE' } });
  const updated = await r.prisma.worker.findUniqueOrThrow({ where: { id: w.id } });
  await r.events.emit({ type: 'worker.changed', workerId: w.id, ownerId: w.ownerId });
  await r.events.emit({ type: 'worker.orders', workerId: w.id });
  if (!paused) await r.events.emit({ type: 'tasks.available' });
  return updated;
}
