import { NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import type { Resources } from '../resources.js';

/**
 * Worker status machine:
 *   (hello) → ONLINE ⇄ PAUSED (owner) ; ONLINE|PAUSED → OFFLINE (silent past
 *   WORKER_OFFLINE_SEC, set by the tick) ; OFFLINE → ONLINE (next hello/heartbeat) ;
 *   ONLINE|PAUSED → DRAINING (owner: give the machine back) ; DRAINING → ONLINE (resume).
 * The machine's and the scheduler's states: UNHEALTHY (its prerequisite check fails,
 * workerHealth.ts) and QUARANTINED (the black-hole rule, blackHoles.ts); neither claims work.
 * A draining worker takes no new work and asks each running task to checkpoint (SIGTERM and
 * its drain file); it hands each attempt back as DRAINED with its checkpoint, so the task
 * resumes on another worker (domain/leases/checkpoints.ts, worker/src/checkpoint.ts). It kills
 * what is still running after its grace period, so the machine is free within that bound.
 * A paused worker keeps running what it holds but gets no new work; its next heartbeat
 * answer carries the `pause` order.
 *
 * Every writer of Worker.status (pause, resume, heartbeat, hello, the tick) writes with one
 * conditional UPDATE whose new value never depends on a status read earlier: a pause
 * committed between another writer's read and its write is never overwritten.
 */
export async function setWorkerPaused(r: Resources, ownerId: string, workerId: string, paused: boolean) {
  const w = isUuid(workerId)
    ? await r.prisma.worker.findFirst({ where: { id: workerId, ownerId }, select: { id: true, ownerId: true } })
    : null;
  if (!w) throw new NotFoundError('Worker', workerId);
  return applyPause(r, w, paused);
}

/** The owner drains a worker from the dashboard (Workers page, `drainWorker`). */
export async function setWorkerDraining(r: Resources, ownerId: string, workerId: string) {
  const w = isUuid(workerId)
    ? await r.prisma.worker.findFirst({ where: { id: workerId, ownerId }, select: { id: true, ownerId: true } })
    : null;
  if (!w) throw new NotFoundError('Worker', workerId);
  return applyPause(r, w, 'drain');
}

/**
 * Pause: PAUSED whatever the status was. Drain: DRAINING whatever it was. Resume: ONLINE only
 * from PAUSED or DRAINING (an OFFLINE worker stays as it is). Tells the worker at once; shared
 * by the owner's and the machine's own pause and drain.
 */
export async function applyPause(r: Resources, w: { id: string; ownerId: string }, paused: boolean | 'drain') {
  if (paused === 'drain') await r.prisma.worker.updateMany({ where: { id: w.id }, data: { status: 'DRAINING' } });
  else if (paused) await r.prisma.worker.updateMany({ where: { id: w.id }, data: { status: 'PAUSED' } });
  else await r.prisma.worker.updateMany({ where: { id: w.id, status: { in: ['PAUSED', 'DRAINING'] } }, data: { status: 'ONLINE' } });
  const updated = await r.prisma.worker.findUniqueOrThrow({ where: { id: w.id } });
  await r.events.emit({ type: 'worker.changed', workerId: w.id, ownerId: w.ownerId });
  await r.events.emit({ type: 'worker.orders', workerId: w.id });
  if (!paused) await r.events.emit({ type: 'tasks.available' });
  return updated;
}
