/**
 * Races on real PostgreSQL, each interleaved deterministically (a transaction on its own
 * connection holds a row lock while the code under test runs into it; nothing sleeps for
 * an outcome) and each failing on the read-then-write or tick-only code it replaces:
 *   - writers of Worker.status (heartbeat, hello, resume) never overwrite a pause or an
 *     OFFLINE committed between their read and their write;
 *   - an expired lease is expired with no tick running: renewals, completions, logs and
 *     metrics are refused (STALE, recorded), and the tick that comes later ends the attempt
 *     STALE, not LOST; a late report racing the tick's uncommitted LOST ends it STALE too;
 *   - an attempt's outputs are only blobs uploaded for that attempt;
 *   - a cancelled attempt gets its final usage entry;
 *   - lost leases and infrastructure errors wait by the same exponential backoff;
 *   - a cancel and a completion of the same job never deadlock (the job row's lock).
 * The scheduler is not started in any of these suites (startTestApi's default).
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from './helpers/api.js';
import { addTask, createJobWithFile, createWorkerToken, ProtocolWorker, workerGid, type Assignment } from './helpers/protocolClient.js';
import { retryBackoffSec } from '../src/domain/leases/retryBackoff.js';
import { runTick } from '../src/scheduler/tick.js';

const at = (d: Date | string, plusMs: number) => new Date(new Date(d).getTime() + plusMs);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A second connection that holds row locks in an open transaction. */
async function lockHolder(api: TestApi) {
  const c = new pg.Client({ connectionString: api.databaseUrl });
  await c.connect();
  await c.query('BEGIN');
  return {
    query: (sql: string, params: unknown[] = []) => c.query(sql, params),
    /** Resolves once at least `n` other sessions of this database wait on a lock. */
    async waiters(n: number) {
      for (let i = 0; i < 1000; i++) {
        // Activity statistics are snapshotted per transaction: drop the snapshot each time.
        await c.query('SELECT pg_stat_clear_snapshot()');
        const r = await c.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        if (r.rows[0].n >= n) return;
        await sleep(10);
      }
      const act = await c.query(
        `SELECT wait_event_type, wait_event, state, left(query, 120) AS q FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      throw new Error(`fewer than ${n} sessions waiting on a lock: ${JSON.stringify(act.rows)}`);
    },
    async commit() {
      await c.query('COMMIT');
      await c.end();
    },
  };
}

const PAUSE = `mutation($id: ID!) { pauseWorker(id: $id) { __typename ... on Worker { status } ... on Error { code } } }`;
const RESUME = `mutation($id: ID!) { resumeWorker(id: $id) { __typename ... on Worker { status } ... on Error { code } } }`;

describe('writers of a worker status never overwrite a status committed between their read and their write', async () => {
  const api = await startTestApi();
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const statusOf = async (w: ProtocolWorker) => (await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).status;

  /**
   * The owner's pause and `other` both run into the worker's row lock, the pause first: `other`
   * reads the status before the pause commits and writes after it.
   */
  async function pauseRacing<T>(w: ProtocolWorker, other: () => Promise<T>) {
    const lock = await lockHolder(api);
    let pause!: Promise<any>;
    let result!: Promise<T>;
    try {
      await lock.query(`SELECT id FROM "Worker" WHERE id = $1 FOR UPDATE`, [w.workerId]);
      pause = api.gql(PAUSE, { id: workerGid(w.workerId) }, owner.token);
      await lock.waiters(1);
      result = other();
      await lock.waiters(2);
    } finally {
      await lock.commit();
    }
    expect((await pause).data.pauseWorker.status).toBe('PAUSED');
    return result;
  }

  it('a heartbeat that read ONLINE does not undo the owner’s pause that commits before its write', async () => {
    const w = new ProtocolWorker(api, token, 'hb-vs-pause');
    await w.hello();
    const beat = await pauseRacing(w, () => w.heartbeat([]));
    expect(await statusOf(w)).toBe('PAUSED');
    expect(beat.status).toBe('PAUSED');
    expect(beat.orders).toContainEqual({ kind: 'PAUSE', attemptId: null, reason: null });
  });

  it('a hello that read OFFLINE does not undo a pause that commits before its write', async () => {
    const w = new ProtocolWorker(api, token, 'hello-vs-pause');
    await w.hello();
    await prisma.worker.update({ where: { id: w.workerId }, data: { status: 'OFFLINE' } });
    const hello = await pauseRacing(w, () => w.hello());
    expect(hello.worker.status).toBe('PAUSED');
    expect(await statusOf(w)).toBe('PAUSED');
  });

  it('a resume that read ONLINE does not write ONLINE over an OFFLINE committed before its write', async () => {
    const w = new ProtocolWorker(api, token, 'resume-vs-offline');
    await w.hello();
    const lock = await lockHolder(api);
    let resume!: Promise<any>;
    try {
      // The tick's write (silent worker → OFFLINE), not yet committed.
      await lock.query(`UPDATE "Worker" SET status = 'OFFLINE' WHERE id = $1`, [w.workerId]);
      resume = api.gql(RESUME, { id: workerGid(w.workerId) }, owner.token);
      // A resume that writes waits for the row; a conditional one that matches nothing need not.
      await Promise.race([resume, lock.waiters(1)]);
    } finally {
      await lock.commit();
    }
    expect((await resume).data.resumeWorker.__typename).toBe('Worker');
    expect(await statusOf(w)).toBe('OFFLINE');
    // A resume of a paused worker still resumes it.
    await api.gql(PAUSE, { id: workerGid(w.workerId) }, owner.token);
    expect((await api.gql(RESUME, { id: workerGid(w.workerId) }, owner.token)).data.resumeWorker.status).toBe('ONLINE');
  });
});

describe('an expired lease is expired even when no tick runs', async () => {
  const api = await startTestApi();
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const w = new ProtocolWorker(api, token, 'late');
  await w.hello({ slots: 4 });
  const job = await createJobWithFile(api, owner.token);
  const leaseMs = api.config.scheduler.leaseSec * 1000;

  async function expiredAttempt(name: string) {
    const task = await addTask(api, job, { name, maxAttempts: 1 });
    const [a] = await w.claim();
    expect(a!.task.id).toBe(task.id);
    expect((await w.heartbeat([a!])).renewed).toEqual([a!.attemptId]);
    // Past the lease; the scheduler is not running, so nothing marks the attempt LOST.
    api.clock.advance(leaseMs + 5_000);
    return { task, a: a! };
  }
  const reports = (attemptId: string) => prisma.staleReport.findMany({ where: { attemptId }, orderBy: { createdAt: 'asc' } });
  const statusOf = async (attemptId: string) => (await prisma.attempt.findUniqueOrThrow({ where: { id: attemptId } })).status;

  it('a heartbeat does not renew it: CANCEL "its lease expired", recorded; the tick then ends it as usual', async () => {
    const { task, a } = await expiredAttempt('no renewal');
    const hb = await w.heartbeat([a]);
    expect(hb.renewed).toEqual([]);
    expect(hb.orders).toContainEqual({ kind: 'CANCEL', attemptId: a.attemptId, reason: 'its lease expired' });
    expect((await reports(a.attemptId)).map((r) => r.kind)).toEqual(['heartbeat']);
    const attempt = await prisma.attempt.findUniqueOrThrow({ where: { id: a.attemptId } });
    expect(attempt.leaseExpiresAt.getTime()).toBeLessThan(api.clock.now().getTime());
    // When the tick comes, the task is handled as usual (out of attempts here), and the
    // attempt, already reported on late, ends STALE (not LOST: its worker came back).
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ lost: 1, failed: 1 });
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('FAILED');
    expect(await statusOf(a.attemptId)).toBe('STALE');
  });

  it('a completion is refused as STALE and recorded; the task keeps no result', async () => {
    const { task, a } = await expiredAttempt('late completion');
    const done = await w.complete(a, { exitCode: 0, metrics: { late: 1 } });
    expect(done).toMatchObject({ __typename: 'StaleAttemptError', attemptId: a.attemptId, reason: 'its lease expired' });
    const t = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(t.result).toBeNull();
    expect(t.status).toBe('RUNNING'); // the tick, when it runs, marks the attempt LOST and retries
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a.attemptId } })).status).toBe('RUNNING');
    expect((await reports(a.attemptId)).map((r) => [r.kind, (r.detail as any).reason])).toEqual([['complete', 'its lease expired']]);
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ lost: 1, failed: 1 });
    expect(await statusOf(a.attemptId)).toBe('STALE');
  });

  it('logs and metrics are refused as STALE and recorded; nothing is stored', async () => {
    const { a } = await expiredAttempt('late reports');
    expect(await w.appendLogs(a, [{ seq: 0, text: 'too late' }])).toMatchObject({
      __typename: 'StaleAttemptError',
      reason: 'its lease expired',
    });
    expect(await w.reportMetrics(a, [{ seq: 0, name: 'loss', value: 1 }])).toMatchObject({
      __typename: 'StaleAttemptError',
      reason: 'its lease expired',
    });
    expect(await prisma.logChunk.count({ where: { attemptId: a.attemptId } })).toBe(0);
    expect(await prisma.metricPoint.count({ where: { attemptId: a.attemptId } })).toBe(0);
    expect((await reports(a.attemptId)).map((r) => r.kind).sort()).toEqual(['logs', 'metrics']);
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ lost: 1 });
    expect(await statusOf(a.attemptId)).toBe('STALE');
  });

  it('an attempt nobody reported on after expiry ends LOST', async () => {
    const { a } = await expiredAttempt('silent');
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ lost: 1 });
    expect(await statusOf(a.attemptId)).toBe('LOST');
    expect(await reports(a.attemptId)).toEqual([]);
  });

  it('a late heartbeat and a late completion that read RUNNING while the tick’s LOST was uncommitted end the attempt STALE', async () => {
    for (const report of ['heartbeat', 'complete'] as const) {
      const { a } = await expiredAttempt(`racing the tick: ${report}`);
      // The tick has written LOST and not committed; the report reads the committed RUNNING.
      const tick = await lockHolder(api);
      let result!: Promise<any>;
      try {
        await tick.query(`UPDATE "Attempt" SET status = 'LOST' WHERE id = $1`, [a.attemptId]);
        result = report === 'heartbeat' ? w.heartbeat([a]) : w.complete(a, { exitCode: 0 });
        await tick.waiters(1);
      } finally {
        await tick.commit();
      }
      const r = await result;
      if (report === 'heartbeat') expect(r.orders).toContainEqual({ kind: 'CANCEL', attemptId: a.attemptId, reason: 'its lease expired' });
      else expect(r).toMatchObject({ __typename: 'StaleAttemptError', reason: expect.stringMatching(/^its lease expired/) });
      expect((await reports(a.attemptId)).map((x) => x.kind)).toEqual([report]);
      expect(await statusOf(a.attemptId)).toBe('STALE');
    }
  });
});

describe('an attempt lists as outputs only blobs uploaded for it', async () => {
  const api = await startTestApi({ LEASE_SEC: '3600' });
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const victim = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const otherToken = await createWorkerToken(api, victim.token, 'other');
  const w = new ProtocolWorker(api, token, 'uploader');
  await w.hello({ slots: 4 });
  const job = await createJobWithFile(api, owner.token);

  const put = async (content: string, bearer: string, attemptId?: string) => api.putBlob(content, bearer, undefined, attemptId);
  async function running(name: string): Promise<Assignment> {
    await addTask(api, job, { name });
    const [a] = await w.claim();
    await w.heartbeat([a!]);
    return a!;
  }

  it('someone else’s existing blob → ValidationError, the attempt stays RUNNING and the owner still cannot read the blob', async () => {
    const secret = await put(`victim's private file ${Math.random()}`, victim.token);
    expect(secret.status).toBe(201);
    const a = await running('steal');
    const r = await w.complete(a, { exitCode: 0, outputs: [{ path: 'out/loot.bin', sha256: secret.sha256 }] });
    expect(r.__typename).toBe('ValidationError');
    expect(r.message).toMatch(/was not uploaded for this attempt/);
    expect(r.issues).toEqual([{ path: ['outputs', '0', 'sha256'], message: 'not uploaded for this attempt' }]);
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a.attemptId } })).status).toBe('RUNNING');
    expect((await api.getBlob(secret.sha256, owner.token)).status).toBe(404);
    // The same worker uploading without naming the attempt does not make it an output either.
    expect((await put('plain upload', token)).status).toBe(201);
    const plain = await w.complete(a, { exitCode: 0, outputs: [{ path: 'p.txt', sha256: (await put('plain upload', token)).sha256 }] });
    expect(plain.__typename).toBe('ValidationError');
  });

  it('a blob uploaded for another attempt → ValidationError; uploaded for this one → accepted and readable by the owner', async () => {
    const first = await running('first');
    const second = await running('second');
    const forFirst = await put(`output of first ${Math.random()}`, token, first.attemptId);
    expect(forFirst.status).toBe(201);
    const wrong = await w.complete(second, { exitCode: 0, outputs: [{ path: 'o.txt', sha256: forFirst.sha256 }] });
    expect(wrong.__typename).toBe('ValidationError');
    const ok = await w.complete(first, { exitCode: 0, outputs: [{ path: 'o.txt', sha256: forFirst.sha256 }] });
    expect(ok).toMatchObject({ __typename: 'Attempt', status: 'SUCCEEDED', outputs: [{ path: 'o.txt', sha256: forFirst.sha256 }] });
    expect((await api.getBlob(forFirst.sha256, owner.token)).status).toBe(200);
    expect(await prisma.attemptUpload.count({ where: { attemptId: first.attemptId } })).toBe(1);
  });

  it('naming an attempt that is not a live attempt of this worker token → 404 and nothing recorded; a user token → 403', async () => {
    const a = await running('guarded');
    const other = new ProtocolWorker(api, otherToken, 'intruder');
    await other.hello();
    expect((await put('from another token', otherToken, a.attemptId)).status).toBe(404);
    expect((await put('malformed id', token, 'not-a-uuid')).status).toBe(404);
    expect((await put('user with header', owner.token, a.attemptId)).status).toBe(403);
    expect(await prisma.attemptUpload.count({ where: { attemptId: a.attemptId } })).toBe(0);
    await w.complete(a, { exitCode: 0 });
    const after = await put('after it finished', token, a.attemptId);
    expect(after.status).toBe(404);
    expect(after.body.error.code).toBe('NOT_FOUND');
    expect(await prisma.attemptUpload.count({ where: { attemptId: a.attemptId } })).toBe(0);
  });
});

describe('a cancelled attempt gets its final usage entry', async () => {
  const api = await startTestApi({ LEASE_SEC: '7200', WORKER_OFFLINE_SEC: '7200' });
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const w = new ProtocolWorker(api, token, 'billed');
  await w.hello({ slots: 4 });

  async function runningFor(ms: number) {
    const job = await createJobWithFile(api, owner.token);
    const task = await addTask(api, job, { name: 'long' });
    const [a] = await w.claim();
    expect(a!.task.id).toBe(task.id);
    await w.heartbeat([a!]);
    const started = (await prisma.attempt.findUniqueOrThrow({ where: { id: a!.attemptId } })).startedAt!;
    api.clock.advance(ms);
    return { job, task, a: a!, started };
  }
  const entries = (attemptId: string) => prisma.usageEntry.findMany({ where: { attemptId }, orderBy: { periodEnd: 'asc' } });

  it('the owner cancels: the attempt is CANCELLED at once with usage up to the cancel; the worker is told; nothing more accrues', async () => {
    const { job, a, started } = await runningFor(30 * 60_000);
    const cancelledAt = api.clock.now();
    const r = await api.gql(`mutation($id: ID!) { cancelJob(id: $id) { __typename ... on Job { status } } }`, { id: job.gid }, owner.token);
    expect(r.data.cancelJob.status).toBe('CANCELLED');
    const attempt = await prisma.attempt.findUniqueOrThrow({ where: { id: a.attemptId } });
    expect(attempt).toMatchObject({ status: 'CANCELLED', errorClass: 'CANCELLED' });
    const e = await entries(a.attemptId);
    expect(e.length).toBeGreaterThan(0);
    expect(e[0]!.periodStart.getTime()).toBe(started.getTime());
    const end = e.at(-1)!.periodEnd.getTime();
    expect(end).toBeGreaterThanOrEqual(cancelledAt.getTime());
    expect(end).toBe(attempt.finishedAt!.getTime());
    const cost = Number((await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } })).costCad);
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeCloseTo(
      e.reduce((s, x) => s + Number(x.costCad), 0),
      6,
    );
    // The worker's next heartbeat is told to stop; a later tick bills nothing more.
    const hb = await w.heartbeat([a]);
    expect(hb.orders).toContainEqual(expect.objectContaining({ kind: 'CANCEL', attemptId: a.attemptId }));
    await runTick(api.server.resources, at(api.clock.now(), 60 * 60_000));
    expect(await entries(a.attemptId)).toHaveLength(e.length);
  });

  it('a task cancelled without its attempt (another path): the heartbeat cancels the attempt with its final usage', async () => {
    const { task, a, started } = await runningFor(20 * 60_000);
    await prisma.task.update({ where: { id: task.id }, data: { status: 'CANCELLED' } });
    const hbAt = api.clock.now();
    const hb = await w.heartbeat([a]);
    expect(hb.orders).toContainEqual(expect.objectContaining({ kind: 'CANCEL', attemptId: a.attemptId }));
    const attempt = await prisma.attempt.findUniqueOrThrow({ where: { id: a.attemptId } });
    expect(attempt.status).toBe('CANCELLED');
    const e = await entries(a.attemptId);
    expect(e).toHaveLength(1);
    expect(e[0]!.periodStart.getTime()).toBe(started.getTime());
    expect(e[0]!.periodEnd.getTime()).toBeGreaterThanOrEqual(hbAt.getTime());
    expect(Number(e[0]!.costCad)).toBeGreaterThan(0);
  });
});

describe('retry backoff: one exponential rule for lost leases and infrastructure errors', async () => {
  const base = 7;
  const api = await startTestApi({ RETRY_BASE_SEC: String(base) });
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const w = new ProtocolWorker(api, token, 'retrier');
  await w.hello({ slots: 4 });
  const job = await createJobWithFile(api, owner.token);

  it('the rule: base, 2×base, 4×base, … capped at 10 minutes', () => {
    expect([1, 2, 3, 4].map((n) => retryBackoffSec(base, n))).toEqual([7, 14, 28, 56]);
    expect(retryBackoffSec(base, 20)).toBe(600);
  });

  /** Claims the task again once its runAfter is due (moving the server's clock, never sleeping). */
  async function claimWhenDue(taskId: string) {
    const t = await prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    api.clock.advance(Math.max(t.runAfter.getTime() - api.clock.now().getTime() + 1000, 0));
    const [a] = await w.claim();
    expect(a!.task.id).toBe(taskId);
    return a!;
  }
  const waitAfter = async (taskId: string, from: Date) =>
    ((await prisma.task.findUniqueOrThrow({ where: { id: taskId } })).runAfter.getTime() - from.getTime()) / 1000;

  it('an infrastructure error on the second attempt waits 2×base, like a second lost lease', async () => {
    // Infrastructure errors: attempt 1 then attempt 2.
    const infra = await addTask(api, job, { name: 'infra', maxAttempts: 4 });
    const i1 = await claimWhenDue(infra.id);
    let now = api.clock.now();
    expect(await w.complete(i1, { exitCode: null, errorClass: 'WORKER_ERROR', errorMessage: 'disk full' })).toMatchObject({
      status: 'FAILED',
    });
    expect(await waitAfter(infra.id, now)).toBeCloseTo(retryBackoffSec(base, 1), 0);
    const i2 = await claimWhenDue(infra.id);
    expect(i2.number).toBe(2);
    now = api.clock.now();
    await w.complete(i2, { exitCode: null, errorClass: 'DOWNLOAD_FAILED' });
    const infraWait = await waitAfter(infra.id, now);
    expect(infraWait).toBeCloseTo(2 * base, 0);
    expect((await prisma.task.findUniqueOrThrow({ where: { id: infra.id } })).statusReason).toMatch(new RegExp(`retrying in ${2 * base}s`));
    await prisma.task.update({ where: { id: infra.id }, data: { status: 'CANCELLED' } }); // out of the way of the next claims

    // Lost leases: attempt 1 then attempt 2, each expired by a tick.
    const lost = await addTask(api, job, { name: 'lost', maxAttempts: 4 });
    const l1 = await claimWhenDue(lost.id);
    let tickAt = at(l1.leaseExpiresAt, 1000);
    await runTick(api.server.resources, tickAt);
    expect(await waitAfter(lost.id, tickAt)).toBe(retryBackoffSec(base, 1));
    const l2 = await claimWhenDue(lost.id);
    expect(l2.number).toBe(2);
    tickAt = at(l2.leaseExpiresAt, 1000);
    await runTick(api.server.resources, tickAt);
    expect(await waitAfter(lost.id, tickAt)).toBe(2 * base);
    expect(infraWait).toBeCloseTo(2 * base, 0); // the same rule on both paths
  });
});

describe('a cancel and a completion of the same job at once', async () => {
  const api = await startTestApi();
  const owner = await api.signUp();

  it('do not deadlock: the completion records its job event while the cancel holds the job row', async () => {
    const job = await createJobWithFile(api, owner.token);
    const task = await addTask(api, job, { name: 'racing' });
    // The completion's lock order (completeAttempt.ts): the attempt and task rows, then its job
    // events, whose foreign key needs a share lock on the job row.
    const completion = await lockHolder(api);
    await completion.query(`SELECT id FROM "Task" WHERE id = $1 FOR UPDATE`, [task.id]);
    // The cancel's order: the job row (the engine's transition), then the job's tasks.
    const cancelling = api.gql(
      `mutation($id: ID!) { cancelJob(id: $id) { __typename ... on Job { status } ... on Error { code message } } }`,
      { id: job.gid },
      owner.token,
    );
    await completion.waiters(1); // the cancel now waits on the task row
    // With the job row locked FOR UPDATE this insert waits on the cancel, which waits on it:
    // PostgreSQL aborts one of them (deadlock detected). FOR NO KEY UPDATE lets it through.
    await completion.query(`INSERT INTO "JobEvent" ("jobId", kind, payload) VALUES ($1, 'task.status', '{}')`, [job.jobId]);
    await completion.commit();
    const r = await cancelling;
    expect(r.errors).toBeUndefined();
    expect(r.data.cancelJob).toEqual({ __typename: 'Job', status: 'CANCELLED' });
  });
});
