/**
 * Leases, fencing and the scheduler tick (invariants 1–3) on real PostgreSQL, driven by
 * `runTick(resources, now)` with explicit instants and the server's test clock (nothing
 * sleeps): lease expiry and retry, stale reports, maxAttempts, concurrent claims, two
 * API instances ticking at once, eligibility and placement, fairness, spending caps.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startTestApi } from './helpers/api.js';
import {
  addTask,
  CPU_CAPS,
  createJobWithFile,
  createWorkerToken,
  NVIDIA_CAPS,
  ProtocolWorker,
  workerGid,
  type Assignment,
} from './helpers/protocolClient.js';
import { MIN_INTERVAL_MS } from '../src/domain/billing/usage.js';
import { resumeAfterOutage, runTick, TICK_LOCK } from '../src/scheduler/tick.js';

const at = (d: Date | string, plusMs: number) => new Date(new Date(d).getTime() + plusMs);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('lease expiry, retry and fencing', async () => {
  const api = await startTestApi();
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const w1 = new ProtocolWorker(api, token, 'first');
  const w2 = new ProtocolWorker(api, token, 'second');
  await w1.hello({ slots: 2 });
  await w2.hello({ slots: 2 });
  const job = await createJobWithFile(api, owner.token);
  const leaseMs = api.config.scheduler.leaseSec * 1000;

  it('an unrenewed lease is LOST at the tick; the retry gets a new attempt id and token; late reports are stale; the accepted result never changes', async () => {
    const task = await addTask(api, job, { name: 'flaky', maxAttempts: 3 });
    const [a1] = await w1.claim({ max: 1 });
    expect(a1!.task.id).toBe(task.id);
    expect((await w1.heartbeat([a1!])).renewed).toEqual([a1!.attemptId]);
    expect((await w1.appendLogs(a1!, [{ seq: 0, text: 'from the first' }])).accepted).toBe(1);
    const lease = (await prisma.attempt.findUniqueOrThrow({ where: { id: a1!.attemptId } })).leaseExpiresAt;

    // A tick before expiry changes nothing.
    const early = await runTick(api.server.resources, at(lease, -1000));
    expect(early).toMatchObject({ ran: true, lost: 0 });
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a1!.attemptId } })).status).toBe('RUNNING');

    const tickAt = at(lease, 1000);
    const report = await runTick(api.server.resources, tickAt);
    expect(report).toMatchObject({ ran: true, lost: 1, retried: 1, failed: 0 });
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a1!.attemptId } })).status).toBe('LOST');
    const queued = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(queued).toMatchObject({ status: 'QUEUED', currentAttemptId: null, attemptCount: 1 });
    expect(queued.runAfter.getTime()).toBeGreaterThan(tickAt.getTime());
    expect(queued.statusReason).toMatch(/first stopped responding; retrying/);
    // The same tick again: idempotent.
    expect(await runTick(api.server.resources, tickAt)).toMatchObject({ ran: true, lost: 0, retried: 0 });

    // Not claimable before runAfter (backoff), then claimable by the second worker.
    api.clock.advance(tickAt.getTime() - Date.now() - api.clock.offsetMs);
    expect(await w2.claim({ max: 1 })).toEqual([]);
    api.clock.advance(queued.runAfter.getTime() - api.clock.now().getTime() + 1000);
    const [a2] = await w2.claim({ max: 1 });
    expect(a2!.task.id).toBe(task.id);
    expect(a2!.number).toBe(2);
    expect(a2!.attemptId).not.toBe(a1!.attemptId);
    expect(a2!.fencingToken).not.toBe(a1!.fencingToken);

    // The first worker comes back: its heartbeat gets CANCEL, its reports are stale.
    const hb = await w1.heartbeat([a1!]);
    expect(hb.renewed).toEqual([]);
    expect(hb.orders).toContainEqual(expect.objectContaining({ kind: 'CANCEL', attemptId: a1!.attemptId }));
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a1!.attemptId } })).status).toBe('STALE');
    const logs = await w1.appendLogs(a1!, [{ seq: 1, text: 'late' }]);
    expect(logs).toMatchObject({ __typename: 'StaleAttemptError', attemptId: a1!.attemptId });
    expect((await w1.reportMetrics(a1!, [{ seq: 0, name: 'loss', value: 9 }])).__typename).toBe('StaleAttemptError');
    const late = await w1.complete(a1!, { exitCode: 0, metrics: { from: 'first' } });
    expect(late.__typename).toBe('StaleAttemptError');
    expect(late.reason).toMatch(/lease expired/);
    const stale = await prisma.staleReport.findMany({ where: { attemptId: a1!.attemptId } });
    expect(stale.map((s) => s.kind).sort()).toEqual(['complete', 'heartbeat', 'logs', 'metrics']);
    expect(await prisma.logChunk.count({ where: { attemptId: a1!.attemptId } })).toBe(1);

    // The second worker's result is the accepted one.
    expect((await w2.heartbeat([a2!])).renewed).toEqual([a2!.attemptId]);
    const done = await w2.complete(a2!, { exitCode: 0, metrics: { from: 'second' } });
    expect(done).toMatchObject({ __typename: 'Attempt', status: 'SUCCEEDED' });
    const accepted = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(accepted.status).toBe('SUCCEEDED');
    expect(accepted.result).toMatchObject({ attemptId: a2!.attemptId, metrics: { from: 'second' } });

    // Third and later completions are refused; nothing changes.
    expect((await w1.complete(a1!, { exitCode: 0, metrics: { from: 'first again' } })).__typename).toBe('StaleAttemptError');
    expect((await w2.complete(a2!, { exitCode: 0, metrics: { from: 'second again' } })).__typename).toBe('StaleAttemptError');
    expect((await w2.complete(a2!, { exitCode: 3 })).__typename).toBe('StaleAttemptError');
    await runTick(api.server.resources, at(api.clock.now(), leaseMs * 3));
    const final = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(final.result).toEqual(accepted.result);
    expect(final.status).toBe('SUCCEEDED');
    expect(final.finishedAt).toEqual(accepted.finishedAt);
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a2!.attemptId } })).status).toBe('SUCCEEDED');
    const attempts = await prisma.attempt.findMany({ where: { taskId: task.id }, orderBy: { number: 'asc' } });
    expect(attempts.map((a) => [a.number, a.status])).toEqual([
      [1, 'STALE'],
      [2, 'SUCCEEDED'],
    ]);
  });

  it('maxAttempts exhausted by lost leases → task FAILED with the reason', async () => {
    await w1.hello({ slots: 2 }); // the last tick marked them OFFLINE
    await w2.hello({ slots: 2 });
    const task = await addTask(api, job, { name: 'doomed', maxAttempts: 2 });
    for (let n = 1; n <= 2; n++) {
      const now = api.clock.now();
      const t = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
      if (t.runAfter > now) api.clock.advance(t.runAfter.getTime() - now.getTime() + 1000);
      const [a] = await w1.claim({ max: 1 });
      expect(a?.task.id).toBe(task.id);
      expect(a!.number).toBe(n);
      const r = await runTick(api.server.resources, at(a!.leaseExpiresAt, 1000));
      expect(r.lost).toBe(1);
    }
    const failed = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(failed.status).toBe('FAILED');
    expect(failed.statusReason).toMatch(/giving up after 2 attempts/);
    expect(failed.finishedAt).not.toBeNull();
    const ev = await prisma.jobEvent.findMany({ where: { jobId: job.jobId, kind: 'task.status' } });
    expect(ev.some((e) => (e.payload as any).taskId === task.id && (e.payload as any).status === 'FAILED')).toBe(true);
    api.clock.advance(3600_000);
    await w1.hello({ slots: 2 });
    expect(await w1.claim({ max: 2 })).toEqual([]);
  });

  it('a completion racing the tick that expires its lease: exactly one wins, no deadlock, no error', async () => {
    await w1.hello({ slots: 2 });
    const task = await addTask(api, job, { name: 'photo finish' });
    const [a] = await w1.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    await w1.heartbeat([a!]);
    // Interleave deterministically: hold the job row so the completion (which has locked
    // its task row) and the tick (which has taken the advisory lock and expired the
    // attempt) both stop at it; then let them go at once.
    const blocker = new pg.Client({ connectionString: api.databaseUrl });
    await blocker.connect();
    const waiting = async (n: number) => {
      for (let i = 0; i < 300; i++) {
        const r = await blocker.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (r.rows[0].n >= n) return;
        await sleep(10);
      }
      throw new Error(`fewer than ${n} sessions waiting`);
    };
    let completion!: ReturnType<typeof w1.complete>;
    let tick!: Promise<Awaited<ReturnType<typeof runTick>> | Error>;
    await blocker.query('BEGIN');
    try {
      await blocker.query(`SELECT id FROM "Job" WHERE id = $1 FOR UPDATE`, [job.jobId]);
      completion = w1.complete(a!, { exitCode: 0, metrics: { who: 'worker' } });
      await waiting(1);
      tick = runTick(api.server.resources, at(a!.leaseExpiresAt, 1000)).then(
        (r) => r,
        (e: Error) => e,
      );
      // The tick either waits on the job row too, or (leaving the attempt being completed
      // alone) finishes without waiting.
      await Promise.race([tick, waiting(2)]);
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }
    const [done, report] = await Promise.all([completion, tick]);
    expect(report).not.toBeInstanceOf(Error);
    expect(done.errors).toBeUndefined();
    const t = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    const attempt = await prisma.attempt.findUniqueOrThrow({ where: { id: a!.attemptId } });
    if (done.__typename === 'Attempt') {
      // The completion won: accepted, and the tick left the attempt alone.
      expect(t).toMatchObject({ status: 'SUCCEEDED', result: expect.objectContaining({ attemptId: a!.attemptId }) });
      expect(attempt.status).toBe('SUCCEEDED');
      expect((report as any).lost).toBe(0);
    } else {
      expect(done.__typename).toBe('StaleAttemptError');
      expect(t.status).toBe('QUEUED');
      expect(attempt.status).toMatch(/LOST|STALE/);
    }
  });

  it('a worker silent past WORKER_OFFLINE_SEC goes OFFLINE at the tick and ONLINE again at its next heartbeat', async () => {
    const w = new ProtocolWorker(api, token, 'sleepy');
    await w.hello();
    const r = await runTick(api.server.resources, at(api.clock.now(), (api.config.scheduler.workerOfflineSec + 1) * 1000));
    expect(r.offline).toBeGreaterThanOrEqual(1);
    expect((await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).status).toBe('OFFLINE');
    expect((await w.heartbeat([])).status).toBe('ONLINE');
  });

  it('a paused worker that goes silent stays PAUSED: the owner’s pause survives the disconnect and the return', async () => {
    const w = new ProtocolWorker(api, token, 'paused-sleepy');
    await w.hello();
    await prisma.worker.update({ where: { id: w.workerId }, data: { status: 'PAUSED' } });
    const r = await runTick(api.server.resources, at(api.clock.now(), (api.config.scheduler.workerOfflineSec + 1) * 1000));
    expect(r.ran).toBe(true);
    expect((await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).status).toBe('PAUSED');
    expect((await w.heartbeat([])).status).toBe('PAUSED');
    expect((await w.hello()).worker.status).toBe('PAUSED');
  });
});

describe('concurrency on real PostgreSQL', async () => {
  const api = await startTestApi();
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const job = await createJobWithFile(api, owner.token);

  it('N concurrent claims by several workers over M tasks: every task leased exactly once', async () => {
    const M = 60;
    const workers = Array.from({ length: 8 }, (_, i) => new ProtocolWorker(api, token, `racer-${i}`));
    for (const w of workers) await w.hello({ slots: 12 });
    for (let i = 0; i < M; i++) await addTask(api, job, { name: `t${i}` });
    const all: Assignment[] = [];
    for (let round = 0; round < 10 && all.length < M; round++) {
      const batches = await Promise.all(workers.flatMap((w) => [w.claim({ max: 3 }), w.claim({ max: 3 }), w.claim({ max: 1 })]));
      all.push(...batches.flat());
    }
    expect(all).toHaveLength(M);
    expect(new Set(all.map((a) => a.task.id)).size).toBe(M);
    expect(new Set(all.map((a) => a.attemptId)).size).toBe(M);
    expect(new Set(all.map((a) => a.fencingToken)).size).toBe(M);
    const attempts = await prisma.attempt.groupBy({ by: ['taskId'], _count: { _all: true } });
    expect(attempts).toHaveLength(M);
    expect(attempts.every((g) => g._count._all === 1)).toBe(true);
    const tasks = await prisma.task.findMany({ where: { jobId: job.jobId } });
    expect(tasks.every((t) => t.status === 'LEASED' && t.attemptCount === 1 && t.currentAttemptId)).toBe(true);
    const byAttempt = new Map(all.map((a) => [a.attemptId, a.task.id]));
    for (const t of tasks) expect(byAttempt.get(t.currentAttemptId!)).toBe(t.id);
  });

  it('two API instances tick at once: one runs, the other skips; nothing is lost or done twice', async () => {
    const api2 = await startTestApi({}, { databaseUrl: api.databaseUrl, dataDir: api.dataDir });
    // Deterministic overlap: hold a lock tick A needs after taking the advisory lock.
    const leases = await prisma.attempt.findMany({ where: { status: { in: ['LEASED', 'RUNNING'] } } });
    const expiry = new Date(Math.max(...leases.map((a) => a.leaseExpiresAt.getTime())) + 1000);
    const blocker = new pg.Client({ connectionString: api.databaseUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`SELECT id FROM "Job" WHERE id = $1 FOR UPDATE`, [job.jobId]);
    const tickA = runTick(api.server.resources, expiry);
    const probe = new pg.Client({ connectionString: api.databaseUrl });
    await probe.connect();
    for (let i = 0; i < 200; i++) {
      const held = await probe.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted`, [TICK_LOCK]);
      if (held.rowCount) break;
      await sleep(10);
    }
    const tickB = await runTick(api2.server.resources, expiry);
    expect(tickB.ran).toBe(false);
    await blocker.query('COMMIT');
    await blocker.end();
    const a = await tickA;
    expect(a).toMatchObject({ ran: true, lost: leases.length, retried: leases.length });

    // Several more concurrent rounds at later instants: exactly one LOST event per attempt.
    const ws = Array.from({ length: 3 }, (_, i) => new ProtocolWorker(api2, token, `second-${i}`));
    let lostTotal = a.lost;
    for (let round = 1; round <= 2; round++) {
      api.clock.advance(3600_000);
      api2.clock.advance(3600_000);
      for (const w of ws) await w.hello({ slots: 30 });
      const claimed = (await Promise.all(ws.map((w) => w.claim({ max: 30 })))).flat();
      expect(claimed.length).toBeGreaterThan(0);
      const when = at(claimed[0]!.leaseExpiresAt, api.config.scheduler.leaseSec * 1000);
      const [x, y] = await Promise.all([runTick(api.server.resources, when), runTick(api2.server.resources, when)]);
      expect(x.lost + y.lost).toBe(claimed.length);
      expect(x.ran || y.ran).toBe(true);
      lostTotal += x.lost + y.lost;
    }
    const lostEvents = await prisma.jobEvent.findMany({ where: { jobId: job.jobId, kind: 'attempt.status' } });
    const lost = lostEvents.filter((e) => (e.payload as any).status === 'LOST').map((e) => (e.payload as any).attemptId);
    expect(lost).toHaveLength(lostTotal);
    expect(new Set(lost).size).toBe(lostTotal);
    expect(await prisma.attempt.count({ where: { status: 'LOST' } })).toBe(lostTotal);
    // Every task is either queued for its next attempt or failed after its last: none stuck.
    const tasks = await prisma.task.findMany({ where: { jobId: job.jobId } });
    for (const t of tasks) {
      expect(t.status === 'QUEUED' || (t.status === 'FAILED' && t.attemptCount === t.maxAttempts), `${t.name} ${t.status}`).toBe(true);
      expect(await prisma.attempt.count({ where: { taskId: t.id } })).toBe(t.attemptCount);
    }
    await probe.end();
  });
});

describe('eligibility, placement and fairness', async () => {
  const api = await startTestApi();
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const job = await createJobWithFile(api, owner.token);
  const cpu = new ProtocolWorker(api, token, 'cpu box');
  const gpu = new ProtocolWorker(api, token, 'gpu box');
  await cpu.hello({ slots: 1, capabilities: CPU_CAPS });

  it('a task needing torch-cuda on nvidia waits, and says why (statusReason and a task.status event)', async () => {
    const task = await addTask(api, job, {
      name: 'cuda',
      requirements: { workload: 'torch-cuda', accelVendor: 'nvidia', minAccelMemoryMiB: 16384 },
    });
    expect(await cpu.claim({ max: 1 })).toEqual([]);
    await runTick(api.server.resources, at(api.clock.now(), 2000));
    const t = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(t.status).toBe('QUEUED');
    expect(t.statusReason).toMatch(/No online worker can run this/);
    expect(t.statusReason).toMatch(/torch-cuda/);
    expect(t.statusReason).toMatch(/nvidia/);
    expect(t.statusReason).toMatch(/16 GiB/);
    const q = await api.gql(
      `query($id: ID!) { job(id: $id) { tasks { name status statusReason } events { kind payload } } }`,
      { id: job.gid },
      owner.token,
    );
    expect(q.data.job.tasks.find((x: any) => x.name === 'cuda').statusReason).toBe(t.statusReason);
    const events = q.data.job.events.filter((e: any) => e.kind === 'task.status' && e.payload.taskId === task.id);
    expect(events).toHaveLength(1);
    expect(events[0].payload.reason).toBe(t.statusReason);
    // Idempotent: a second tick says nothing new.
    await runTick(api.server.resources, at(api.clock.now(), 4000));
    expect(
      (await prisma.jobEvent.findMany({ where: { jobId: job.jobId, kind: 'task.status' } })).filter(
        (e) => (e.payload as any).taskId === task.id,
      ),
    ).toHaveLength(1);

    // A GPU worker that meets the needs arrives and gets it.
    await gpu.hello({ slots: 1, capabilities: NVIDIA_CAPS });
    const [a] = await gpu.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).statusReason).toBeNull();
    expect((await gpu.complete(a!, { exitCode: 0 })).status).toBe('SUCCEEDED');
  });

  it('a pinned task is only claimed by its pinned worker', async () => {
    const other = new ProtocolWorker(api, token, 'other cpu');
    await other.hello({ slots: 4, capabilities: CPU_CAPS });
    const task = await addTask(api, job, { name: 'pinned', pinnedWorkerId: cpu.workerId });
    expect(await other.claim({ max: 4 })).toEqual([]);
    expect(await gpu.claim({ max: 1 })).toEqual([]);
    const [a] = await cpu.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    // Lost → queued again for the same pinned worker only.
    await runTick(api.server.resources, at(a!.leaseExpiresAt, 1000));
    const t = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(t.status).toBe('QUEUED');
    api.clock.advance(t.runAfter.getTime() - api.clock.now().getTime() + 1000);
    for (const w of [cpu, gpu, other]) await w.hello({ slots: w === other ? 4 : 1, capabilities: w === gpu ? NVIDIA_CAPS : CPU_CAPS });
    expect(await other.claim({ max: 4 })).toEqual([]);
    const [b] = await cpu.claim({ max: 1 });
    expect(b!.task.id).toBe(task.id);
    expect(b!.number).toBe(2);
    await cpu.complete(b!, { exitCode: 0 });
    // Pinned to a worker that is not online: it says so.
    await prisma.worker.update({ where: { id: other.workerId }, data: { status: 'OFFLINE' } });
    const waiting = await addTask(api, job, { name: 'pinned to offline', pinnedWorkerId: other.workerId });
    await runTick(api.server.resources, at(api.clock.now(), 2000));
    expect((await prisma.task.findUniqueOrThrow({ where: { id: waiting.id } })).statusReason).toMatch(
      /pinned worker other cpu \(offline\)/,
    );
    await prisma.task.update({ where: { id: waiting.id }, data: { status: 'CANCELLED' } });
  });

  it('a GPU worker gets no CPU-only work while an idle CPU worker is online, but does when none is', async () => {
    const t1 = await addTask(api, job, { name: 'cpu work 1' });
    expect(await gpu.claim({ max: 1 })).toEqual([]);
    const [c] = await cpu.claim({ max: 1 });
    expect(c!.task.id).toBe(t1.id);
    // The CPU worker's only slot is busy now: the GPU worker may take CPU work.
    const t2 = await addTask(api, job, { name: 'cpu work 2' });
    const [g] = await gpu.claim({ max: 1 });
    expect(g!.task.id).toBe(t2.id);
    await cpu.complete(c!, { exitCode: 0 });
    await gpu.complete(g!, { exitCode: 0 });
    // A paused CPU worker does not count as idle.
    await api.gql(`mutation($id: ID!) { pauseWorker(id: $id) { __typename } }`, { id: workerGid(cpu.workerId) }, owner.token);
    const t3 = await addTask(api, job, { name: 'cpu work 3' });
    const [g3] = await gpu.claim({ max: 1 });
    expect(g3!.task.id).toBe(t3.id);
    await gpu.complete(g3!, { exitCode: 0 });
    await api.gql(`mutation($id: ID!) { resumeWorker(id: $id) { __typename } }`, { id: workerGid(cpu.workerId) }, owner.token);
  });

  it('a task with a setup phase (packages to install) goes only to a worker that installs, and says why it waits', async () => {
    const setup = { workload: 'python' as const, setup: { pip: ['tqdm==4.66.1'] } };
    const task = await addTask(api, job, { name: 'needs tqdm', requirements: setup });
    expect(await cpu.claim({ max: 1 })).toEqual([]);
    await runTick(api.server.resources, at(api.clock.now(), 2000));
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).statusReason).toMatch(
      /^No online worker can run this: it needs python, a worker that installs Python packages\./,
    );
    const installer = new ProtocolWorker(api, token, 'installer');
    await installer.hello({ slots: 1, capabilities: { ...CPU_CAPS, install: { enabled: true, index: null } } });
    const [a] = await installer.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    expect(a!.task.requirements).toMatchObject({ setup: { pip: ['tqdm==4.66.1'] } });
    await installer.complete(a!, { exitCode: 0 });
    await prisma.worker.update({ where: { id: installer.workerId }, data: { status: 'OFFLINE' } });
  });

  it("a worker without a sandbox that did not choose --sandbox none (ownJobsOnly) never claims another user's task, takes its owner's own, and the other's wait says why", async () => {
    const other = await api.signUp();
    const otherJob = await createJobWithFile(api, other.token);
    // Only the worker without a sandbox is online; the others are put back afterwards.
    const before = await prisma.worker.findMany({ where: { status: 'ONLINE' }, select: { id: true, status: true } });
    await prisma.worker.updateMany({ where: { status: 'ONLINE' }, data: { status: 'PAUSED' } });
    const local = new ProtocolWorker(api, token, 'local-no-sandbox');
    expect(await local.hello({ slots: 1, capabilities: { ...CPU_CAPS, sandbox: 'none', ownJobsOnly: true } })).toMatchObject({
      __typename: 'WorkerHelloResult',
    });
    const theirs = await addTask(api, otherJob, { name: 'theirs' });
    expect(await local.claim({ max: 1 })).toEqual([]);
    await runTick(api.server.resources, at(api.clock.now(), 2000));
    expect((await prisma.task.findUniqueOrThrow({ where: { id: theirs.id } })).statusReason).toMatch(
      /^No online worker can run this: it needs python, a worker with a sandbox \(those without one run only their owner's own jobs\)/,
    );
    const mine = await addTask(api, job, { name: 'mine' });
    const [a] = await local.claim({ max: 1 });
    expect(a!.task.id).toBe(mine.id);
    await local.complete(a!, { exitCode: 0 });
    expect(await local.claim({ max: 1 })).toEqual([]);
    // A sandboxed worker takes the other user's task.
    await prisma.worker.update({ where: { id: local.workerId }, data: { status: 'OFFLINE' } });
    await prisma.worker.update({ where: { id: cpu.workerId }, data: { status: 'ONLINE' } });
    await cpu.hello({ slots: 1, capabilities: CPU_CAPS });
    const [b] = await cpu.claim({ max: 1 });
    expect(b!.task.id).toBe(theirs.id);
    await cpu.complete(b!, { exitCode: 0 });
    for (const w of before) await prisma.worker.update({ where: { id: w.id }, data: { status: w.status } });
  });

  it('a task that needs PyTorch ≥ 2.1 (a pin) goes only to a worker whose task interpreter has it (by major.minor), says why it waits, and an idle CPU worker with an older torch does not hold it back from a GPU worker that has it', async () => {
    // The interpreter the worker runs tasks with decides (capabilities.python), not another one it found.
    const torchCaps = (base: object, torch: string | null) => ({
      ...base,
      python: '/usr/bin/python3',
      pythons: [
        { path: '/opt/conda/bin/python3', version: '3.12.1', torch: { version: '2.5.1' }, numpy: null },
        { path: '/usr/bin/python3', version: '3.11.2', torch: torch ? { version: torch } : null, numpy: null },
      ],
    });
    const task = await addTask(api, job, { name: 'needs torch 2.1', requirements: { workload: 'torch-cpu', minTorch: '2.1' } });
    const old = new ProtocolWorker(api, token, 'old torch');
    await old.hello({ slots: 1, capabilities: torchCaps(CPU_CAPS, '1.13.0a0') });
    expect(await old.claim({ max: 1 })).toEqual([]);
    expect(await cpu.claim({ max: 1 })).toEqual([]); // no torch at all
    await prisma.worker.update({ where: { id: gpu.workerId }, data: { status: 'OFFLINE' } });
    await runTick(api.server.resources, at(api.clock.now(), 2000));
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).statusReason).toMatch(
      /^No online worker can run this: it needs torch-cpu, PyTorch ≥ 2\.1 \(a pin of the project\)\./,
    );
    // A GPU worker with torch 2.4 takes it although 'old torch' is an idle CPU worker (it cannot).
    await gpu.hello({ slots: 1, capabilities: torchCaps(NVIDIA_CAPS, '2.4.0+cu121') });
    const [a] = await gpu.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    expect(a!.task.requirements).toMatchObject({ minTorch: '2.1' });
    await gpu.complete(a!, { exitCode: 0 });
    // Compared as numbers: 2.10 is newer than 2.9.
    const later = await addTask(api, job, { name: 'needs torch 2.9', requirements: { workload: 'torch-cpu', minTorch: '2.9' } });
    const newer = new ProtocolWorker(api, token, 'torch 2.10');
    await newer.hello({ slots: 1, capabilities: torchCaps(CPU_CAPS, '2.10.0') });
    expect(await old.claim({ max: 1 })).toEqual([]);
    const [b] = await newer.claim({ max: 1 });
    expect(b!.task.id).toBe(later.id);
    await newer.complete(b!, { exitCode: 0 });
    await prisma.worker.updateMany({ where: { id: { in: [old.workerId, newer.workerId] } }, data: { status: 'OFFLINE' } });
    await gpu.hello({ slots: 1, capabilities: NVIDIA_CAPS });
  });

  it('fairness: user A with 10 queued tasks and user B with 1 — B gets one of the first two claims (also in one batch claim)', async () => {
    const ua = await api.signUp();
    const ub = await api.signUp();
    const jobA = await createJobWithFile(api, ua.token);
    const jobB = await createJobWithFile(api, ub.token);
    const fair = new ProtocolWorker(api, token, 'fair box');
    await fair.hello({ slots: 10, capabilities: CPU_CAPS });
    await prisma.worker.updateMany({ where: { id: { not: fair.workerId } }, data: { status: 'PAUSED' } });
    for (let i = 0; i < 10; i++) await addTask(api, jobA, { name: `a${i}` });
    const b = await addTask(api, jobB, { name: 'b0' });
    const first = await fair.claim({ max: 1 });
    const second = await fair.claim({ max: 1 });
    expect([...first, ...second].map((x) => x.task.id)).toContain(b.id);
    for (const x of [...first, ...second]) await fair.complete(x, { exitCode: 0 });

    // Same again, claimed as one batch of two.
    const b2 = await addTask(api, jobB, { name: 'b1' });
    const batch = await fair.claim({ max: 2 });
    expect(batch).toHaveLength(2);
    expect(batch.map((x) => x.task.id)).toContain(b2.id);
  });
});

describe('spending caps', async () => {
  const api = await startTestApi({ LEASE_SEC: '3600', WORKER_OFFLINE_SEC: '7200' });
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const small = { ...CPU_CAPS, cpu: { model: 'tiny', cores: 1 }, memoryMiB: 1024 };

  async function runningAttempt(name: string) {
    const job = await createJobWithFile(api, owner.token, { spendingCapCad: 0.0001 });
    // A 10 s time limit: 1 core + 1 GiB for 10 s projects to ≈ 0.00006 CAD, within the cap at
    // lease grant; the run then goes on past it, which the tick's periodic check stops.
    const task = await addTask(api, job, { name, requirements: { workload: 'python', timeoutSec: 10 } });
    const w = new ProtocolWorker(api, token, name);
    await w.hello({ slots: 1, capabilities: small });
    const [a] = await w.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    expect((await w.heartbeat([a!])).renewed).toEqual([a!.attemptId]);
    return { job, task, w, a: a! };
  }

  async function costs(jobId: string) {
    const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    // The user's cost is the billable entries (lost work is apart: api/test/lostWork.test.ts).
    const entries = await prisma.usageEntry.findMany({ where: { jobId, billable: true } });
    return { job: Number(job.costCad), entries: entries.reduce((s, e) => s + Number(e.costCad), 0) };
  }

  it("at lease grant: a task whose projected cost (with the job's cost so far and its in-flight work) passes the cap is not leased, and the job says why", async () => {
    // 4 slots of 1 core, 1 GiB: a task reserves 1 core + 256 MiB = 0.02 + 0.00075 CAD an hour at the default rates.
    const job = await createJobWithFile(api, owner.token, { spendingCapCad: 0.01 });
    const w = new ProtocolWorker(api, token, 'capped box');
    await w.hello({ slots: 4, capabilities: small });
    const hour = await addTask(api, job, { name: 'an hour', requirements: { workload: 'python', timeoutSec: 3600 } }); // 0.0208 > 0.01
    expect(await w.claim({ max: 1 })).toEqual([]);
    await runTick(api.server.resources, at(api.clock.now(), 2000));
    expect((await prisma.task.findUniqueOrThrow({ where: { id: hour.id } })).statusReason).toBe(
      "Waiting: leasing it would pass the job's spending cap of 0.0100 CAD — cost so far 0.0000, in-flight work up to 0.0000, this task up to 0.0208 for its time limit of 60 min. Raise the cap, or wait for the running work to finish.",
    );
    await prisma.task.update({ where: { id: hour.id }, data: { status: 'CANCELLED' } });
    // Ten minutes each (≈ 0.0035): two fit, the third would pass 0.01 with the two in flight.
    const tenMin = { workload: 'python' as const, timeoutSec: 600 };
    const t1 = await addTask(api, job, { name: 'ten 1', requirements: tenMin });
    const t2 = await addTask(api, job, { name: 'ten 2', requirements: tenMin });
    const t3 = await addTask(api, job, { name: 'ten 3', requirements: tenMin });
    const got = await w.claim({ max: 4 });
    expect(got.map((a) => a.task.id).sort()).toEqual([t1.id, t2.id].sort());
    await runTick(api.server.resources, at(api.clock.now(), 2000));
    expect((await prisma.task.findUniqueOrThrow({ where: { id: t3.id } })).statusReason).toMatch(
      /^Waiting: leasing it would pass the job's spending cap of 0\.0100 CAD — cost so far 0\.0000, in-flight work up to 0\.00\d+, this task up to 0\.0035/,
    );
    // The in-flight work finishes (its usage is what it really cost): the third fits now.
    for (const a of got) await w.complete(a, { exitCode: 0 });
    const [a3] = await w.claim({ max: 1 });
    expect(a3!.task.id).toBe(t3.id);
    await w.complete(a3!, { exitCode: 0 });
    // A job without a cap is never held back.
    const free = await createJobWithFile(api, owner.token);
    const big = await addTask(api, free, { name: 'uncapped day', requirements: { workload: 'python', timeoutSec: 86400 } });
    expect((await w.claim({ max: 1 }))[0]!.task.id).toBe(big.id);
  });

  it("a capped job's queued tasks its cap cannot pay for now — more of them than a claim reads of one owner — do not hide the same owner's other jobs", async () => {
    const capped = await createJobWithFile(api, owner.token, { spendingCapCad: 0.01 });
    const w = new ProtocolWorker(api, token, 'head box');
    await w.hello({ slots: 1, capabilities: small });
    // 40 tasks of an hour each (0.0208 CAD > the 0.01 cap), older than the other job's task: a
    // claim reads at most 32 tasks per owner (db/sql/claimTasks.ts heads).
    for (let i = 0; i < 40; i++)
      await addTask(api, capped, { name: `an hour ${i}`, requirements: { workload: 'python', timeoutSec: 3600 } });
    const other = await createJobWithFile(api, owner.token);
    const behind = await addTask(api, other, { name: 'behind them', requirements: { workload: 'python', timeoutSec: 60 } });
    const [a] = await w.claim({ max: 1 });
    expect(a?.task.id).toBe(behind.id);
    await w.complete(a!, { exitCode: 0 });
    await prisma.task.updateMany({ where: { jobId: capped.jobId }, data: { status: 'CANCELLED' } });
    await prisma.worker.update({ where: { id: w.workerId }, data: { status: 'OFFLINE' } });
  });

  it('a tick past enough time stops the job, cancels its tasks, and the next heartbeat gets CANCEL', async () => {
    const { job, task, w, a } = await runningAttempt('capped');
    const before = await runTick(api.server.resources, at(api.clock.now(), 1000));
    expect(before.stopped).toBe(0);
    const r = await runTick(api.server.resources, at(api.clock.now(), 30 * 60_000)); // within the 1 h lease
    expect(r).toMatchObject({ stopped: 1, lost: 0 });
    const j = await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } });
    expect(j.status).toBe('STOPPED');
    expect(j.statusReason).toMatch(/spending cap/);
    expect(Number(j.costCad)).toBeGreaterThanOrEqual(0.0001);
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('CANCELLED');
    const hb = await w.heartbeat([a]);
    expect(hb.renewed).toEqual([]);
    expect(hb.orders).toContainEqual(expect.objectContaining({ kind: 'CANCEL', attemptId: a.attemptId }));
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a.attemptId } })).status).toBe('CANCELLED');
    expect((await w.complete(a, { exitCode: 0 })).__typename).toBe('StaleAttemptError');
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).result).toBeNull();
  });

  it('with ticks every few seconds, small usage intervals still add up to the cap (job cost = sum of its billable usage entries)', async () => {
    const { job } = await runningAttempt('small steps');
    let now = api.clock.now();
    let stoppedAfter = 0;
    for (let i = 1; i <= 60; i++) {
      now = at(now, api.config.scheduler.tickIntervalSec * 1000);
      const r = await runTick(api.server.resources, now);
      if (r.stopped) {
        stoppedAfter = i;
        break;
      }
    }
    const c = await costs(job.jobId);
    // 1 core + 1 GiB ≈ 0.023 CAD/h: the cap of 0.0001 CAD is about 16 s of running; usage is
    // billed at least once a minute, so the cap stops the job at the first minute's bill.
    expect(stoppedAfter, `cost so far ${JSON.stringify(c)}`).toBeGreaterThan(0);
    expect(stoppedAfter * api.config.scheduler.tickIntervalSec * 1000).toBeLessThanOrEqual(
      MIN_INTERVAL_MS + api.config.scheduler.tickIntervalSec * 1000,
    );
    expect(c.job).toBeCloseTo(c.entries, 4);
    expect((await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } })).status).toBe('STOPPED');
  });
});

describe('an outage: no API process ran the tick', async () => {
  const api = await startTestApi();
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const w = new ProtocolWorker(api, token, 'through the outage');
  await w.hello({ slots: 4 });
  const job = await createJobWithFile(api, owner.token);
  const leaseMs = api.config.scheduler.leaseSec * 1000;
  const moveClockTo = (d: Date) => api.clock.advance(d.getTime() - api.clock.now().getTime());

  it('leases that ran out during it get a fresh lease when an API starts (before the first tick); the worker renews and completes', async () => {
    const task = await addTask(api, job, { name: 'long run' });
    const [a] = await w.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    await w.heartbeat([a!]);
    const t0 = api.clock.now();
    await runTick(api.server.resources, t0); // the last tick before every API process went away
    const restart = at(t0, leaseMs + 60_000);
    const res = await resumeAfterOutage(api.server.resources, restart);
    expect(res).toEqual({ resumed: 1, outageMs: leaseMs + 60_000 });
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a!.attemptId } })).leaseExpiresAt.getTime()).toBe(
      restart.getTime() + leaseMs,
    );
    expect(await runTick(api.server.resources, at(restart, 1000))).toMatchObject({ ran: true, lost: 0 });
    moveClockTo(at(restart, 5000)); // the worker reconnects with backoff
    expect((await w.heartbeat([a!])).renewed).toEqual([a!.attemptId]);
    expect((await w.complete(a!, { exitCode: 0 })).status).toBe('SUCCEEDED');
  });

  it('without an outage (ticks ran, the worker did not renew) nothing is resumed and the expired lease is lost', async () => {
    const task = await addTask(api, job, { name: 'silent worker' });
    const [a] = await w.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    const lease = (await prisma.attempt.findUniqueOrThrow({ where: { id: a!.attemptId } })).leaseExpiresAt;
    await runTick(api.server.resources, at(lease, 2000)); // ticks kept running: the lease is lost
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a!.attemptId } })).status).toBe('LOST');
    expect(await resumeAfterOutage(api.server.resources, at(lease, 3000))).toEqual({ resumed: 0, outageMs: null });
    moveClockTo(at(lease, 3000));
    expect((await w.heartbeat([a!])).renewed).toEqual([]);
  });
});
