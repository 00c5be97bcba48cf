/**
 * The worker when things go wrong around it: the API goes away mid-run (the run keeps
 * going, the worker reconnects with backoff, renews its lease and completes), and a run
 * past its time limit (its whole process group is killed, the attempt fails as TIMEOUT).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createTask } from '../src/domain/jobs/createTask.js';
import { silentLogger } from '../src/domain/resources.js';
import { startServer } from '../src/server.js';
import { createTestDatabase } from './helpers/db.js';
import { freePort } from './helpers/processes.js';
import { descendants, stillRunning, subtreeOf } from './helpers/processTree.js';
import { startWorker } from './helpers/worker.js';
import { waitFor } from './helpers/waitFor.js';

const databaseUrl = await createTestDatabase();
const dataDir = await mkdtemp(path.join(tmpdir(), 'resilience-'));
const port = await freePort();
const config = loadConfig({
  PORT: String(port),
  HOST: '127.0.0.1',
  DATABASE_URL: databaseUrl,
  CHATGPU_DATA_DIR: dataDir,
  TICK_INTERVAL_SEC: '1',
  HEARTBEAT_SEC: '1',
  LEASE_SEC: '12',
});
const start = () => startServer({ config, log: silentLogger, webDir: null, model: null });
let server = await start();
const url = `http://127.0.0.1:${port}`;

async function gql(query: string, variables: Record<string, unknown>, token?: string) {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as any;
}

const su = await gql(
  `mutation { signUp(input: {email: "r@example.com", password: "long enough pw"}) { ... on AuthPayload { token } } }`,
  {},
);
const token: string = su.data.signUp.token;
const wt = (await gql(`mutation { createWorkerToken(input: {name: "r"}) { ... on CreatedWorkerToken { token } } }`, {}, token)).data
  .createWorkerToken.token;

async function job(files: Record<string, string>) {
  const manifest = [];
  for (const [p, c] of Object.entries(files)) {
    const { createHash } = await import('node:crypto');
    const sha = createHash('sha256').update(c).digest('hex');
    await fetch(`${url}/blobs/${sha}`, { method: 'PUT', headers: { authorization: `Bearer ${token}` }, body: c });
    manifest.push({ path: p, sha256: sha });
  }
  const r = await gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
    { i: { title: 't', request: 'r', files: manifest } },
    token,
  );
  return {
    jobId: Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!,
    codeVersionId: r.data.createJob.originalCode.id as string,
  };
}

describe('worker resilience (real processes)', () => {
  it('keeps a run alive while the API is down for longer than a lease, reconnects, renews and completes it on the same attempt', async () => {
    const w = await startWorker(url, wt, 'steady', ['--python', '/usr/bin/python3']);
    const j = await job({ 'long.py': 'import time\nprint("before", flush=True)\ntime.sleep(20)\nprint("after", flush=True)\n' });
    const task = await createTask(server.resources, {
      jobId: j.jobId,
      kind: 'RUN',
      name: 'long',
      codeVersionId: j.codeVersionId,
      command: 'python long.py',
      requirements: { workload: 'python' },
    });
    const attempt = await waitFor(
      () => server.db.prisma.attempt.findFirst({ where: { taskId: task.id, status: 'RUNNING' } }),
      60_000,
      'running',
    );
    await server.close();
    await w.waitFor(/API unreachable/, 20_000);
    // Down past the lease (12 s) and the outage gap (10 s): no process renews or ticks meanwhile.
    // The restarted API resumes the lease before it listens instead of losing the run.
    await new Promise((r) => setTimeout(r, config.scheduler.leaseSec * 1000 + 3000));
    server = await start();
    await w.waitFor(/API reachable again/, 30_000);
    const done = await waitFor(
      async () => {
        const t = await server.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
        return ['SUCCEEDED', 'FAILED'].includes(t.status) ? t : null;
      },
      60_000,
      'done',
    );
    expect(done.status).toBe('SUCCEEDED');
    const attempts = await server.db.prisma.attempt.findMany({ where: { taskId: task.id } });
    expect(attempts.map((a) => [a.id, a.status])).toEqual([[attempt.id, 'SUCCEEDED']]);
    const lines = (await server.db.prisma.logChunk.findMany({ where: { attemptId: attempt.id }, orderBy: { seq: 'asc' } })).map(
      (l) => l.text,
    );
    expect(lines).toEqual(expect.arrayContaining(['before', 'after']));
    await w.stop();
  }, 180_000);

  it('kills a run past its time limit, with its whole process group, and fails it as TIMEOUT', async () => {
    const w = await startWorker(url, wt, 'strict', ['--python', '/usr/bin/python3']);
    const j = await job({
      'hang.py': 'import subprocess, time\nsubprocess.Popen(["sleep", "61.25"])\nprint("started", flush=True)\ntime.sleep(61.5)\n',
    });
    const task = await createTask(server.resources, {
      jobId: j.jobId,
      kind: 'RUN',
      name: 'hang',
      codeVersionId: j.codeVersionId,
      command: 'python hang.py',
      requirements: { workload: 'python', timeoutSec: 8 },
    });
    // While it runs: the processes of this worker's tree (the run, its sandbox, the sleep it
    // started in the background) — only what this test started, not a machine-wide search.
    const tree = await waitFor(
      async () => {
        const started = await server.db.prisma.logChunk.findFirst({ where: { text: 'started', attempt: { taskId: task.id } } });
        const run = subtreeOf(w.child.pid!, descendants(w.child.pid!), /hang\.py/);
        return started && run.some((p) => p.cmdline === 'sleep 61.25') ? run : null;
      },
      30_000,
      'the run and its background sleep',
    );
    const done = await waitFor(
      async () => {
        const t = await server.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
        return ['SUCCEEDED', 'FAILED'].includes(t.status) ? t : null;
      },
      60_000,
      'timeout',
    );
    expect(done.status).toBe('FAILED');
    expect(done.statusReason).toMatch(/time limit/);
    // Every attempt, so that a failure shows what happened to each (once, under a full suite's
    // load, the first attempt had been LOST with LEASE_EXPIRED and a second one timed out).
    const attempts = await server.db.prisma.attempt.findMany({ where: { taskId: task.id }, orderBy: { number: 'asc' } });
    expect(
      attempts.map((x) => [x.status, x.errorClass]),
      JSON.stringify(
        attempts.map((x) => ({
          n: x.number,
          status: x.status,
          errorClass: x.errorClass,
          message: x.errorMessage,
          created: x.createdAt,
          started: x.startedAt,
          finished: x.finishedAt,
          leaseUntil: x.leaseExpiresAt,
        })),
      ),
    ).toEqual([['FAILED', 'TIMEOUT']]);
    // The whole group is gone: the python run and the sleep it left in the background.
    const left = await waitFor(async () => (stillRunning(tree).length === 0 ? [] : null), 10_000, 'the run’s processes to exit').catch(() =>
      stillRunning(tree),
    );
    expect(left.map((p) => p.cmdline)).toEqual([]);
    await w.stop();
    await server.close();
  }, 120_000);
});
