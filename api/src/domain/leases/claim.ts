import { isUuid } from '../ids.js';
import { claimTasks } from '../../db/sql/claimTasks.js';
import { touchWorker as touchWorkerSql } from '../../db/sql/touchWorker.js';
import type { DomainEvent } from '../events.js';
import { recordJobEvent } from '../jobs/jobEvents.js';
import type { Resources } from '../resources.js';
import { requireOwnWorker } from '../workers/heartbeat.js';

export const MAX_WAIT_MS = 30_000;

export interface WaitSource {
  waitFor(filter: (e: DomainEvent) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
}

/**
 * Long-poll claim: returns as soon as up to `max` tasks (bounded by the worker's free
 * slots) could be claimed, or [] after `waitMs`. Between tries it sleeps on the
 * `tasks.available` event (LISTEN/NOTIFY), so an idle worker costs one query per wake,
 * and dispatch latency is a NOTIFY round trip rather than a poll interval. No
 * transaction is open while waiting.
 */
export async function claim(
  r: Resources,
  wake: WaitSource,
  workerTokenId: string,
  workerId: string,
  opts: { waitMs: number; max: number; signal?: AbortSignal },
) {
  const deadline = Date.now() + Math.min(Math.max(opts.waitMs, 0), MAX_WAIT_MS);
  // Orders for this worker (pause, cancel) end the long-poll empty, so the worker fetches
  // them with a heartbeat at once instead of at its next interval.
  let ordered = false;
  const wakes = (e: DomainEvent) => {
    if (e.type === 'worker.orders' && e.workerId === workerId) return (ordered = true);
    return e.type === 'tasks.available';
  };
  for (;;) {
    // Listen BEFORE looking (fix: the listener used to be registered only after an empty
    // claim query, so a task committed — and NOTIFYed — between that query and the wait
    // was missed and the worker slept until waitMs: a lost wake-up). `stop` removes the
    // listener when this round ends either way.
    const left0 = deadline - Date.now();
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    opts.signal?.addEventListener('abort', onAbort);
    const woken = left0 > 0 && !opts.signal?.aborted ? wake.waitFor(wakes, left0, stop.signal) : Promise.resolve(false);
    try {
      // One statement per wake: the worker is seen now (even while idle in a long-poll) and
      // we learn its status, slots and live attempts (a wake goes to every parked worker,
      // so this is on the hot path of dispatch latency — bench/dispatchLatency.ts).
      const worker = await touchWorker(r, workerTokenId, workerId);
      const free = Math.min(Math.max(worker.slots - worker.live, 0), Math.max(opts.max, 0));
      if (free > 0 && (worker.status === 'ONLINE' || worker.status === 'OFFLINE')) {
        const rows = await claimTasks(r.prisma, workerId, free, r.now(), r.config.scheduler.leaseSec, r.config.rates);
        if (rows.length > 0) return assignments(r, rows.map((x) => x.attemptId));
      }
      const left = deadline - Date.now();
      if (left <= 0 || opts.signal?.aborted || ordered) return [];
      await woken; // then claim once more: a resume both orders and makes work claimable
    } finally {
      stop.abort();
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }
}

async function touchWorker(r: Resources, workerTokenId: string, workerId: string) {
  const rows = isUuid(workerId)
    ? await touchWorkerSql(r.prisma, workerId, workerTokenId, r.now())
    : [];
  if (!rows[0]) return requireOwnWorker(r, workerTokenId, workerId).then(() => ({ status: 'OFFLINE', slots: 0, live: 0 }));
  return rows[0];
}

async function assignments(r: Resources, attemptIds: string[]) {
  const attempts = await r.prisma.attempt.findMany({
    where: { id: { in: attemptIds } },
    include: { task: { include: { codeVersion: true } }, worker: { select: { name: true } } },
    orderBy: { createdAt: 'asc' },
  });
  for (const a of attempts) {
    const eventId = await recordJobEvent(r.prisma, a.task.jobId, 'attempt.status', {
      taskId: a.taskId,
      attemptId: a.id,
      number: a.number,
      status: 'LEASED',
      worker: a.worker.name,
    });
    await r.events.emit({ type: 'job.event', jobId: a.task.jobId, eventId });
    await r.events.emit({ type: 'job.updated', jobId: a.task.jobId });
  }
  return attempts;
}
