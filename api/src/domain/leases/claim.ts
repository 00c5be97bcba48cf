import { isUuid } from '../ids.js';
import { claimTasks, type ClaimedRow } from '../../db/sql/claimTasks.js';
import { touchWorker as touchWorkerSql } from '../../db/sql/touchWorker.js';
import { emitAll, type DomainEvent, type EventBus } from '../events.js';
import { recordResumes } from './checkpoints.js';
import { dispatcherFor, type Dispatcher } from './dispatcher.js';
import type { Resources } from '../resources.js';
import { requireOwnWorker } from '../workers/heartbeat.js';
import { logAttempt } from '../../telemetry/sentry.js';

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
  // The API's own event bus (it can also be listened to): park with its dispatcher, one parked
  // claim woken per new task. Any other wait source (tests' recorders) waits per round below.
  if (isBus(wake)) return claimParked(r, dispatcherFor(wake), workerTokenId, workerId, opts);
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
      const rows = await look(r, workerTokenId, workerId, opts.max);
      if (rows.length > 0) return await assignments(r, workerId, rows);
      const left = deadline - Date.now();
      if (left <= 0 || opts.signal?.aborted || ordered) return [];
      await woken; // then claim once more: a resume both orders and makes work claimable
    } finally {
      stop.abort();
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }
}

const isBus = (w: WaitSource): w is WaitSource & Pick<EventBus, 'on'> => typeof (w as Partial<EventBus>).on === 'function';

/**
 * One look: the worker seen now (even while idle in a long-poll: OFFLINE comes back ONLINE) and,
 * beside it on another connection, up to its free slots claimed — the claim statement checks the
 * worker's token, status and free slots itself, so neither waits for the other. Returns the rows
 * claimed; a worker of another token is a NotFoundError (the touch finds no row, the claim none).
 */
async function look(r: Resources, workerTokenId: string, workerId: string, max: number): Promise<ClaimedRow[]> {
  if (!isUuid(workerId)) return requireOwnWorker(r, workerTokenId, workerId).then(() => []);
  const [touched, rows] = await Promise.all([
    touchWorkerSql(r.prisma, workerId, workerTokenId, r.now()),
    max > 0
      ? claimTasks(
          r.prisma,
          workerId,
          workerTokenId,
          max,
          r.now(),
          r.config.scheduler.leaseSec,
          r.config.rates,
          r.config.trust.minReputation,
        )
      : [],
  ]);
  if (!touched[0]) await requireOwnWorker(r, workerTokenId, workerId);
  return rows;
}

/**
 * The long-poll parked with the dispatcher (dispatcher.ts): registered before the first look
 * (no lost wake-up), woken by a token per new task, a broadcast, or orders for this worker.
 */
async function claimParked(
  r: Resources,
  d: Dispatcher,
  workerTokenId: string,
  workerId: string,
  opts: { waitMs: number; max: number; signal?: AbortSignal },
) {
  const deadline = Date.now() + Math.min(Math.max(opts.waitMs, 0), MAX_WAIT_MS);
  const parked = d.park(workerId);
  try {
    for (;;) {
      const seen = parked.beginLook();
      let rows: ClaimedRow[] = [];
      try {
        rows = await look(r, workerTokenId, workerId, opts.max);
      } finally {
        parked.endLook(seen, rows.length);
      }
      if (rows.length > 0) return await assignments(r, workerId, rows);
      // Orders (pause, cancel) end the long-poll empty, so the worker fetches them with a
      // heartbeat at once instead of at its next interval.
      if (deadline - Date.now() <= 0 || opts.signal?.aborted || parked.ordered) return [];
      await parked.wait(deadline - Date.now(), opts.signal);
    }
  } finally {
    d.unpark(parked);
  }
}

/**
 * The claimed attempts with their task specs (read by the claim statement itself: no second
 * round trip); the job events (written by the claim) announced in one NOTIFY, which the answer
 * does not wait for: the leases are committed, and a NOTIFY that fails must not turn them into an
 * error the worker drops (they would sit LEASED until they expired). Subscribers already take
 * events in any order (NOTIFY order is not id order).
 */
async function assignments(r: Resources, workerId: string, rows: ClaimedRow[]) {
  const jobs = [...new Set(rows.map((x) => x.jobId))];
  // An attempt handed its task's checkpoint: the `attempt.resumed` event (step, work lost). A failure
  // to write it is logged, never the lease's failure.
  const resumed = await recordResumes(
    r,
    rows.filter((x) => x.task.checkpoint),
  ).catch((err: unknown) => {
    r.log.warn('claim: recording a resume from a checkpoint failed (the attempt is leased and restores it all the same)', {
      error: String(err),
    });
    return [];
  });
  emitAll(r.events, [
    ...rows.map((x) => ({ type: 'job.event', jobId: x.jobId, eventId: x.eventId }) as const),
    ...resumed,
    ...jobs.map((jobId) => ({ type: 'job.updated', jobId }) as const),
  ]).catch((err: unknown) =>
    r.log.warn('claim: announcing the leases failed (they are leased and stored; live dashboards miss these events until reloaded)', {
      error: String(err),
    }),
  );
  return rows.map((x) => {
    logAttempt('claim', `attempt ${x.number} of ${x.task.name} leased`, {
      job: x.jobId,
      task: x.taskId,
      worker: workerId,
      attempt: x.attemptId,
    });
    return {
      id: x.attemptId,
      taskId: x.taskId,
      number: x.number,
      fencingToken: x.fencingToken,
      leaseExpiresAt: x.leaseExpiresAt,
      task: x.task,
    };
  });
}
