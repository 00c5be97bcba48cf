/**
 * The preparation stage survives the API process (docs/architecture.md §4): the API runs as
 * a child process (`node scripts/start.mjs`, builtin planner) with a real worker process.
 * It is killed with SIGKILL while the job is PREPARING; a new process on the same database
 * finishes the stage from what is stored — no task created twice, no record lost or
 * duplicated — and the job succeeds. A cancel during preparation is final.
 */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/client.js';
import { createJobAt, signUpAt, waitFor } from './helpers/agents.js';
import { createTestDatabase } from './helpers/db.js';
import { freePort, repoRoot, spawnProc, type Proc } from './helpers/processes.js';
import { startWorker } from './helpers/worker.js';

const databaseUrl = await createTestDatabase();
const dataDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-prepcrash-'));
const db = await openDatabase({ databaseUrl, dataDir, migrate: false, poolSize: 3 });
afterAll(async () => {
  await db.close();
  await rm(dataDir, { recursive: true, force: true });
});
const prisma = db.prisma;
const { OPENAI_API_KEY: _k, OPENAI_BASE_URL: _b, ...parentEnv } = process.env;
const port = await freePort(); // the same port across restarts: the worker reconnects to it

function startApi(): Promise<{ proc: Proc; url: string }> {
  const proc = spawnProc(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], {
    env: {
      ...parentEnv,
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      CHATGPU_DATA_DIR: dataDir,
      TICK_INTERVAL_SEC: '1',
      HEARTBEAT_SEC: '1',
      CHATGPU_SKIP_WEB_BUILD: '1',
    },
  });
  return proc.waitFor(/ChatGPU API and dashboard/, 60_000).then(() => ({ proc, url: `http://127.0.0.1:${port}` }));
}

async function files(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of await readdir(dir)) if ((await stat(path.join(dir, f))).isFile()) out[f] = await readFile(path.join(dir, f), 'utf8');
  return out;
}

describe('the API killed during PREPARING', () => {
  it('a restarted API finishes the stage: no duplicated task, no lost or duplicated record, SUCCEEDED', { timeout: 240_000 }, async () => {
    let api = await startApi();
    const user = await signUpAt(api.url);
    const wt = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ query: `mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }` }),
    }).then((r) => r.json() as Promise<any>);
    await startWorker(api.url, wt.data.createWorkerToken.token, 'cpu-crash');
    const { jobId } = await createJobAt(
      api.url,
      user.token,
      await files(path.join(repoRoot, 'examples/cuda-classifier')),
      'train it for 2 epochs and give me the model',
    );

    // Kill it in the middle of the stage: once the reference task exists.
    await waitFor(
      'the job to be PREPARING with its reference queued',
      async () =>
        (await prisma.task.count({ where: { jobId, kind: 'REFERENCE' } })) > 0 &&
        (await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status === 'PREPARING',
      90_000,
      50,
    );
    api.proc.child.kill('SIGKILL');
    await new Promise((r) => api.proc.child.once('exit', r));
    const atCrash = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    expect(atCrash.status).toBe('PREPARING');

    api = await startApi();
    const job = await waitFor(
      'the job to finish',
      async () => {
        const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
        return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.status) ? j : null;
      },
      180_000,
      300,
    );
    expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');

    const tasks = await prisma.task.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
    expect(tasks.map((t) => t.name)).toEqual(['reference', 'candidate:migrate:0', 'run', 'evaluate']);
    const records = await prisma.preparationRecord.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
    expect(records.map((x) => [x.step, x.outcome])).toEqual([
      ['reference', 'FALLBACK'],
      ['migrate', 'ACCEPTED'],
    ]);
    const statuses = (await prisma.jobEvent.findMany({ where: { jobId, kind: 'job.status' }, orderBy: { id: 'asc' } })).map(
      (e) => (e.payload as { transition: string }).transition,
    );
    expect(statuses).toEqual(['startPlanning', 'startPreparation', 'acceptCandidate', 'freeze', 'startRun', 'startValidation', 'succeed']);
    api.proc.child.kill('SIGTERM');
  });
});

describe('a cancel during preparation', () => {
  it('is final: the stage creates nothing more and the job never leaves CANCELLED', { timeout: 120_000 }, async () => {
    const api = await startApi();
    const user = await signUpAt(api.url);
    // No worker at all: the reference waits in the queue, the job stays PREPARING.
    const { id, jobId } = await createJobAt(
      api.url,
      user.token,
      await files(path.join(repoRoot, 'examples/cuda-classifier')),
      'train it for 2 epochs',
    );
    await waitFor(
      'PREPARING with the reference queued',
      async () => (await prisma.task.count({ where: { jobId, kind: 'REFERENCE' } })) > 0,
      60_000,
      50,
    );
    const cancelled = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ query: `mutation($id: ID!) { cancelJob(id: $id) { ... on Job { status } } }`, variables: { id } }),
    }).then((r) => r.json() as Promise<any>);
    expect(cancelled.data.cancelJob.status).toBe('CANCELLED');
    // Several ticks (each a reconcile of PREPARING jobs) later, nothing moved.
    const before = await prisma.task.findMany({ where: { jobId } });
    await new Promise((r) => setTimeout(r, 3500));
    const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    expect(job.status).toBe('CANCELLED');
    const after = await prisma.task.findMany({ where: { jobId } });
    expect(after.map((t) => [t.name, t.status])).toEqual(before.map((t) => [t.name, 'CANCELLED']));
    const last = await prisma.jobEvent.findFirstOrThrow({ where: { jobId, kind: 'job.status' }, orderBy: { id: 'desc' } });
    expect((last.payload as { status: string }).status).toBe('CANCELLED');
    api.proc.child.kill('SIGTERM');
  });
});
