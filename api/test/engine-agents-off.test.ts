/**
 * The job engine runs whatever the agents' configuration (domain/jobs/engine.ts): jobs planned by
 * a server with agents are finished by a server started afterwards with agents off — real API
 * processes on one PostgreSQL database, a real worker process running real PyTorch. Without a run
 * supervisor, a failed run fails its job with its reason.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { acceptPlan } from '../src/domain/jobs/acceptPlan.js';
import { commitTransition, transition } from '../src/domain/jobs/jobLifecycle.js';
import { PlanSchema } from '../src/domain/jobs/planSchema.js';
import { replanJob } from '../src/domain/supervision/supervisorActions.js';
import { waitFor } from './helpers/agents.js';
import { createJobWithFile } from './helpers/protocolClient.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { repoRoot } from './helpers/processes.js';
import { startWorker } from './helpers/worker.js';

const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { command }
  tasks { kind status statusReason } } }`;

function dirFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir)) if (statSync(path.join(dir, f)).isFile()) out[f] = readFileSync(path.join(dir, f), 'utf8');
  return out;
}

async function submit(api: TestApi, token: string, files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } ... on Error { message } } }`,
    { i: { title: 'job', request, files: manifest } },
    token,
  );
  if (r.data?.createJob?.__typename !== 'Job') throw new Error(`createJob failed: ${JSON.stringify(r)}`);
  return r.data.createJob.id as string;
}

async function until(api: TestApi, token: string, id: string, pred: (job: any) => boolean, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.gql(JOB, { id }, token);
    const job = res.data?.job;
    if (!job) throw new Error(`no job ${id}: ${JSON.stringify(res.errors)}`);
    if (pred(job)) return job;
    if (Date.now() > end) throw new Error(`timed out; job: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const rawId = (id: string) => Buffer.from(id, 'base64').toString().split(':')[1]!;

describe('the job engine with agents off', () => {
  it('a server started without agents finishes jobs whose plans were accepted before: one to SUCCEEDED (run, evaluation), one FAILED with its reason', async () => {
    // The first server plans (builtin planner); no worker is online, so nothing runs yet.
    const planner = await startTestApi({}, { model: createBuiltinClient() });
    const user = await planner.signUp();
    const train = await submit(
      planner,
      user.token,
      dirFiles(path.join(repoRoot, 'examples/torch-classifier')),
      'train it for 2 epochs and give me the model',
    );
    const broken = await submit(
      planner,
      user.token,
      { 'main.py': 'import sys\nprint("loading the data")\nsys.exit("no data found in ./data")\n' },
      'run main.py',
    );
    for (const id of [train, broken]) {
      const j = await until(planner, user.token, id, (j) => j.status !== 'DRAFT' && j.status !== 'PLANNING', 60_000);
      expect(j.status, j.statusReason).toBe('RUNNING');
    }
    await planner.server.close();
    const closedAt = new Date();

    // The same database and blob store, a server with agents off: only the engine moves the jobs.
    const plain = await startTestApi(
      { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' },
      { databaseUrl: planner.databaseUrl, dataDir: planner.dataDir, model: null, engine: true, scheduler: true },
    );
    expect(plain.server.agents).toBeNull();
    expect(plain.server.engine).not.toBeNull();
    const wt = await plain.gql(
      `mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`,
      {},
      user.token,
    );
    await startWorker(plain.url, wt.data.createWorkerToken.token, 'cpu-box');

    const done = await until(plain, user.token, train, (j) => ['SUCCEEDED', 'FAILED'].includes(j.status), 180_000);
    expect(done.status, done.statusReason).toBe('SUCCEEDED');
    expect(done.tasks.map((t: any) => [t.kind, t.status])).toEqual([
      ['RUN', 'SUCCEEDED'],
      ['EVALUATE', 'SUCCEEDED'],
    ]);
    expect(done.statusReason).toMatch(/reloaded and evaluated/);

    const failed = await until(plain, user.token, broken, (j) => ['SUCCEEDED', 'FAILED'].includes(j.status), 120_000);
    expect(failed.status).toBe('FAILED');
    expect(failed.statusReason).toMatch(/no data found in \.\/data/);

    // No agent ran on the second server (no run supervisor looked at the failure): every agent run is the first server's.
    const db = plain.server.db.prisma;
    const runs = await db.agentRun.findMany({
      where: { jobId: { in: [rawId(train), rawId(broken)] } },
      select: { agent: true, createdAt: true },
    });
    expect(runs.map((r) => r.agent)).toContain('planner');
    expect(runs.filter((r) => r.createdAt >= closedAt)).toEqual([]);
  }, 300_000);

  it('a job sent back to planning fails, saying no planner runs here, instead of waiting in PLANNING for ever', async () => {
    const api = await startTestApi({}, { model: null, engine: true });
    const r = api.server.resources;
    const owner = await api.signUp();
    const job = await createJobWithFile(api, owner.token);
    await transition(r, job.jobId, 'startPlanning', { reason: null });
    const plan = PlanSchema.parse({
      summary: 'Run main.py.',
      asks: [],
      steps: ['Run `python main.py`'],
      command: 'python main.py',
      hardware: { workload: 'python' },
      timeoutSec: 600,
      outputs: ['outputs'],
      acceptance: { exitCode: 0, requiredFiles: [], metrics: [] },
    });
    await commitTransition(r, job.jobId, (tx, now) => acceptPlan(tx, now, { jobId: job.jobId, author: 'scripted', plan }));
    // What the smoke run's estimate (checkpoint-resume) or new workers (replanForNewWorkers) do: a replan, then its event.
    await commitTransition(r, job.jobId, (tx, now) => replanJob(tx, r, now, job.jobId, 'the run needs a checkpoint-resume step'));
    await r.events.emit({ type: 'job.replanned', jobId: job.jobId });
    const failed = await waitFor('the job fails', async () => {
      const j = await api.server.db.prisma.job.findUniqueOrThrow({ where: { id: job.jobId } });
      return j.status === 'FAILED' ? j : null;
    });
    expect(failed.statusReason).toMatch(
      /^The job needs a new plan, and this server runs without agents to make one \(agents off\)\. .*checkpoint-resume step/,
    );
  });
});
