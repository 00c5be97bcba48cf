/**
 * A project that is only a notebook, planned by the builtin planner and run by a real sandboxed
 * worker: the notebook is the entry point (not "No entry point"), the request's setting becomes
 * `--set lr=0.01` for the worker's notebook runner (the notebook's settings cell, matched like any
 * setting), and the job SUCCEEDS with the executed notebook and its figure.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';
import { waitFor } from './helpers/waitFor.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const worker = await startWorker(api.url, wt.data.createWorkerToken.token, 'nb-box', ['--python', '/usr/bin/python3']);
afterAll(async () => {
  await worker.stop();
  await api.server.close();
});
const prisma = api.server.db.prisma;

const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 4,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    { cell_type: 'markdown', metadata: {}, source: ['# Gradient descent on a line\n', 'Change `lr` to see it converge faster.'] },
    {
      cell_type: 'code',
      execution_count: null,
      metadata: {},
      outputs: [],
      source: ['import numpy as np\n', 'import matplotlib.pyplot as plt\n', 'lr = 0.1  # learning rate\n', 'steps = 30'],
    },
    {
      cell_type: 'code',
      execution_count: null,
      metadata: {},
      outputs: [],
      source: [
        'x = np.linspace(0, 1, 50)\n',
        'y = 2 * x\n',
        'w = 0.0\n',
        'losses = []\n',
        'for _ in range(steps):\n',
        '    w -= lr * 2 * ((w * x - y) * x).mean()\n',
        '    losses.append(((w * x - y) ** 2).mean())\n',
        'print(f"lr={lr} final loss {losses[-1]:.6f}")',
      ],
    },
    {
      cell_type: 'code',
      execution_count: null,
      metadata: {},
      outputs: [],
      source: ['plt.plot(losses)\n', 'plt.yscale("log")\n', 'plt.title("loss")'],
    },
  ],
});

const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { command asks { ask kind status detail } } outputs { path sha256 } } }`;

async function submit(files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title: 'notebook', request, files: manifest } },
    user.token,
  );
  return { id: r.data.createJob.id as string, jobId: Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]! };
}

describe('the builtin planner and a notebook', () => {
  it(
    '"run the notebook with lr 0.01": the notebook runner with --set lr=0.01, SUCCEEDED with the executed notebook and its figure',
    { timeout: 200_000 },
    async () => {
      const { id, jobId } = await submit({ 'descent.ipynb': NOTEBOOK }, 'run the notebook with lr 0.01');
      const job = await waitFor(
        async () => {
          const j = (await api.gql(JOB, { id }, user.token)).data.job;
          return ['SUCCEEDED', 'FAILED', 'NEEDS_INPUT', 'CANCELLED'].includes(j.status) ? j : null;
        },
        180_000,
        'job done',
      );
      const lines = await prisma.logChunk.findMany({
        where: { attempt: { task: { jobId } } },
        orderBy: [{ attemptId: 'asc' }, { seq: 'asc' }],
      });
      const log = lines.map((l) => `${l.stream}: ${l.text}`).join('\n');
      expect(job.status, `${job.statusReason}\n${JSON.stringify(job.currentPlan)}\n${log.slice(-2000)}`).toBe('SUCCEEDED');
      expect(job.currentPlan.command).toMatch(/^python -m chatgpu\.notebook descent\.ipynb --set lr=0\.01\b/);
      expect(job.currentPlan.asks).toEqual(
        expect.arrayContaining([expect.objectContaining({ ask: 'lr 0.01', kind: 'setting', status: 'honoured' })]),
      );
      expect(log).toContain('stdout: lr=0.01 final loss');
      expect(log).toContain('lr = 0.01 in cell 2 line 3 (was 0.1)');
      const paths = job.outputs.map((o: { path: string }) => o.path);
      expect(paths).toEqual(expect.arrayContaining(['outputs/descent.ipynb', 'outputs/figures/figure-1.png']));
    },
  );
});
