/**
 * Projects written the way public examples are (api/test/fixtures/projects/), planned by the
 * builtin planner from plain-words requests and run end to end on a real worker: the test
 * asserts the exact command the planner chose, then SUCCEEDED with the checkpoint.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'cpu-box');

const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { command acceptanceCriteria }
  outputs { path } tasks { kind status } } }`;

function projectFiles(name: string): Record<string, string> {
  const root = path.join(import.meta.dirname, 'fixtures/projects', name);
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const f of readdirSync(dir)) {
      const p = path.join(dir, f);
      if (statSync(p).isDirectory()) walk(p);
      else out[path.relative(root, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(root);
  return out;
}

async function run(project: string, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(projectFiles(project))) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(`mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`, { i: { title: project, request, files: manifest } }, user.token);
  const id = r.data.createJob.id as string;
  const end = Date.now() + 110_000;
  for (;;) {
    const job = (await api.gql(JOB, { id }, user.token)).data.job;
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status)) return job;
    if (Date.now() > end) throw new Error(`timed out: ${JSON.stringify(job)}`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

describe('projects as their authors wrote them', () => {
  it('a top-level training script (no __main__ block) with --cuda/--mps switches: the flags the user wrote win, no switch gets a value', { timeout: 120_000 }, async () => {
    const job = await run('word-lm', 'train it for 1 epoch with --emsize 16 and give me the model');
    expect(job.status, job.statusReason).toBe('SUCCEEDED');
    // CPU worker: neither --cuda nor --mps; --save into outputs/; --dry-run untouched.
    expect(job.currentPlan.command).toBe('python main.py --emsize 16 --epochs 1 --save outputs/model.pt');
    expect(job.currentPlan.acceptanceCriteria.evaluate).toMatchObject({ checkpoint: 'outputs/model.pt', command: 'python -m chatgpu.reload_check outputs/model.pt', reports: ['reload_ok'] });
    expect(job.tasks.map((t: any) => [t.kind, t.status])).toEqual([['RUN', 'SUCCEEDED'], ['EVALUATE', 'SUCCEEDED']]);
    expect(job.outputs.map((o: any) => o.path)).toContain('outputs/model.pt');
  });

  it('store_true switches are passed, never given a value: --no-cuda/--no-mps on a CPU worker, --save-model when the model is asked for', { timeout: 120_000 }, async () => {
    const job = await run('mnist-like', 'train for 1 epoch and give me the model');
    expect(job.status, job.statusReason).toBe('SUCCEEDED');
    expect(job.currentPlan.command).toBe('python main.py --epochs 1 --no-cuda --no-mps --save-model');
    expect(job.currentPlan.acceptanceCriteria.evaluate).toMatchObject({ checkpoint: 'mnist_cnn.pt', command: 'python -m chatgpu.reload_check mnist_cnn.pt' });
    expect(job.outputs.map((o: any) => o.path)).toContain('mnist_cnn.pt');
  });
});
