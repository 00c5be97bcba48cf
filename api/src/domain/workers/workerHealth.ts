/**
 * The worker's own prerequisite check (worker/src/health.ts: sandbox binary, interpreter, disk
 * space for the run folder, its GPU devices), reported by the worker when it changes: a failing
 * check makes it UNHEALTHY with the reason — it claims nothing (db/sql/claimTasks.ts takes only
 * ONLINE and OFFLINE workers) and the Workers page says why — and a passing one ONLINE again.
 * The owner's states (PAUSED, DRAINING) and the scheduler's QUARANTINED are never overwritten:
 * each write is one conditional UPDATE (pauseWorker.ts's rule), and the worker reports again
 * whenever a heartbeat's status disagrees with its check (worker/src/session.ts).
 */
import type { Resources } from '../resources.js';
import { ValidationError } from '../errors.js';
import { requireOwnWorker } from './heartbeat.js';

export async function setWorkerHealth(r: Resources, workerTokenId: string, workerId: string, healthy: boolean, reason: string | null) {
  const w = await requireOwnWorker(r, workerTokenId, workerId);
  const why = reason?.trim().slice(0, 1000) ?? '';
  if (!healthy && !why)
    throw new ValidationError('An unhealthy worker says why (reason).', [{ path: ['reason'], message: 'required when healthy is false' }]);
  const n = healthy
    ? await r.prisma.worker.updateMany({ where: { id: w.id, status: 'UNHEALTHY' }, data: { status: 'ONLINE', statusReason: null } })
    : await r.prisma.worker.updateMany({
        where: { id: w.id, status: { in: ['ONLINE', 'OFFLINE', 'UNHEALTHY'] } },
        data: { status: 'UNHEALTHY', statusReason: why },
      });
  if (n.count) {
    await r.events.emit({ type: 'worker.changed', workerId: w.id, ownerId: w.ownerId });
    if (healthy) await r.events.emit({ type: 'tasks.available' });
  }
  return r.prisma.worker.findUniqueOrThrow({ where: { id: w.id } });
}
