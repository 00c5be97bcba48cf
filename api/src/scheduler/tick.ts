/**
 * The scheduler tick (invariants 2 and 3). Run every few seconds by node-cron on every
 * API process; exactly one process does the work per tick because the work happens
 * inside a transaction holding a PostgreSQL advisory lock (pg_try_advisory_xact_lock —
 * the others skip). Every step is idempotent: running a tick twice at the same `now`
 * changes nothing the second time. `now` is an argument so tests drive ticks directly.
 *
 *   1. expire leases not renewed in time → attempt LOST → task retried with exponential
 *      backoff within maxAttempts (a pinned task waits for its worker again), or FAILED
 *      with the reason
 *   1b. a worker whose lost attempts within FLAP_WINDOW_MIN just reached FLAP_LOST is
 *      flapping: a job event on each affected job, `worker.flapping` for the supervisors
 *   1c. black holes (domain/workers/blackHoles.ts): a worker whose failed attempts, within
 *      BLACK_HOLE_WINDOW_MIN, are on tasks of BLACK_HOLE_JOBS jobs that then succeeded on other
 *      workers is QUARANTINED for QUARANTINE_MIN, with the reason; a quarantine whose cool-down
 *      is over ends (ONLINE); run after the locked transaction by the process that ran it (its
 *      writes are conditional, so an overlap with the next tick changes nothing)
 *   2. mark workers silent for WORKER_OFFLINE_SEC OFFLINE
 *   3. accrue usage of running attempts; stop jobs whose cost reached their cap (the job
 *      engine's stopAtCap, with their outstanding work cancelled; `job.capped` for the
 *      supervisor)
 *   4. say why queued tasks wait (no online worker can run them); a job planned while no worker
 *      was online whose queued work none of the workers now online can run is planned again;
 *      trust checks no online worker can take (TRUST_REPLICA_WAIT_SEC) and data-download steps
 *      that only workers refusing the network could run (DOWNLOAD_WAIT_SEC) are failed with the reason
 *   5. wake long-pollers when retried work became due, and announce `reconcile` so the
 *      agents pick up what a crashed process left behind (the tick never calls agent code)
 * and records when it ran (SchedulerState). `resumeAfterOutage` runs once when an API
 * process starts, before it listens: when no tick ran anywhere for longer than an outage
 * gap, leases that ran out meanwhile — no process was there to renew them — get a fresh
 * lease instead of being thrown away by the first tick (their workers reconnect with
 * backoff, up to 10 s apart). Ticks that merely stall while APIs serve are not an outage:
 * renewals and completions still refuse an expired lease by themselves.
 */
import { expireLeases } from '../db/sql/expireLeases.js';
import { replanForNewWorkers } from '../domain/jobs/replanForNewWorkers.js';
import { stalledAttempts } from '../db/sql/stalledAttempts.js';
import { logAttempt } from '../telemetry/sentry.js';
import { recordTick, resumeLeasesAfterOutage } from '../db/sql/schedulerState.js';
import { accrueUsage, writeOffAttemptUsage } from '../domain/billing/usage.js';
import type { DomainEvent } from '../domain/events.js';
import { fmt } from '../domain/jobs/estimateText.js';
import { recordJobEvent } from '../domain/jobs/jobEvents.js';
import { applyTransition } from '../domain/jobs/jobLifecycle.js';
import { ACTIVE_JOB_STATUSES } from '../domain/jobs/jobStatus.js';
import { cancelOutstandingWork } from '../domain/jobs/outstandingWork.js';
import { countedAttempts, retryOrFail } from '../domain/leases/retryOrFail.js';
import type { Resources } from '../domain/resources.js';
import { giveUpUnplaceableChecks } from '../domain/trust/replication.js';
import { quarantineBlackHoles, releaseQuarantines } from '../domain/workers/blackHoles.js';
import { failRefusedDownloads } from '../domain/workers/downloadWait.js';
import { flappingWorkers } from '../domain/workers/flapping.js';
import { explainWait } from './explainWait.js';
import { moveTasks } from '../domain/leases/taskLifecycle.js';
import { tryTickLock } from '../db/sql/tickLock.js';
import { lockRunningAttempts } from '../db/sql/lockRunningAttempts.js';

export const TICK_LOCK = 0x7469636b; // "tick"

export interface TickReport {
  ran: boolean;
  lost: number;
  retried: number;
  failed: number;
  offline: number;
  stopped: number;
  stalled: number;
  flapping: number;
  quarantined: number;
  released: number;
}

export async function runTick(r: Resources, now: Date): Promise<TickReport> {
  const report: TickReport = {
    ran: false,
    lost: 0,
    retried: 0,
    failed: 0,
    offline: 0,
    stopped: 0,
    stalled: 0,
    flapping: 0,
    quarantined: 0,
    released: 0,
  };
  const emits: DomainEvent[] = [];
  const { scheduler } = r.config;
  await r.prisma.$transaction(
    async (tx) => {
      if (!(await tryTickLock(tx, TICK_LOCK))) return;
      report.ran = true;

      // 1. Expired leases.
      const expired = await expireLeases(tx, now);
      report.lost = expired.length;
      // Lost through no fault of the user: the usage these attempts accrued moves out of their
      // jobs' cost into the lost cost, in this transaction (their final entry below is lost too).
      await writeOffAttemptUsage(
        tx,
        expired.map((e) => e.attemptId),
      );
      for (const e of expired) {
        const task = await tx.task.findUnique({ where: { id: e.taskId }, include: { pinnedWorker: { select: { name: true } } } });
        const worker = await tx.worker.findUnique({ where: { id: e.workerId }, select: { name: true } });
        if (!task) continue;
        emits.push({
          type: 'job.event',
          jobId: e.jobId,
          eventId: await recordJobEvent(tx, e.jobId, 'attempt.status', {
            taskId: e.taskId,
            attemptId: e.attemptId,
            status: e.status,
            worker: worker?.name,
          }),
        });
        logAttempt(
          e.status === 'STALE' ? 'stale' : 'lost',
          `lease expired (${e.status === 'STALE' ? 'its worker reported late' : 'no word from its worker'})`,
          { job: e.jobId, task: e.taskId, worker: e.workerId, attempt: e.attemptId },
        );
        if (task.currentAttemptId !== e.attemptId || !['LEASED', 'RUNNING'].includes(task.status)) continue;
        let status: 'QUEUED' | 'FAILED';
        let reason: string;
        const decision = retryOrFail(task, { kind: 'lost' }, now, scheduler);
        if (decision.retry) {
          status = 'QUEUED';
          reason = `Worker ${worker?.name ?? '?'} stopped responding; retrying in ${decision.waitSec}s (attempt ${decision.nextCounted} of ${task.maxAttempts})${task.pinnedWorker ? ` on ${task.pinnedWorker.name}` : ''}.`;
          await moveTasks(tx, { id: task.id }, ['LEASED', 'RUNNING'], status, {
            statusReason: reason,
            currentAttemptId: null,
            runAfter: decision.runAfter,
          });
          // The run supervisor looks at a lost attempt like at an infrastructure failure (a
          // worker that keeps vanishing gets the task moved elsewhere).
          emits.push({
            type: 'attempt.failed',
            jobId: e.jobId,
            taskId: task.id,
            attemptId: e.attemptId,
            kind: task.kind,
            errorClass: 'LEASE_EXPIRED',
          });
          report.retried++;
        } else {
          status = 'FAILED';
          reason = `Lost ${countedAttempts(task)} times (workers stopped responding); ${decision.exhausted ?? `giving up after ${task.maxAttempts} attempts`}.`;
          await moveTasks(tx, { id: task.id }, ['LEASED', 'RUNNING'], status, { statusReason: reason, finishedAt: now });
          emits.push({ type: 'task.finished', jobId: e.jobId, taskId: task.id, kind: task.kind, status: 'FAILED' });
          report.failed++;
        }
        await accrueUsage(tx, r, e.attemptId, now, { final: true });
        emits.push({
          type: 'job.event',
          jobId: e.jobId,
          eventId: await recordJobEvent(tx, e.jobId, 'task.status', { taskId: task.id, name: task.name, status, reason }),
        });
        emits.push({ type: 'job.updated', jobId: e.jobId });
      }
      // 1b. Flapping workers (domain/workers/flapping.ts).
      for (const f of await flappingWorkers(tx, now, expired, scheduler.flapLost, scheduler.flapWindowMin)) {
        const worker = await tx.worker.findUnique({ where: { id: f.workerId }, select: { name: true } });
        for (const jobId of f.jobIds) {
          const payload = { workerId: f.workerId, worker: worker?.name ?? null, lost: f.lost, windowMin: scheduler.flapWindowMin };
          emits.push({ type: 'job.event', jobId, eventId: await recordJobEvent(tx, jobId, 'worker.flapping', payload) });
        }
        emits.push({ type: 'worker.flapping', workerId: f.workerId, jobIds: f.jobIds, lost: f.lost, windowMin: scheduler.flapWindowMin });
        report.flapping++;
      }

      // 2. Silent workers. A PAUSED one stays PAUSED: OFFLINE comes back ONLINE on the next
      // heartbeat, which would silently undo the owner's pause (it takes no work either way;
      // lastSeenAt says it is gone).
      const silentSince = new Date(now.getTime() - scheduler.workerOfflineSec * 1000);
      const silent = await tx.worker.findMany({
        where: { status: { in: ['ONLINE', 'DRAINING'] }, lastSeenAt: { lt: silentSince } },
        select: { id: true, ownerId: true },
      });
      if (silent.length) {
        await tx.worker.updateMany({ where: { id: { in: silent.map((w) => w.id) } }, data: { status: 'OFFLINE' } });
        for (const w of silent) emits.push({ type: 'worker.changed', workerId: w.id, ownerId: w.ownerId });
        report.offline = silent.length;
      }

      // 3. Usage of running attempts, and spending caps.
      // Skips attempts being completed right now (their rows are locked; the completion
      // accrues them itself). Fix: accruing them here too counted the same interval twice
      // (both read the same last entry) and could deadlock with the completion.
      const running = await lockRunningAttempts(tx);
      for (const a of running) await accrueUsage(tx, r, a.id, now);
      const overCap = await tx.job.findMany({
        where: { spendingCapCad: { not: null }, costCad: { gte: tx.job.fields.spendingCapCad }, status: { in: [...ACTIVE_JOB_STATUSES] } },
        select: { id: true },
      });
      for (const j of overCap) {
        const reason = 'Stopped: the estimated cost reached the spending cap.';
        const stopped = await applyTransition(tx, now, j.id, 'stopAtCap', { reason });
        const workers = await cancelOutstandingWork(tx, r, now, j.id, reason);
        for (const eventId of stopped.eventIds) emits.push({ type: 'job.event', jobId: j.id, eventId });
        emits.push({ type: 'job.updated', jobId: j.id });
        for (const workerId of workers) emits.push({ type: 'worker.orders', workerId });
        emits.push({ type: 'job.capped', jobId: j.id });
        report.stopped++;
      }

      // 3b. Stalled runs: alive (lease renewed) but silent for stallMin minutes. Reported once
      // per attempt (the job event is the record); the run supervisor looks.
      for (const s of await stalledAttempts(tx, new Date(now.getTime() - scheduler.stallMin * 60_000))) {
        const silentMin = Math.round((now.getTime() - (s.lastOutputAt ?? now).getTime()) / 60_000);
        const payload = {
          taskId: s.taskId,
          attemptId: s.attemptId,
          attempt: s.number,
          minutes: scheduler.stallMin,
          lastOutputAt: s.lastOutputAt?.toISOString() ?? null,
          silentMin: s.lastOutputAt ? silentMin : null,
        };
        emits.push({ type: 'job.event', jobId: s.jobId, eventId: await recordJobEvent(tx, s.jobId, 'attempt.stalled', payload) });
        emits.push({ type: 'attempt.stalled', jobId: s.jobId, taskId: s.taskId, attemptId: s.attemptId });
        report.stalled++;
      }

      // 4. Why queued tasks wait.
      for (const change of await explainWait(tx, now, r.config.rates, r.config.trust.minReputation)) {
        emits.push({
          type: 'job.event',
          jobId: change.jobId,
          eventId: await recordJobEvent(tx, change.jobId, 'task.status', {
            taskId: change.taskId,
            status: 'QUEUED',
            reason: change.reason,
          }),
        });
        emits.push({ type: 'job.updated', jobId: change.jobId });
      }
      // 4b. Trust checks no online worker can take (domain/trust/replication.ts): given up.
      for (const g of await giveUpUnplaceableChecks(tx, now, r.config.trust.replicaWaitSec, r.config.trust.minReputation)) {
        emits.push({
          type: 'job.event',
          jobId: g.jobId,
          eventId: await recordJobEvent(tx, g.jobId, 'task.status', { taskId: g.taskId, name: g.name, status: 'FAILED', reason: g.reason }),
        });
        emits.push({ type: 'task.finished', jobId: g.jobId, taskId: g.taskId, kind: 'PROBE', status: 'FAILED' });
        emits.push({ type: 'job.updated', jobId: g.jobId });
      }
      // 4c. Jobs planned while no worker was online whose queued work none of the workers now online can run: planned again.
      for (const j of await replanForNewWorkers(tx, r, now)) {
        for (const eventId of j.eventIds) emits.push({ type: 'job.event', jobId: j.jobId, eventId });
        for (const workerId of j.workers) emits.push({ type: 'worker.orders', workerId });
        emits.push({ type: 'job.updated', jobId: j.jobId });
        emits.push({ type: 'job.replanned', jobId: j.jobId });
      }
      // 4d. Data-download steps only refusing workers could run (domain/workers/downloadWait.ts): failed
      // after DOWNLOAD_WAIT_SEC, naming the URLs and the policies; the job engine then fails the job before its run.
      for (const d of await failRefusedDownloads(tx, now, scheduler.downloadWaitSec, r.config.trust.minReputation)) {
        emits.push({
          type: 'job.event',
          jobId: d.jobId,
          eventId: await recordJobEvent(tx, d.jobId, 'task.status', { taskId: d.taskId, name: d.name, status: 'FAILED', reason: d.reason }),
        });
        emits.push({ type: 'task.finished', jobId: d.jobId, taskId: d.taskId, kind: d.kind, status: 'FAILED' });
        emits.push({ type: 'job.updated', jobId: d.jobId });
      }
      // The tick's own record: an API starting after a gap knows leases had no one to renew them.
      await recordTick(tx, now);
    },
    { timeout: 30_000, maxWait: 10_000 },
  );
  // 1c. Black holes, and quarantines whose cool-down is over: by the process that ran the tick, after
  // its transaction (the expired attempts' row locks are not held meanwhile); each write is conditional.
  if (report.ran) {
    for (const q of await quarantineBlackHoles(r.prisma, now, scheduler)) {
      r.log.warn(`worker ${q.name} (${q.workerId}) quarantined: ${q.reason}`);
      emits.push({ type: 'worker.changed', workerId: q.workerId, ownerId: q.ownerId });
      report.quarantined++;
    }
    for (const w of await releaseQuarantines(r.prisma, now)) {
      emits.push({ type: 'worker.changed', workerId: w.workerId, ownerId: w.ownerId });
      report.released++;
    }
    if (report.released) emits.push({ type: 'tasks.available' });
  }
  for (const e of emits) await r.events.emit(e);
  // 5. Due retries (and anything else claimable) wake the long-pollers.
  if (report.ran) {
    const due = await r.prisma.task.count({ where: { status: 'QUEUED', runAfter: { lte: now } } });
    if (due > 0) await r.events.emit({ type: 'tasks.available' });
    await r.events.emit({ type: 'reconcile', at: now.toISOString() });
  }
  return report;
}

/** The gap without any tick that counts as an outage: three tick intervals, at least 10 s. */
export function outageGapMs(r: Pick<Resources, 'config'>): number {
  return Math.max(3 * r.config.scheduler.tickIntervalSec, 10) * 1000;
}

/** See the file comment. Call before the API process accepts requests. */
export async function resumeAfterOutage(r: Resources, now: Date): Promise<{ resumed: number; outageMs: number | null }> {
  const res = await resumeLeasesAfterOutage(r.prisma, now, outageGapMs(r), r.config.scheduler.leaseSec);
  const line = resumeMessage(res);
  if (line) r.log.info(line);
  return res;
}

/**
 * What a start after a gap says: nothing when no lease needed resuming (an ordinary restart,
 * or the first start after a stop), else how long no API ran and what was resumed. A gap is
 * usually a stop and a start, so it is not called an outage.
 */
export function resumeMessage(res: { resumed: number; outageMs: number | null }): string | null {
  if (res.outageMs === null || res.resumed === 0) return null;
  const n = res.resumed;
  return `No API process ran for ${fmt(Math.round(res.outageMs / 1000))} (stopped or restarted): ${n} running attempt${n === 1 ? '' : 's'} whose lease ran out meanwhile get${n === 1 ? 's' : ''} a fresh lease, so ${n === 1 ? 'its worker can report it when it reconnects' : 'their workers can report them when they reconnect'}.`;
}
