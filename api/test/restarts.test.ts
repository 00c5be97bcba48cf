/**
 * Restarts of every part while work is in flight (issue 18, item 5), on a throwaway
 * PostgreSQL cluster of this file's own (really stopped and started, never the shared server)
 * and an API on a fixed port (really closed and started again):
 *
 * - mid-subscription: `chatgpu watch` (the real CLI) keeps following a job through an API
 *   restart, a database outage whose resubscription answers UNAVAILABLE, and a dropped
 *   connection; it resumes after the last job event it saw (the event id is the cursor) and
 *   fills log gaps from the logs query: every line and event printed exactly once, in order;
 * - PostgreSQL restarted under load: the API (its pool and its LISTEN connection) and a real
 *   worker process reconnect by themselves; every task completes with exactly one accepted
 *   attempt, work queued after the restart is claimed, a subscription opened before the
 *   restart sees events after it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createTask } from '../src/domain/jobs/createTask.js';
import { silentLogger } from '../src/domain/resources.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createJobAt, gqlAt, signUpAt } from './helpers/agents.js';
import { type TestApi } from './helpers/api.js';
import { startCli } from './helpers/cli.js';
import { freePort } from './helpers/processes.js';
import { ProtocolWorker } from './helpers/protocolClient.js';
import { startThrowawayPostgres } from './helpers/throwawayPostgres.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';
import { subscribe } from './helpers/ws.js';

const pg = await startThrowawayPostgres();
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const dataDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-restarts-'));
afterAll(() => rm(dataDir, { recursive: true, force: true }));
const config = loadConfig({
  PORT: String(port),
  HOST: '127.0.0.1',
  DATABASE_URL: pg.url,
  CHATGPU_DATA_DIR: dataDir,
  TICK_INTERVAL_SEC: '1',
  HEARTBEAT_SEC: '1',
  LEASE_SEC: '20',
  RETRY_BASE_SEC: '0',
});

let server: RunningServer | null = null;
async function startApi() {
  server = await startServer({ config, log: silentLogger, webDir: null, scheduler: true, model: null });
  return server;
}
async function stopApi() {
  await server?.close();
  server = null;
}
afterAll(async () => {
  await stopApi();
});
await startApi();

/** The database is brought back even when a test fails halfway. */
let pgDown = false;
afterAll(async () => {
  if (pgDown) await pg.start();
});
async function restartDb(downMs: number) {
  await pg.stop();
  pgDown = true;
  await new Promise((r) => setTimeout(r, downMs));
  await pg.start();
  pgDown = false;
}

const gql = gqlAt(url);
const user = await signUpAt(url);
const workerToken = await (async () => {
  const r = await gql(`mutation { createWorkerToken(input: {name: "restarts"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
  return r.data.createWorkerToken.token as string;
})();
const prisma = () => server!.db.prisma;
const codeVersionOf = async (jobId: string) => (await prisma().codeVersion.findFirstOrThrow({ where: { jobId } })).id;

/** Calls `fn` until the API answers it (through restarts and outages), returning its answer. */
async function whenUp<T>(what: string, fn: () => Promise<T>): Promise<T> {
  let last: unknown;
  return waitFor(
    async () => {
      try {
        return { v: await fn() };
      } catch (err) {
        last = err;
        return null;
      }
    },
    60_000,
    what,
    250,
  ).then(
    (x) => x.v,
    (err) => {
      throw new Error(`${(err as Error).message}; last: ${(last as Error)?.message}`);
    },
  );
}

/** A TCP proxy in front of the API whose connections can be cut (a dropped connection). */
async function tcpProxy(target: number) {
  const sockets = new Set<Socket>();
  const srv = createServer();
  srv.on('connection', (client: Socket) => {
    const upstream = connect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  const p = await freePort();
  await new Promise<void>((r) => srv.listen(p, '127.0.0.1', () => r()));
  afterAll(() => new Promise<void>((r) => srv.close(() => r())));
  return {
    url: `http://127.0.0.1:${p}`,
    cut() {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
  };
}

describe('mid-subscription restarts', () => {
  it('chatgpu watch follows a job through an API restart, a database outage and a dropped connection, printing every line and event once', async () => {
    const job = await createJobAt(url, user.token, { 'main.py': 'print(1)\n' }, 'watch me');
    const task = await createTask(server!.resources, {
      jobId: job.jobId,
      codeVersionId: await codeVersionOf(job.jobId),
      kind: 'RUN',
      name: 'watched',
      command: 'python main.py',
      requirements: { workload: 'python' },
    });
    // A protocol-level worker writes the log lines, so the test decides when each is written.
    const apiLike = {
      gql: async (q: string, v?: Record<string, unknown>, t?: string) => ({ ...(await gql(q, v ?? {}, t ?? '')), status: 200 }),
    } as unknown as TestApi;
    const worker = new ProtocolWorker(apiLike, workerToken, 'watch-writer');
    await worker.hello({ slots: 1 });
    const [lease] = await worker.claim({ max: 1 });
    expect(lease?.task.id).toBe(task.id);
    // Its heartbeats keep the lease (failing ones, during the outages, are simply repeated).
    const beat = setInterval(() => void worker.heartbeat([lease!]).catch(() => {}), 2_000);
    afterAll(() => clearInterval(beat));
    const write = (from: number, to: number) =>
      whenUp(`lines ${from}..${to - 1} accepted`, async () => {
        const r = await worker.appendLogs(
          lease!,
          Array.from({ length: to - from }, (_, i) => ({ seq: from + i, text: `restart-line-${from + i}` })),
        );
        if (r.__typename !== 'AppendResult') throw new Error(JSON.stringify(r));
        return r;
      });

    const proxy = await tcpProxy(port);
    const watch = startCli(['watch', job.id], { env: { CHATGPU_URL: proxy.url, CHATGPU_TOKEN: user.token, CHATGPU_RETRY_SEC: '120' } });
    await watch.waitFor(/attempt 1 on watch-writer/, 90_000); // attached: its history shown, live from here
    await write(0, 3);
    await watch.waitFor(/restart-line-2/, 30_000);

    // 1. The API restarts: the socket closes; the watch reconnects and resumes.
    await stopApi();
    await new Promise((r) => setTimeout(r, 1_500));
    await startApi();
    await write(3, 6);
    await watch.waitFor(/restart-line-5/, 60_000);

    // 2. The database goes away and the connection drops: the resubscription is answered
    //    UNAVAILABLE (authentication needs the database). The watch waits it out.
    await pg.stop();
    pgDown = true;
    proxy.cut();
    await watch.waitFor(/database is unavailable/, 30_000);
    await new Promise((r) => setTimeout(r, 3_000));
    await pg.start();
    pgDown = false;
    await write(6, 9);
    await watch.waitFor(/restart-line-8/, 90_000);

    // 3. A dropped connection alone, then the end: the task completes and the job is cancelled.
    proxy.cut();
    await write(9, 11);
    await whenUp('completion', () => worker.complete(lease!, { exitCode: 0 }));
    await whenUp('cancel', async () => {
      const r = await gql(`mutation($id: ID!) { cancelJob(id: $id) { __typename } }`, { id: job.id }, user.token);
      if (!r.data?.cancelJob) throw new Error(JSON.stringify(r));
      return r;
    });
    await watch.exited;
    const out = watch.output();
    // Every line once, in order; no line lost to a restart, none printed twice after a resume.
    const lines = [...out.matchAll(/restart-line-(\d+)/g)].map((m) => Number(m[1]));
    expect(lines, out).toEqual(Array.from({ length: 11 }, (_, i) => i));
    expect(out.match(/● CANCELLED/g) ?? [], out).toHaveLength(1);
    expect(out, out).toMatch(/reconnecting/);
    expect(out).not.toMatch(/The server refused/);
  }, 240_000);
});

describe('PostgreSQL restarted under load', () => {
  it('the API and a real worker reconnect by themselves; every task completes once; new work is claimed; subscriptions go on', async () => {
    const worker = await startWorker(url, workerToken, 'restart-box', ['--python', '/usr/bin/python3', '--slots', '2']);
    afterAll(() => worker.stop('SIGKILL'));
    const job = await createJobAt(
      url,
      user.token,
      { 'main.py': 'import time\nprint("start", flush=True)\ntime.sleep(2)\nprint("done")\n' },
      'load',
    );
    const cv = await codeVersionOf(job.jobId);
    const add = (name: string) =>
      createTask(server!.resources, {
        jobId: job.jobId,
        codeVersionId: cv,
        kind: 'RUN',
        name,
        command: 'python main.py',
        requirements: { workload: 'python' },
      });
    const before = await Promise.all(Array.from({ length: 4 }, (_, i) => add(`before-${i}`)));
    const events = subscribe(
      url,
      user.token,
      `subscription($id: ID!) { jobEvents(jobId: $id) { __typename ... on JobEventEnvelope { event { id kind } } } }`,
      { id: job.id },
    );
    afterAll(() => events.close());
    await waitFor(
      async () => (await prisma().attempt.count({ where: { task: { jobId: job.jobId }, status: 'RUNNING' } })) > 0,
      60_000,
      'an attempt running',
    );

    const restartAt = new Date();
    await restartDb(4_000);
    const seenBefore = events.results.length;

    // Work queued after the restart is claimed (the claim's wake-ups listen again).
    const after = await whenUp('a task added after the restart', () => add(`after-${randomUUID().slice(0, 4)}`));
    const all = [...before.map((t) => t.id), after.id];
    await waitFor(
      async () => (await prisma().task.count({ where: { id: { in: all }, status: 'SUCCEEDED' } })) === all.length,
      120_000,
      'every task SUCCEEDED',
    );

    for (const id of all) {
      const accepted = await prisma().attempt.findMany({ where: { taskId: id, status: 'SUCCEEDED' } });
      expect(accepted, `task ${id}`).toHaveLength(1);
      // Its log is complete (seq 0..n-1) with both lines once.
      const logs = await prisma().logChunk.findMany({ where: { attemptId: accepted[0]!.id }, orderBy: { seq: 'asc' } });
      expect(logs.map((l) => l.seq)).toEqual(logs.map((_, i) => i));
      expect(logs.filter((l) => /^(start|done)$/.test(l.text)).map((l) => l.text)).toEqual(['start', 'done']);
    }
    // The worker kept (or regained) its connection: heartbeats after the restart, ONLINE.
    const w = await prisma().worker.findFirstOrThrow({ where: { name: 'restart-box' } });
    expect(w.status).toBe('ONLINE');
    expect(w.lastSeenAt.getTime()).toBeGreaterThan(restartAt.getTime());
    // The subscription opened before the restart got events after it (the API listens again).
    await waitFor(async () => events.results.length > seenBefore, 30_000, 'events after the restart');
    // Only UNAVAILABLE while the database was away (an event it could not load then); the
    // subscription itself went on.
    expect(
      events.errors.filter((e) => e?.extensions?.code !== 'UNAVAILABLE'),
      JSON.stringify(events.errors),
    ).toEqual([]);
  }, 240_000);
});
