/**
 * Work lost through no fault of the user is the contributor's loss, not the user's cost
 * (docs/architecture.md §9, domain/billing/usage.ts), on real PostgreSQL with explicit tick
 * instants and the server's test clock: a LOST attempt's usage moves out of Job.costCad into
 * Job.lostCostCad in the tick that loses it, a late report (STALE) moves nothing twice, an
 * infrastructure failure is lost too, a failure of the task's own code stays charged, and the
 * cap's periodic stop counts only what the user is charged.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { startTestApi } from './helpers/api.js';
import { addTask, CPU_CAPS, createJobWithFile, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';
import { writeOffAttemptUsage } from '../src/domain/billing/usage.js';
import { INFRASTRUCTURE_ERRORS } from '../src/domain/leases/errorClasses.js';
import { runTick } from '../src/scheduler/tick.js';

const at = (d: Date | string, plusMs: number) => new Date(new Date(d).getTime() + plusMs);
const MIN = 60_000;

describe('lost work is not charged to the user', async () => {
  // A 10-minute lease: attempts accrue billable usage for a while before they are lost.
  const api = await startTestApi({ LEASE_SEC: '600', WORKER_OFFLINE_SEC: '86400' });
  const prisma = api.server.db.prisma;
  const r = api.server.resources;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  // One slot of 1 core + 1 GiB: 0.023 CAD an hour at the default rates.
  const small = { ...CPU_CAPS, cpu: { model: 'tiny', cores: 1 }, memoryMiB: 1024 };
  const moveClockTo = (d: Date) => {
    if (d > api.clock.now()) api.clock.advance(d.getTime() - api.clock.now().getTime());
  };
  let workers = 0;

  async function worker() {
    const w = new ProtocolWorker(api, token, `box ${++workers}`);
    await w.hello({ slots: 1, capabilities: small });
    return w;
  }

  /** Claims the task on a fresh worker and starts it (RUNNING from now). */
  async function start(taskId: string) {
    const t = await prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    moveClockTo(at(t.runAfter, 1000)); // past a retry's backoff
    // One claimable task at a time: what earlier tests left queued (retries) is put aside.
    await prisma.task.updateMany({ where: { status: 'QUEUED', id: { not: taskId } }, data: { status: 'CANCELLED' } });
    const w = await worker();
    const [a] = await w.claim({ max: 1 });
    expect(a?.task.id).toBe(taskId);
    expect((await w.heartbeat([a!])).renewed).toEqual([a!.attemptId]);
    const { leaseExpiresAt } = await prisma.attempt.findUniqueOrThrow({ where: { id: a!.attemptId } });
    return { w, a: a!, leaseExpiresAt };
  }

  /** Ticks at `now` (the server's clock follows). */
  async function tick(now: Date) {
    moveClockTo(now);
    return runTick(r, now);
  }

  /** The job's two figures and its usage entries, summed per attempt and per side. */
  async function ledger(jobId: string) {
    const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    const entries = await prisma.usageEntry.findMany({ where: { jobId } });
    const sum = (keep: (e: (typeof entries)[number]) => boolean) => entries.filter(keep).reduce((s, e) => s + Number(e.costCad), 0);
    return {
      cost: Number(job.costCad),
      lost: Number(job.lostCostCad),
      billable: sum((e) => e.billable),
      nonBillable: sum((e) => !e.billable),
      entries: entries.length,
      of: (attemptId: string) => ({
        billable: sum((e) => e.attemptId === attemptId && e.billable),
        lost: sum((e) => e.attemptId === attemptId && !e.billable),
      }),
    };
  }

  /** Job.costCad = its billable entries, Job.lostCostCad = the others (both exact to the entries' 6 decimals). */
  function expectConsistent(l: Awaited<ReturnType<typeof ledger>>) {
    expect(l.cost).toBeCloseTo(l.billable, 9);
    expect(l.lost).toBeCloseTo(l.nonBillable, 9);
  }

  it('one lost attempt and a retry that succeeds: the user pays only the retry; the lost attempt shows as lost cost', async () => {
    const job = await createJobWithFile(api, owner.token);
    const task = await addTask(api, job, { name: 'lost once', maxAttempts: 3 });
    const first = await start(task.id);
    // Billed while it runs: 5 minutes, the user's so far.
    await tick(at(api.clock.now(), 5 * MIN));
    const running = await ledger(job.jobId);
    expect(running.cost).toBeGreaterThan(0.0015); // ≈ 5 min × 0.023 CAD/h
    expect(running.lost).toBe(0);
    expectConsistent(running);

    // The worker stops renewing: the tick after its lease loses the attempt and retries the task.
    expect(await tick(at(first.leaseExpiresAt, 1000))).toMatchObject({ lost: 1, retried: 1 });
    const lost = await ledger(job.jobId);
    expect(lost.cost).toBe(0);
    expect(lost.of(first.a.attemptId)).toEqual({ billable: 0, lost: expect.any(Number) });
    expect(lost.lost).toBeGreaterThan(running.cost); // the 5 billed minutes and the rest up to the tick
    expectConsistent(lost);

    const second = await start(task.id);
    moveClockTo(at(api.clock.now(), 8 * MIN)); // within its 10-minute lease
    expect((await second.w.complete(second.a, { exitCode: 0 })).status).toBe('SUCCEEDED');
    const done = await ledger(job.jobId);
    const retry = done.of(second.a.attemptId);
    expect(retry.lost).toBe(0);
    expect(retry.billable).toBeGreaterThan(0.0028); // ≈ 8 min
    expect(done.cost).toBeCloseTo(retry.billable, 9);
    expect(done.lost).toBeCloseTo(lost.lost, 9);
    expectConsistent(done);

    // The API shows both, apart.
    const q = await api.gql(`query($id: ID!) { job(id: $id) { costCad lostCostCad } }`, { id: job.gid }, owner.token);
    expect(q.errors).toBeUndefined();
    expect(Number(q.data.job.costCad)).toBeCloseTo(done.cost, 6);
    expect(Number(q.data.job.lostCostCad)).toBeCloseTo(done.lost, 6);
  });

  it('the periodic cap check counts only the billable cost: lost work past the cap does not stop the job; the retry that passes it does', async () => {
    // A 60 s time limit projects to ≈ 0.0004 CAD at lease grant, within the cap; each
    // attempt then runs for ≈ 10 min (≈ 0.0038), past it.
    const job = await createJobWithFile(api, owner.token, { spendingCapCad: 0.002 });
    const task = await addTask(api, job, {
      name: 'capped, lost once',
      maxAttempts: 3,
      requirements: { workload: 'python', timeoutSec: 60 },
    });
    const first = await start(task.id);
    const report = await tick(at(first.leaseExpiresAt, 1000));
    expect(report).toMatchObject({ lost: 1, retried: 1, stopped: 0 });
    const lost = await ledger(job.jobId);
    expect(lost.lost).toBeGreaterThan(0.002); // lost work alone is past the cap …
    expect(lost.cost).toBe(0); // … and not the user's
    expect((await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } })).status).not.toBe('STOPPED');

    // The retry is leased (the claim's cap check sees cost 0) and its own usage reaches the cap.
    const second = await start(task.id);
    expect((await tick(at(api.clock.now(), 3 * MIN))).stopped).toBe(0);
    expect((await tick(at(api.clock.now(), 3 * MIN))).stopped).toBe(1);
    const j = await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } });
    expect(j.status).toBe('STOPPED');
    const stopped = await ledger(job.jobId);
    expect(stopped.cost).toBeGreaterThanOrEqual(0.002);
    expect(stopped.cost).toBeCloseTo(stopped.of(second.a.attemptId).billable, 9);
    expect(stopped.lost).toBeCloseTo(lost.lost, 9);
    expectConsistent(stopped);
  });

  it('STALE: a late report before and after the tick changes nothing; the loss is moved exactly once', async () => {
    const job = await createJobWithFile(api, owner.token);
    const task = await addTask(api, job, { name: 'late worker', maxAttempts: 3 });
    const { w, a, leaseExpiresAt } = await start(task.id);
    await tick(at(api.clock.now(), 5 * MIN));
    const billed = await ledger(job.jobId);
    expect(billed.cost).toBeGreaterThan(0);

    // Its completion arrives after the lease ran out, before any tick marked it LOST: refused,
    // and it accrues nothing (the attempt is left for the tick).
    moveClockTo(at(leaseExpiresAt, 500));
    const early = await w.complete(a, { exitCode: 0 });
    expect(early.__typename).toBe('StaleAttemptError');
    expect(await ledger(job.jobId)).toMatchObject({ cost: billed.cost, lost: 0, entries: billed.entries });

    const tickAt = at(leaseExpiresAt, 1000);
    expect(await tick(tickAt)).toMatchObject({ lost: 1 });
    const lost = await ledger(job.jobId);
    expect(lost).toMatchObject({ cost: 0, billable: 0 });
    expect(lost.lost).toBeGreaterThan(billed.cost);
    expectConsistent(lost);

    // The worker comes back: LOST → STALE, its reports refused; the figures do not move.
    const hb = await w.heartbeat([a]);
    expect(hb.orders).toContainEqual(expect.objectContaining({ kind: 'CANCEL', attemptId: a.attemptId }));
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a.attemptId } })).status).toBe('STALE');
    expect((await w.complete(a, { exitCode: 0 })).__typename).toBe('StaleAttemptError');
    // The same tick again, and the write-off again: nothing moves twice.
    expect(await tick(tickAt)).toMatchObject({ lost: 0 });
    expect(await prisma.$transaction((tx) => writeOffAttemptUsage(tx, [a.attemptId]))).toEqual([]);
    const after = await ledger(job.jobId);
    expect(after).toMatchObject({ cost: 0, lost: lost.lost, entries: lost.entries });
  });

  it('the write-off racing itself (the tick and a late report, or two ticks, in separate transactions) moves the usage once', async () => {
    const job = await createJobWithFile(api, owner.token);
    const task = await addTask(api, job, { name: 'raced', maxAttempts: 3 });
    const { a, leaseExpiresAt } = await start(task.id);
    await tick(at(api.clock.now(), 5 * MIN));
    await tick(at(api.clock.now(), 2 * MIN));
    const before = await ledger(job.jobId);
    expect(before.entries).toBe(2);
    const moved = await Promise.all(Array.from({ length: 6 }, () => prisma.$transaction((tx) => writeOffAttemptUsage(tx, [a.attemptId]))));
    const winners = moved.filter((m) => m.length > 0);
    expect(winners).toHaveLength(1);
    expect(Number(winners[0]![0]!.movedCad)).toBeCloseTo(before.cost, 9);
    const after = await ledger(job.jobId);
    expect(after).toMatchObject({ cost: 0, billable: 0 });
    expect(after.lost).toBeCloseTo(before.cost, 9);
    expectConsistent(after);
    // The tick then loses the attempt: its last minutes are lost too, nothing is moved twice.
    expect(await tick(at(leaseExpiresAt, 1000))).toMatchObject({ lost: 1 });
    const lost = await ledger(job.jobId);
    expect(lost).toMatchObject({ cost: 0, billable: 0, entries: 3 });
    expect(lost.lost).toBeGreaterThan(after.lost);
    expectConsistent(lost);
  });

  it("a task retried after an infrastructure failure of the worker: that attempt is the contributor's loss, the retry is charged", async () => {
    const job = await createJobWithFile(api, owner.token);
    const task = await addTask(api, job, { name: 'bad machine', maxAttempts: 3 });
    const first = await start(task.id);
    await tick(at(api.clock.now(), 5 * MIN));
    moveClockTo(at(api.clock.now(), MIN));
    const failed = await first.w.complete(first.a, { exitCode: null, errorClass: 'WORKER_ERROR', errorMessage: 'the disk filled up' });
    expect(failed).toMatchObject({ status: 'FAILED', errorClass: 'WORKER_ERROR' });
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('QUEUED');
    const lost = await ledger(job.jobId);
    expect(lost.cost).toBe(0);
    expect(lost.of(first.a.attemptId).lost).toBeGreaterThan(0.002); // ≈ 6 min, both entries
    expectConsistent(lost);

    const second = await start(task.id);
    moveClockTo(at(api.clock.now(), 4 * MIN));
    expect((await second.w.complete(second.a, { exitCode: 0 })).status).toBe('SUCCEEDED');
    const done = await ledger(job.jobId);
    expect(done.cost).toBeCloseTo(done.of(second.a.attemptId).billable, 9);
    expect(done.cost).toBeGreaterThan(0.001);
    expect(done.lost).toBeCloseTo(lost.lost, 9);
    expectConsistent(done);

    // The machine failing does not use up the user's only attempt (retried: leases/retryOrFail.ts),
    // and is still not the user's to pay.
    const once = await addTask(api, job, { name: 'one attempt', maxAttempts: 1 });
    const only = await start(once.id);
    moveClockTo(at(api.clock.now(), 3 * MIN));
    expect(await only.w.complete(only.a, { exitCode: null, errorClass: 'UPLOAD_FAILED', errorMessage: 'HTTP 503' })).toMatchObject({
      status: 'FAILED',
    });
    expect(await prisma.task.findUniqueOrThrow({ where: { id: once.id } })).toMatchObject({ status: 'QUEUED', infraFailures: 1 });
    await prisma.task.update({ where: { id: once.id }, data: { status: 'CANCELLED' } }); // out of the way of the next claims
    const last = await ledger(job.jobId);
    expect(last.of(only.a.attemptId)).toEqual({ billable: 0, lost: expect.any(Number) });
    expect(last.cost).toBeCloseTo(done.cost, 9);
    expectConsistent(last);
  });

  it('a task that fails on its own code (non-zero exit, time limit, out of memory) is still charged', async () => {
    const job = await createJobWithFile(api, owner.token);
    const own = [
      { exitCode: 1 },
      { exitCode: null, errorClass: 'TIMEOUT', errorMessage: 'ran past 60 s' },
      { exitCode: null, errorClass: 'OOM', errorMessage: 'out of memory' },
    ];
    for (const [i, result] of own.entries()) {
      const task = await addTask(api, job, { name: `own failure ${i}`, maxAttempts: 3 });
      const { w, a } = await start(task.id);
      moveClockTo(at(api.clock.now(), 5 * MIN));
      expect(await w.complete(a, result)).toMatchObject({ status: 'FAILED' });
      expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('FAILED');
      const l = await ledger(job.jobId);
      expect(l.of(a.attemptId)).toEqual({ billable: expect.any(Number), lost: 0 });
      expect(l.of(a.attemptId).billable).toBeGreaterThan(0.0015);
    }
    const l = await ledger(job.jobId);
    expect(l.lost).toBe(0);
    expect(l.cost).toBeGreaterThan(0.0045);
    expectConsistent(l);
  });

  it('the migration moves usage recorded before it the way the code does now (same error classes, same figures)', async () => {
    const sql = await readFile(new URL('../../prisma/migrations/20261203170000_usage_lost_cost/migration.sql', import.meta.url), 'utf8');
    const listed = [...sql.matchAll(/"errorClass" IN \(([^)]*)\)/g)].flatMap((m) =>
      m[1]!.split(',').map((s) => s.trim().replace(/'/g, '')),
    );
    expect(listed.sort()).toEqual([...INFRASTRUCTURE_ERRORS].sort());

    // Every job of the tests above, as it would have been before the migration (all usage
    // charged), then the migration's data step: the same entries and figures as the code made.
    const snapshot = async () => ({
      entries: await prisma.usageEntry.findMany({ orderBy: { id: 'asc' }, select: { id: true, billable: true } }),
      jobs: (await prisma.job.findMany({ orderBy: { id: 'asc' }, select: { id: true, costCad: true, lostCostCad: true } })).map((j) => [
        j.id,
        j.costCad.toString(),
        j.lostCostCad.toString(),
      ]),
    });
    const now = await snapshot();
    expect(now.entries.some((e) => !e.billable)).toBe(true);
    const dataStep = sql.slice(sql.indexOf('WITH moved AS'));
    await prisma.$transaction(async (tx) => {
      await tx.usageEntry.updateMany({ data: { billable: true } });
      await tx.$executeRawUnsafe(
        `UPDATE "Job" j SET "lostCostCad" = 0, "costCad" = COALESCE((SELECT sum("costCad") FROM "UsageEntry" u WHERE u."jobId" = j.id), 0)`,
      );
      await tx.$executeRawUnsafe(dataStep);
    });
    expect(await snapshot()).toEqual(now);
  });
});
