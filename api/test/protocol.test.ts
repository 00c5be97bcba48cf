/**
 * The worker protocol (docs/architecture.md §5) over real GraphQL HTTP with worker tokens, on real
 * PostgreSQL: hello / pause / resume, the happy path of one attempt (claim, heartbeat,
 * logs, metrics, outputs, completion, usage), long-poll claims, and bad input from a
 * worker (invariant 9: typed errors, nothing corrupted). Leases, ticks, concurrency,
 * eligibility and spending caps are in scheduler.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256, startTestApi } from './helpers/api.js';
import { subscribe } from './helpers/ws.js';
import { claim } from '../src/domain/leases/claim.js';
import { dispatcherFor } from '../src/domain/leases/dispatcher.js';
import {
  addTask,
  CPU_CAPS,
  createJobWithFile,
  createWorkerToken,
  ProtocolWorker as TestWorker,
  workerGid,
} from './helpers/protocolClient.js';
import { waitFor } from './helpers/waitFor.js';

/**
 * How each of a claim's waits ended: woken by an event, aborted (the claim returned), or
 * timed out. A wake-up that was missed shows as a timeout — no clock in the assertion.
 */
type WaitSource = Parameters<typeof claim>[1];
type RecordingWake = WaitSource & { ends: ('event' | 'aborted' | 'timeout')[]; readonly waiting: boolean };
function recordingWake(source: WaitSource): RecordingWake {
  const ends: ('event' | 'aborted' | 'timeout')[] = [];
  let waits = 0;
  return {
    ends,
    get waiting() {
      return waits > ends.length;
    },
    async waitFor(filter, ms, signal) {
      waits++;
      const woken = await source.waitFor(filter, ms, signal);
      ends.push(woken ? 'event' : signal?.aborted ? 'aborted' : 'timeout');
      return woken;
    },
  };
}

const PAUSE = `mutation($id: ID!) { pauseWorker(id: $id) { __typename ... on Worker { status } ... on Error { code } } }`;
const RESUME = `mutation($id: ID!) { resumeWorker(id: $id) { __typename ... on Worker { status } ... on Error { code } } }`;

describe('workerHello, pause and resume', async () => {
  const api = await startTestApi();
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const w = new TestWorker(api, token, 'desk box');

  it('hello → ONLINE with its capabilities, visible to its owner; a second hello reuses the row', async () => {
    const h = await w.hello({ slots: 2, capabilities: CPU_CAPS });
    expect(h.__typename).toBe('WorkerHelloResult');
    expect(h.workerId).toMatch(/^[0-9a-f-]{36}$/);
    expect(h.leaseSec).toBe(api.config.scheduler.leaseSec);
    expect(h.heartbeatIntervalSec).toBe(api.config.scheduler.heartbeatSec);
    expect(h.worker).toMatchObject({ name: 'desk box', status: 'ONLINE', slots: 2, workloads: CPU_CAPS.workloads });
    expect(h.worker.capabilities.cpu).toEqual(CPU_CAPS.cpu);

    const listed = await api.gql(
      `{ workers { totalCount edges { node { id name status slots workloads capabilities } } } }`,
      {},
      owner.token,
    );
    expect(listed.data.workers.totalCount).toBe(1);
    const node = listed.data.workers.edges[0].node;
    expect(node).toMatchObject({ name: 'desk box', status: 'ONLINE', slots: 2 });
    expect(node.capabilities.memoryMiB).toBe(CPU_CAPS.memoryMiB);

    const first = h.workerId;
    const again = await w.hello({ slots: 3, capabilities: { ...CPU_CAPS, memoryMiB: 4096 } });
    expect(again.workerId).toBe(first);
    expect(again.worker.slots).toBe(3);
    const rows = await api.server.db.prisma.worker.findMany({ where: { ownerId: owner.userId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.memoryMiB).toBe(4096);
  });

  it('hello with invalid capabilities is a ValidationError and changes nothing', async () => {
    const before = await api.server.db.prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } });
    const bad = await w.hello({ capabilities: { accelerators: [{ vendor: 'voodoo', name: 'x' }] } });
    expect(bad.__typename).toBe('ValidationError');
    const after = await api.server.db.prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } });
    expect(after).toEqual(before);
  });

  it('pauseWorker (owner) → claimTask returns [] and heartbeat answers PAUSE; resumeWorker → claims again', async () => {
    const job = await createJobWithFile(api, owner.token);
    const task = await addTask(api, job);

    const paused = await api.gql(PAUSE, { id: workerGid(w.workerId) }, owner.token);
    expect(paused.data.pauseWorker).toEqual({ __typename: 'Worker', status: 'PAUSED' });
    expect(await w.claim({ waitMs: 0, max: 1 })).toEqual([]);
    const hb = await w.heartbeat([]);
    expect(hb.status).toBe('PAUSED');
    expect(hb.orders).toContainEqual({ kind: 'PAUSE', attemptId: null, reason: null });
    expect(hb.orders.some((o: any) => o.kind === 'RESUME')).toBe(false);
    // A hello while paused does not unpause it (the owner's choice stands).
    expect((await w.hello({ slots: 3 })).worker.status).toBe('PAUSED');
    expect((await api.server.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('QUEUED');

    // A long-poll held by the paused worker is woken by the owner's resume (not by its timeout).
    const { resources } = api.server;
    const tokenId = (await resources.prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).tokenId;
    const wake = recordingWake(api.server.pubsub);
    const pendingClaim = claim(resources, wake, tokenId, w.workerId, { waitMs: 20_000, max: 1 });
    while (!wake.waiting) await new Promise((r) => setTimeout(r, 10));
    const resumed = await api.gql(RESUME, { id: workerGid(w.workerId) }, owner.token);
    expect(resumed.data.resumeWorker).toEqual({ __typename: 'Worker', status: 'ONLINE' });
    const claimed = await pendingClaim;
    expect(wake.ends).not.toContain('timeout');
    expect(claimed.map((a) => a.taskId)).toEqual([task.id]);
    const got = claimed.map((a) => ({ attemptId: a.id, fencingToken: a.fencingToken }));
    const hb2 = await w.heartbeat([{ attemptId: got[0]!.attemptId, fencingToken: got[0]!.fencingToken }]);
    expect(hb2.orders).toEqual([{ kind: 'RESUME', attemptId: null, reason: null }]);
    expect(hb2.renewed).toEqual([got[0]!.attemptId]);
  });

  it('another user cannot pause or see this worker', async () => {
    const other = await api.signUp();
    const r = await api.gql(PAUSE, { id: workerGid(w.workerId) }, other.token);
    expect(r.data.pauseWorker.__typename).toBe('NotFoundError');
    expect((await api.gql(`{ workers { totalCount } }`, {}, other.token)).data.workers.totalCount).toBe(0);
    expect((await api.server.db.prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).status).toBe('ONLINE');
  });

  it('setWorkerPaused from the machine itself pauses and resumes it', async () => {
    const q = `mutation($w: ID!, $p: Boolean!) { setWorkerPaused(workerId: $w, paused: $p) { __typename ... on Worker { status } } }`;
    expect((await w.gql(q, { w: w.workerId, p: true })).data.setWorkerPaused.status).toBe('PAUSED');
    expect((await w.heartbeat([])).orders).toContainEqual({ kind: 'PAUSE', attemptId: null, reason: null });
    expect((await w.gql(q, { w: w.workerId, p: false })).data.setWorkerPaused.status).toBe('ONLINE');
  });
});

describe('one attempt from claim to accepted result', async () => {
  const api = await startTestApi();
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const w = new TestWorker(api, token, 'runner');
  await w.hello({ slots: 1, capabilities: CPU_CAPS });
  const job = await createJobWithFile(api, owner.token, { content: 'print("train")\n' });
  const sub = subscribe(
    api.url,
    owner.token,
    `subscription($id: ID!, $after: String) { jobEvents(jobId: $id, after: $after) { __typename
      ... on LogLinesEvent { attemptId lines { seq stream text } }
      ... on MetricPointsEvent { attemptId points { seq name step value } }
      ... on JobEventEnvelope { event { kind payload } } } }`,
    { id: job.gid, after: '0' },
  );
  await sub.first; // replayed job.created: the live subscription is registered
  const task = await addTask(api, job, {
    name: 'train',
    environment: { EPOCHS: '2' },
    requirements: { workload: 'python', outputs: ['out/*'] },
  });
  let a!: Awaited<ReturnType<TestWorker['claim']>>[number];

  it('claim → an assignment with attempt id, fencing token, lease expiry and the task spec with its files', async () => {
    const before = api.clock.now().getTime();
    const got = await w.claim({ waitMs: 0, max: 4 });
    expect(got).toHaveLength(1);
    a = got[0]!;
    expect(a.attemptId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.number).toBe(1);
    expect(a.fencingToken.length).toBeGreaterThanOrEqual(16);
    const lease = new Date(a.leaseExpiresAt).getTime();
    expect(lease).toBeGreaterThanOrEqual(before + api.config.scheduler.leaseSec * 1000 - 1000);
    expect(lease).toBeLessThanOrEqual(Date.now() + api.config.scheduler.leaseSec * 1000 + 1000);
    expect(a.task).toMatchObject({
      id: task.id,
      jobId: job.jobId,
      kind: 'RUN',
      name: 'train',
      command: 'python main.py',
      environment: { EPOCHS: '2' },
    });
    expect(a.task.requirements).toMatchObject({ workload: 'python', outputs: ['out/*'] });
    expect(a.task.files).toEqual([
      { path: 'main.py', sha256: job.fileSha, size: Buffer.byteLength(job.content), mode: expect.any(Number) },
    ]);
    const t = await api.server.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(t).toMatchObject({ status: 'LEASED', currentAttemptId: a.attemptId, attemptCount: 1 });
    // Its only slot is taken: no more work for it.
    await addTask(api, job, { name: 'second' });
    expect(await w.claim({ waitMs: 0, max: 4 })).toEqual([]);
  });

  it('the worker may download the code of the task it holds (and nothing else)', async () => {
    const got = await api.getBlob(job.fileSha, token);
    expect(got.status).toBe(200);
    expect(got.bytes.toString()).toBe(job.content);
    const other = await api.putBlob('not for workers', owner.token);
    expect((await api.getBlob(other.sha256, token)).status).toBe(404);
  });

  it('heartbeat renews the lease (it moves forward) and marks the attempt RUNNING', async () => {
    const before = await api.server.db.prisma.attempt.findUniqueOrThrow({ where: { id: a.attemptId } });
    api.clock.advance(10_000);
    const hb = await w.heartbeat([a]);
    expect(hb.__typename).toBe('HeartbeatResult');
    expect(hb.renewed).toEqual([a.attemptId]);
    expect(hb.orders).toEqual([{ kind: 'RESUME', attemptId: null, reason: null }]);
    const after = await api.server.db.prisma.attempt.findUniqueOrThrow({ where: { id: a.attemptId } });
    expect(after.status).toBe('RUNNING');
    expect(after.startedAt).not.toBeNull();
    expect(after.leaseExpiresAt.getTime()).toBeGreaterThanOrEqual(before.leaseExpiresAt.getTime() + 9000);
    expect((await api.server.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('RUNNING');
  });

  it('appendLogs: ordered, idempotent when resent, and streamed on jobEvents', async () => {
    const batch1 = [0, 1, 2].map((seq) => ({ seq, text: `line ${seq}` }));
    expect(await w.appendLogs(a, batch1)).toMatchObject({ __typename: 'AppendResult', accepted: 3, lastSeq: 2 });
    expect(await w.appendLogs(a, batch1)).toMatchObject({ __typename: 'AppendResult', accepted: 0, lastSeq: 2 });
    const batch2 = [2, 3, 4].map((seq) => ({ seq, text: `line ${seq}`, stream: seq === 4 ? 'stderr' : 'stdout' }));
    expect(await w.appendLogs(a, batch2)).toMatchObject({ accepted: 2, lastSeq: 4 });
    const rows = await api.server.db.prisma.logChunk.findMany({ where: { attemptId: a.attemptId }, orderBy: { seq: 'asc' } });
    expect(rows.map((r) => [r.seq, r.stream, r.text])).toEqual([
      [0, 'stdout', 'line 0'],
      [1, 'stdout', 'line 1'],
      [2, 'stdout', 'line 2'],
      [3, 'stdout', 'line 3'],
      [4, 'stderr', 'line 4'],
    ]);
    const texts = () =>
      sub.results.filter((r) => r.jobEvents.__typename === 'LogLinesEvent').flatMap((r) => r.jobEvents.lines.map((l: any) => l.text));
    await sub.until(() => texts().length >= 5);
    expect(texts()).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4']);
    expect(sub.errors).toEqual([]);
    // The owner reads the same lines through the API.
    const q = await api.gql(
      `query($id: ID!) { job(id: $id) { tasks { name attempts { logs { seq text } } } } }`,
      { id: job.gid },
      owner.token,
    );
    const train = q.data.job.tasks.find((t: any) => t.name === 'train');
    expect(train.attempts[0].logs.map((l: any) => l.seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it('reportMetrics → MetricPoints (idempotent when resent), streamed on jobEvents', async () => {
    const points = [
      { seq: 0, name: 'loss', step: 1, value: 1.5 },
      { seq: 0, name: 'acc', step: 1, value: 0.25 },
      { seq: 1, name: 'loss', step: 2, value: 0.75 },
    ];
    expect(await w.reportMetrics(a, points)).toMatchObject({ __typename: 'AppendResult', accepted: 3, lastSeq: 1 });
    expect(await w.reportMetrics(a, points)).toMatchObject({ accepted: 0 });
    const rows = await api.server.db.prisma.metricPoint.findMany({
      where: { attemptId: a.attemptId },
      orderBy: [{ seq: 'asc' }, { name: 'asc' }],
    });
    expect(rows.map((r) => [r.seq, r.name, r.step, r.value])).toEqual([
      [0, 'acc', 1, 0.25],
      [0, 'loss', 1, 1.5],
      [1, 'loss', 2, 0.75],
    ]);
    await sub.until((rs) => rs.some((r) => r.jobEvents.__typename === 'MetricPointsEvent'));
    const ev = sub.results.find((r) => r.jobEvents.__typename === 'MetricPointsEvent').jobEvents;
    expect(ev.attemptId).toBe(a.attemptId);
    expect(ev.points).toHaveLength(3);
  });

  it('completeAttempt with uploaded outputs → task SUCCEEDED, outputs byte-identical for the owner, usage and cost recorded', async () => {
    const bytes = randomBytes(5000);
    const up = await api.putBlob(bytes, token, undefined, a.attemptId); // an output names its attempt
    expect(up.status).toBe(201);
    // Ran for a while (the server's clock moves; nothing sleeps), renewing its lease in time.
    const step = (api.config.scheduler.leaseSec * 1000) / 2;
    for (let i = 0; i < 8; i++) {
      api.clock.advance(step);
      expect((await w.heartbeat([a])).renewed).toEqual([a.attemptId]);
    }
    api.clock.advance(step);
    const done = await w.complete(a, { exitCode: 0, outputs: [{ path: 'out/model.bin', sha256: up.sha256 }], metrics: { loss: 0.75 } });
    expect(done).toMatchObject({ __typename: 'Attempt', status: 'SUCCEEDED', exitCode: 0, errorClass: null });
    expect(done.outputs).toEqual([{ path: 'out/model.bin', sha256: up.sha256, size: 5000 }]);

    const t = await api.server.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(t.status).toBe('SUCCEEDED');
    expect(t.finishedAt).not.toBeNull();
    expect(t.result).toMatchObject({
      attemptId: a.attemptId,
      exitCode: 0,
      metrics: { loss: 0.75 },
      outputs: [{ path: 'out/model.bin', sha256: up.sha256, size: 5000 }],
    });

    const dl = await api.getBlob(up.sha256, owner.token);
    expect(dl.status).toBe(200);
    expect(sha256(dl.bytes)).toBe(sha256(bytes));
    expect(Buffer.compare(dl.bytes, bytes)).toBe(0);
    // Another user cannot; the worker no longer holds a lease on this task's code.
    const stranger = await api.signUp();
    expect((await api.getBlob(up.sha256, stranger.token)).status).toBe(404);
    expect((await api.getBlob(job.fileSha, token)).status).toBe(404);

    const usage = await api.server.db.prisma.usageEntry.findMany({ where: { attemptId: a.attemptId } });
    expect(usage.length).toBeGreaterThanOrEqual(1);
    expect(usage.reduce((s, u) => s + u.cpuCoreHours, 0)).toBeGreaterThan(0);
    const q = await api.gql(`query($id: ID!) { job(id: $id) { costCad tasks { name status result } } }`, { id: job.gid }, owner.token);
    expect(q.data.job.costCad).toBeGreaterThan(0);
    expect(q.data.job.tasks.find((x: any) => x.name === 'train')).toMatchObject({ status: 'SUCCEEDED' });

    await sub.until((rs) => rs.some((r) => r.jobEvents.event?.kind === 'task.status' && r.jobEvents.event.payload.status === 'SUCCEEDED'));
    const kinds = sub.results
      .map((r) => r.jobEvents.event)
      .filter(Boolean)
      .map((e: any) => `${e.kind}:${e.payload.status ?? ''}`);
    expect(kinds).toEqual(expect.arrayContaining(['attempt.status:LEASED', 'attempt.status:SUCCEEDED', 'task.status:SUCCEEDED']));
    await sub.close();
  });

  it('the slot is free again: the worker claims the next task', async () => {
    const got = await w.claim({ waitMs: 0, max: 1 });
    expect(got.map((x) => x.task.name)).toEqual(['second']);
    expect(got[0]!.attemptId).not.toBe(a.attemptId);
  });
});

describe('long-poll claims', async () => {
  const api = await startTestApi();
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const w = new TestWorker(api, token, 'poller');
  await w.hello({ slots: 64, capabilities: CPU_CAPS });
  const job = await createJobWithFile(api, owner.token);

  const { pubsub, resources } = api.server;
  const tokenId = (await resources.prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).tokenId;
  const claimWith = (wake: RecordingWake, waitMs: number) => claim(resources, wake, tokenId, w.workerId, { waitMs, max: 1 });

  it('a waiting claim is woken by createTask (NOTIFY), not by its timeout', async () => {
    const wake = recordingWake(pubsub);
    const pending = claimWith(wake, 20_000);
    while (!wake.waiting) await new Promise((r) => setTimeout(r, 10)); // the claim is now waiting
    await new Promise((r) => setTimeout(r, 200)); // …past its first, empty query
    const task = await addTask(api, job, { name: 'late' });
    const got = await pending;
    expect(got.map((x) => x.taskId)).toEqual([task.id]);
    expect(wake.ends).not.toContain('timeout');
    expect(wake.ends).toContain('event');
  });

  it('with no work it returns [] when waitMs has passed, not before', async () => {
    const wake = recordingWake(pubsub);
    const t0 = Date.now();
    expect(await claimWith(wake, 600)).toEqual([]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(550); // a lower bound: it must not give up early
    expect(wake.ends.at(-1)).toBe('timeout');
    // And over GraphQL, the same answer.
    expect(await w.claim({ waitMs: 300, max: 1 })).toEqual([]);
  });

  it('never misses a wake-up: tasks created right as claims start are all handed out without waiting out the timeout', async () => {
    for (let i = 0; i < 15; i++) {
      const wake = recordingWake(pubsub);
      const pending = claimWith(wake, 20_000);
      // Vary the moment of the insert around the claim's own first query.
      await new Promise((r) => setTimeout(r, i % 5));
      const task = await addTask(api, job, { name: `burst ${i}` });
      const got = await pending;
      expect(got.map((x) => x.taskId)).toEqual([task.id]);
      expect(wake.ends, `claim ${i}`).not.toContain('timeout');
    }
  });

  it('no lost wake-up: a task committed between the empty claim query and the wait is still handed out at once', async () => {
    // Deterministic interleaving: the claim's own query returns "nothing", and only then
    // (before claim() goes on to wait) a task is created and its NOTIFY delivered.
    const row = await resources.prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } });
    let injected: Promise<string> | null = null;
    const prisma = new Proxy(resources.prisma, {
      get(target, key) {
        // The claim statement is a hotQuery: on a client that is not openDatabase's own (this
        // proxy) it is Prisma's $queryRawUnsafe.
        if (key !== '$queryRawUnsafe') return Reflect.get(target, key);
        return async (...args: unknown[]) => {
          const rows = await (target.$queryRawUnsafe as any)(...args);
          if (!injected && Array.isArray(rows) && rows.length === 0 && String(args[0]).includes('INSERT INTO "Attempt"')) {
            injected = (async () => {
              const delivered = pubsub.waitFor((e) => e.type === 'tasks.available', 5000);
              const t = await addTask(api, job, { name: 'between' });
              await delivered;
              return t.id;
            })();
            await injected;
          }
          return rows;
        };
      },
    });
    const wake = recordingWake(pubsub);
    const got = await claim({ ...resources, prisma }, wake, row.tokenId, w.workerId, { waitMs: 20_000, max: 1 });
    expect(injected).not.toBeNull();
    expect(got.map((x) => x.taskId)).toEqual([await injected!]);
    expect(wake.ends).not.toContain('timeout');
  });

  it('a NOTIFY that fails after the claim committed does not fail the claim: the worker gets its lease, the failure is logged', async () => {
    const t = await addTask(api, job, { name: 'notify-fails' });
    const warned: string[] = [];
    const failing = {
      ...resources,
      events: { emit: () => Promise.reject(new Error('connection lost')), emitMany: () => Promise.reject(new Error('connection lost')) },
      log: { ...resources.log, warn: (m: string) => void warned.push(m) },
    };
    const got = await claim(failing, recordingWake(pubsub), tokenId, w.workerId, { waitMs: 0, max: 1 });
    expect(got.map((x) => x.taskId)).toEqual([t.id]);
    expect((await resources.prisma.attempt.findUniqueOrThrow({ where: { id: got[0]!.id } })).status).toBe('LEASED');
    await waitFor(async () => warned.length > 0, 5000, 'the failed announcement is logged', 10);
    expect(warned[0]).toMatch(/announcing the leases failed/);
  });

  it('a worker that hangs up mid-long-poll stops waiting: the next task is not leased to the gone claim', async () => {
    const parked = dispatcherFor(pubsub);
    expect(parked.size).toBe(0);
    const hangUp = new AbortController();
    const poll = fetch(`${api.url}/graphql`, {
      method: 'POST',
      signal: hangUp.signal,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        query: `mutation($w: ID!) { claimTask(workerId: $w, waitMs: 20000, max: 1) { __typename } }`,
        variables: { w: w.workerId },
      }),
    }).then(
      () => 'answered',
      () => 'hung up',
    );
    while (parked.size === 0) await new Promise((r) => setTimeout(r, 10));
    hangUp.abort();
    expect(await poll).toBe('hung up');
    while (parked.size > 0) await new Promise((r) => setTimeout(r, 10)); // the claim ended (a timeout here fails the test)
    const task = await addTask(api, job, { name: 'after a hang-up' });
    expect((await resources.prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('QUEUED');
    expect((await w.claim({ waitMs: 0, max: 1 })).map((a) => a.task.id)).toEqual([task.id]);
  });

  it('waitMs above 30000 is a ValidationError', async () => {
    const r = await w.claimRaw({ waitMs: 30_001 });
    expect(r.result?.__typename ?? r.errors?.[0]?.extensions?.code).toMatch(/ValidationError|BAD_USER_INPUT|VALIDATION/);
  });
});

describe('bad input from a worker: typed errors, nothing corrupted', async () => {
  // The lease is taken here, while the file is collected, and renewed by a test that runs after the
  // file's other suites: an hour, so a loaded machine never lets it expire first (leases are not what this tests).
  const api = await startTestApi({ LEASE_SEC: '3600' });
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token, 'mine');
  const w = new TestWorker(api, token, 'good');
  const hh = await w.hello({ slots: 4, capabilities: CPU_CAPS });
  if (!w.workerId) throw new Error(JSON.stringify(hh));
  const otherUser = await api.signUp();
  const otherToken = await createWorkerToken(api, otherUser.token, 'theirs');
  const intruder = new TestWorker(api, otherToken, 'intruder');
  await intruder.hello({ slots: 4, capabilities: CPU_CAPS });
  const job = await createJobWithFile(api, owner.token);
  const task = await addTask(api, job);
  const [a] = await w.claim({ waitMs: 0, max: 1 });
  await w.heartbeat([a!]);
  expect(
    (
      await w.appendLogs(
        a!,
        [0, 1, 2].map((seq) => ({ seq, text: `ok ${seq}` })),
      )
    ).accepted,
  ).toBe(3);
  const prisma = api.server.db.prisma;

  async function snapshot() {
    const attempt = await prisma.attempt.findUniqueOrThrow({ where: { id: a!.attemptId } });
    return {
      attempt: { status: attempt.status, fencingToken: attempt.fencingToken, outputs: attempt.outputs, exitCode: attempt.exitCode },
      task: await prisma.task.findUniqueOrThrow({
        where: { id: task.id },
        select: { status: true, result: true, currentAttemptId: true, attemptCount: true },
      }),
      logs: (await prisma.logChunk.findMany({ where: { attemptId: a!.attemptId }, orderBy: { seq: 'asc' } })).map((l) => [l.seq, l.text]),
      metrics: await prisma.metricPoint.count({ where: { attemptId: a!.attemptId } }),
    };
  }
  const initial = await snapshot();

  it('unknown attempt id → NotFoundError (well-formed or not); heartbeat answers CANCEL', async () => {
    for (const id of [randomUUID(), 'not-a-uuid', '\'; DROP TABLE "Attempt"; --']) {
      const fake = { attemptId: id, fencingToken: a!.fencingToken };
      expect((await w.appendLogs(fake, [{ seq: 0, text: 'x' }])).__typename).toBe('NotFoundError');
      expect((await w.reportMetrics(fake, [{ seq: 0, name: 'x', value: 1 }])).__typename).toBe('NotFoundError');
      expect((await w.complete(fake, { exitCode: 0 })).__typename).toBe('NotFoundError');
    }
    const hb = await w.heartbeat([a!, { attemptId: randomUUID(), fencingToken: 'x' }]);
    expect(hb.renewed).toEqual([a!.attemptId]);
    expect(hb.orders.filter((o: any) => o.kind === 'CANCEL')).toHaveLength(1);
    expect(hb.orders.find((o: any) => o.kind === 'CANCEL').reason).toMatch(/unknown/);
    expect(await snapshot()).toEqual(initial);
  });

  it("another worker token's attempt → NotFoundError (even with the right fencing token); its heartbeat renews nothing", async () => {
    expect((await intruder.appendLogs(a!, [{ seq: 3, text: 'evil' }])).__typename).toBe('NotFoundError');
    expect((await intruder.reportMetrics(a!, [{ seq: 0, name: 'evil', value: 1 }])).__typename).toBe('NotFoundError');
    expect((await intruder.complete(a!, { exitCode: 0 })).__typename).toBe('NotFoundError');
    const hb = await intruder.heartbeat([a!]);
    expect(hb.renewed).toEqual([]);
    expect(hb.orders).toContainEqual({ kind: 'CANCEL', attemptId: a!.attemptId, reason: 'unknown attempt' });
    expect(await snapshot()).toEqual(initial);
    expect(await prisma.staleReport.count()).toBe(0);
  });

  it('wrong fencing token → StaleAttemptError, recorded, nothing changes', async () => {
    const wrong = { attemptId: a!.attemptId, fencingToken: 'not-the-token' };
    const logs = await w.appendLogs(wrong, [{ seq: 3, text: 'forged' }]);
    expect(logs).toMatchObject({ __typename: 'StaleAttemptError', code: 'STALE_ATTEMPT', attemptId: a!.attemptId });
    expect(logs.reason).toMatch(/fencing token/);
    expect((await w.reportMetrics(wrong, [{ seq: 0, name: 'x', value: 1 }])).__typename).toBe('StaleAttemptError');
    expect((await w.complete(wrong, { exitCode: 0 })).__typename).toBe('StaleAttemptError');
    expect(await snapshot()).toEqual(initial);
    expect(await prisma.staleReport.count({ where: { attemptId: a!.attemptId } })).toBe(3);
  });

  it('a huge log batch (> 2000 lines) → ValidationError, nothing stored', async () => {
    const lines = Array.from({ length: 2001 }, (_, i) => ({ seq: 3 + i, text: 'x' }));
    const r = await w.appendLogs(a!, lines);
    expect(r.__typename).toBe('ValidationError');
    expect(r.message).toMatch(/2000/);
    const long = await w.appendLogs(a!, [{ seq: 3, text: 'y'.repeat(64 * 1024 + 1) }]);
    expect(long.__typename).toBe('ValidationError');
    expect(await snapshot()).toEqual(initial);
  });

  it('non-monotonic, duplicate, negative seqs and unknown streams → ValidationError, nothing stored', async () => {
    for (const lines of [
      [
        { seq: 4, text: 'b' },
        { seq: 3, text: 'a' },
      ],
      [
        { seq: 3, text: 'a' },
        { seq: 3, text: 'a again' },
      ],
      [{ seq: -1, text: 'neg' }],
      [{ seq: 3, text: 'a', stream: 'stdin' }],
    ]) {
      const r = await w.appendLogs(a!, lines);
      expect(r.__typename, JSON.stringify(lines)).toBe('ValidationError');
    }
    const m = await w.reportMetrics(a!, [
      { seq: 2, name: 'loss', value: 1 },
      { seq: 1, name: 'loss', value: 2 },
    ]);
    expect(m.__typename).toBe('ValidationError');
    expect((await w.reportMetrics(a!, [{ seq: 0, name: 'bad name!', value: 1 }])).__typename).toBe('ValidationError');
    expect(await snapshot()).toEqual(initial);
  });

  it('log lines of the wrong shape (the LogLines scalar) → BAD_USER_INPUT naming the line, nothing stored', async () => {
    for (const [l, where] of [
      [{ seq: 3.5, stream: 'stdout', text: 'a' }, /LogLines\[0\]\.seq/],
      [{ seq: '3', stream: 'stdout', text: 'a' }, /LogLines\[0\]\.seq/],
      [{ seq: 3, stream: 'stdout', text: 7 }, /LogLines\[0\]\.text/],
      [{ seq: 3, stream: 'stdout', text: 'a', ts: 'yesterday' }, /LogLines\[0\]\.ts/],
      [{ seq: 3, stream: 'stdout', text: 'a', extra: 1 }, /unknown field "extra"/],
      ['just text', /LogLines\[0\] must be an object/],
    ] as const) {
      const r = await w.gql(
        `mutation($a: ID!, $f: String!, $l: LogLines!) { appendLogs(attemptId: $a, fencingToken: $f, lines: $l) { __typename } }`,
        {
          a: a!.attemptId,
          f: a!.fencingToken,
          l: [l],
        },
      );
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(l)).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0]?.message).toMatch(where);
    }
    const notList = await w.gql(
      `mutation($a: ID!, $f: String!) { appendLogs(attemptId: $a, fencingToken: $f, lines: {seq: 3, text: "a"}) { __typename } }`,
      { a: a!.attemptId, f: a!.fencingToken },
    );
    expect(notList.errors?.[0]?.message).toMatch(/LogLines must be a list/);
    expect(await snapshot()).toEqual(initial);
  });

  it('a line with NUL characters or a lone surrogate is stored cleaned; its time is the one the worker gave', async () => {
    const r = await w.gql(
      `mutation($a: ID!, $f: String!, $l: LogLines!) { appendLogs(attemptId: $a, fencingToken: $f, lines: $l) { __typename ... on AppendResult { accepted } } }`,
      {
        a: a!.attemptId,
        f: a!.fencingToken,
        l: [{ seq: 3, stream: 'stderr', text: 'nul\u0000here \ud800 alone', ts: '2026-01-02T03:04:05.678Z' }],
      },
    );
    expect(r.data?.appendLogs).toEqual({ __typename: 'AppendResult', accepted: 1 });
    const row = await prisma.logChunk.findUniqueOrThrow({ where: { attemptId_seq: { attemptId: a!.attemptId, seq: 3 } } });
    expect(row).toMatchObject({ stream: 'stderr', text: 'nulhere \ufffd alone' });
    expect(row.ts.toISOString()).toBe('2026-01-02T03:04:05.678Z');
    await prisma.logChunk.delete({ where: { attemptId_seq: { attemptId: a!.attemptId, seq: 3 } } });
  });

  it('a seq gap → ValidationError (lines were skipped); continuing at the next seq works', async () => {
    const gap = await w.appendLogs(a!, [{ seq: 5, text: 'five' }]);
    expect(gap.__typename).toBe('ValidationError');
    expect(gap.message).toMatch(/seq 3/);
    expect(await snapshot()).toEqual(initial);
    expect(await w.appendLogs(a!, [{ seq: 3, text: 'ok 3' }])).toMatchObject({ accepted: 1, lastSeq: 3 });
    expect((await snapshot()).logs).toEqual([...initial.logs, [3, 'ok 3']]);
  });

  it('an output naming an unuploaded blob (or a path escaping) → ValidationError, attempt still RUNNING', async () => {
    const before = await snapshot();
    const missing = await w.complete(a!, { exitCode: 0, outputs: [{ path: 'out/x.bin', sha256: sha256('never uploaded') }] });
    expect(missing.__typename).toBe('ValidationError');
    const up = await api.putBlob('real output', token);
    for (const path of ['../escape.txt', '/etc/passwd']) {
      const r = await w.complete(a!, { exitCode: 0, outputs: [{ path, sha256: up.sha256 }] });
      expect(r.__typename, path).toBe('ValidationError');
    }
    const badSha = await w.complete(a!, { exitCode: 0, outputs: [{ path: 'a', sha256: 'XYZ' }] });
    expect(badSha.__typename ?? badSha.errors?.[0]?.extensions?.code).toMatch(/ValidationError|BAD_USER_INPUT/);
    const after = await snapshot();
    expect(after).toEqual(before);
    expect(after.attempt.status).toBe('RUNNING');
    expect(after.task.result).toBeNull();
  });

  it("claimTask / heartbeat with another token's workerId → NotFoundError", async () => {
    const r = await intruder.claimRaw({ workerId: w.workerId, waitMs: 0, max: 1 });
    expect(r.result.__typename).toBe('NotFoundError');
    const hb = await intruder.gql(`mutation($w: ID!) { heartbeat(workerId: $w, leases: []) { __typename } }`, { w: w.workerId });
    expect(hb.data.heartbeat.__typename).toBe('NotFoundError');
    const bogus = await w.claimRaw({ workerId: 'nope', waitMs: 0, max: 1 });
    expect(bogus.result.__typename).toBe('NotFoundError');
    const pause = await intruder.gql(`mutation($w: ID!) { setWorkerPaused(workerId: $w, paused: true) { __typename } }`, { w: w.workerId });
    expect(pause.data.setWorkerPaused.__typename).toBe('NotFoundError');
    expect((await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).status).toBe('ONLINE');
  });

  it('a user token calling worker mutations → FORBIDDEN', async () => {
    const calls: [string, string, Record<string, unknown>][] = [
      ['workerHello', `mutation { workerHello(input: {name: "x", version: "1", slots: 1, capabilities: {}}) { __typename } }`, {}],
      ['claimTask', `mutation($w: ID!) { claimTask(workerId: $w, waitMs: 0, max: 1) { __typename } }`, { w: w.workerId }],
      ['heartbeat', `mutation($w: ID!) { heartbeat(workerId: $w, leases: []) { __typename } }`, { w: w.workerId }],
      [
        'appendLogs',
        `mutation($a: ID!, $f: String!) { appendLogs(attemptId: $a, fencingToken: $f, lines: [{seq: 4, stream: "stdout", text: "u"}]) { __typename } }`,
        { a: a!.attemptId, f: a!.fencingToken },
      ],
      [
        'reportMetrics',
        `mutation($a: ID!, $f: String!) { reportMetrics(attemptId: $a, fencingToken: $f, points: [{seq: 9, name: "u", value: 1}]) { __typename } }`,
        { a: a!.attemptId, f: a!.fencingToken },
      ],
      [
        'completeAttempt',
        `mutation($a: ID!, $f: String!) { completeAttempt(attemptId: $a, fencingToken: $f, result: {exitCode: 0}) { __typename } }`,
        { a: a!.attemptId, f: a!.fencingToken },
      ],
      ['setWorkerPaused', `mutation($w: ID!) { setWorkerPaused(workerId: $w, paused: true) { __typename } }`, { w: w.workerId }],
    ];
    const before = await snapshot();
    for (const [name, q, vars] of calls) {
      const r = await api.gql(q, vars, owner.token);
      expect(r.errors?.[0]?.extensions?.code, name).toBe('FORBIDDEN');
      expect(r.data?.[name] ?? null, name).toBeNull();
    }
    expect(await snapshot()).toEqual(before);
  });

  it('a worker token calling user queries and mutations → FORBIDDEN', async () => {
    for (const q of [`{ jobs { totalCount } }`, `{ workers { totalCount } }`, `query($id: ID!) { job(id: $id) { title } }`]) {
      const r = await w.gql(q, { id: job.gid });
      expect(r.errors?.[0]?.extensions?.code, q).toBe('FORBIDDEN');
    }
    const pause = await w.gql(PAUSE, { id: workerGid(w.workerId) });
    expect(pause.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const cancel = await w.gql(`mutation($id: ID!) { cancelJob(id: $id) { __typename } }`, { id: job.gid });
    expect(cancel.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('after all that the right worker still completes, once; a second completion is stale and changes nothing', async () => {
    const done = await w.complete(a!, { exitCode: 0, metrics: { ok: 1 } });
    expect(done).toMatchObject({ __typename: 'Attempt', status: 'SUCCEEDED' });
    const t = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(t.status).toBe('SUCCEEDED');
    const again = await w.complete(a!, { exitCode: 1, errorClass: 'WORKER_ERROR' });
    expect(again.__typename).toBe('StaleAttemptError');
    expect(again.reason).toMatch(/already completed/);
    expect(await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).toEqual(t);
    expect((await w.appendLogs(a!, [{ seq: 4, text: 'late' }])).__typename).toBe('StaleAttemptError');
    expect((await snapshot()).logs).toHaveLength(4);
  });
});

describe('createTask: the task and its event in one statement', async () => {
  const api = await startTestApi();
  const owner = await api.signUp();
  const job = await createJobWithFile(api, owner.token);
  const prisma = api.server.db.prisma;

  it('returns the row as the database holds it, owned by the job owner, with its task.created event', async () => {
    const task = await addTask(api, job, {
      name: 'shaped',
      environment: { A: '1' },
      requirements: { workload: 'python', minMemoryMiB: 512, timeoutSec: 60 },
      priority: 2,
    });
    expect(task).toEqual(await prisma.task.findUniqueOrThrow({ where: { id: task.id } }));
    expect(task).toMatchObject({
      jobId: job.jobId,
      ownerId: owner.userId,
      kind: 'RUN',
      status: 'QUEUED',
      minMemoryMiB: 512,
      priority: 2,
      environment: { A: '1' },
    });
    expect(task.createdAt).toBeInstanceOf(Date);
    const events = await prisma.jobEvent.findMany({ where: { jobId: job.jobId, kind: 'task.created' } });
    expect(events.map((e) => e.payload)).toContainEqual({ taskId: task.id, name: 'shaped', kind: 'RUN', role: 'RUN', workload: 'python' });
  });

  it('an unknown job → NotFoundError, and nothing is written', async () => {
    const before = await prisma.task.count();
    await expect(addTask(api, { jobId: randomUUID(), codeVersionId: job.codeVersionId })).rejects.toMatchObject({ name: 'NotFoundError' });
    expect(await prisma.task.count()).toBe(before);
  });

  it('bad requirements → ValidationError before anything is written', async () => {
    const before = await prisma.task.count();
    await expect(addTask(api, job, { requirements: { workload: 'cobol' } as never })).rejects.toMatchObject({ name: 'ValidationError' });
    expect(await prisma.task.count()).toBe(before);
  });
});

describe('a look: the touch and the claim side by side, the claim checking token, status and slots itself', async () => {
  const api = await startTestApi();
  const owner = await api.signUp();
  const w = new TestWorker(api, await createWorkerToken(api, owner.token, 'own'), 'own');
  await w.hello({ slots: 2, capabilities: CPU_CAPS });
  const other = await api.signUp();
  const intruder = new TestWorker(api, await createWorkerToken(api, other.token, 'theirs'), 'intruder');
  await intruder.hello({ slots: 2, capabilities: CPU_CAPS });
  const job = await createJobWithFile(api, owner.token);
  const prisma = api.server.db.prisma;

  it("another token's workerId with work queued → NotFoundError, and nothing is leased", async () => {
    const task = await addTask(api, job, { name: 'not-yours' });
    const r = await intruder.claimRaw({ workerId: w.workerId, waitMs: 0, max: 2 });
    expect(r.result.__typename).toBe('NotFoundError');
    expect(await prisma.attempt.count({ where: { taskId: task.id } })).toBe(0);
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('QUEUED');
    // Its own worker takes it (and the slot is used below).
    expect((await w.claim({ waitMs: 0, max: 2 })).map((a) => a.task.id)).toEqual([task.id]);
  });

  it('an OFFLINE worker that calls claims work and is ONLINE again', async () => {
    await prisma.worker.update({ where: { id: w.workerId }, data: { status: 'OFFLINE' } });
    const task = await addTask(api, job, { name: 'back' });
    expect((await w.claim({ waitMs: 0, max: 2 })).map((a) => a.task.id)).toEqual([task.id]);
    expect((await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).status).toBe('ONLINE');
  });

  it('asking for more than its free slots gets only the free ones (slots less live attempts)', async () => {
    // Both slots are held by the two claims above; a third task waits.
    const task = await addTask(api, job, { name: 'waits' });
    expect(await w.claim({ waitMs: 0, max: 2 })).toEqual([]);
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('QUEUED');
  });
});
