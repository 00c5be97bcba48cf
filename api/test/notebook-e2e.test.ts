/**
 * A notebook project end to end: a plan (from a scripted model) whose command is the worker's
 * notebook runner (`python -m chatgpu.notebook`), run by a real worker process in its sandbox with
 * Debian's nbclient/ipykernel, NumPy and matplotlib. The job SUCCEEDS with the executed notebook and
 * its figure among its outputs, the request's setting honoured and the cells' metrics collected; a
 * notebook whose cell raises FAILS, its log naming the cell and the line.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { completed, createScriptedClient, fnCall } from '../src/agents/models/scriptedClient.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';
import { waitFor } from './helpers/waitFor.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** An nbformat 4.4 notebook of code cells (and one markdown cell first). */
function notebook(cells: string[]): string {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 4,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    cells: [
      { cell_type: 'markdown', metadata: {}, source: ['# Fit a line'] },
      ...cells.map((source) => ({ cell_type: 'code', execution_count: null, metadata: {}, outputs: [], source: source.split(/(?<=\n)/) })),
    ],
  });
}

const FIT = notebook([
  '%matplotlib inline\nimport numpy as np\nimport matplotlib.pyplot as plt\nlr = 0.1\nsteps = 5',
  'from chatgpu.metrics import log\nx = np.linspace(0, 1, 20)\ny = 3 * x + 1\nw, b = 0.0, 0.0\nfor step in range(steps):\n    err = w * x + b - y\n    w -= lr * 2 * (err * x).mean()\n    b -= lr * 2 * err.mean()\n    log(step=step, loss=float((err ** 2).mean()))\nprint(f"lr={lr} w={w:.4f}")',
  'plt.plot(x, y, "o")\nplt.plot(x, w * x + b)\nplt.title("fit")',
]);
const BROKEN = notebook(['import numpy as np\nvalues = np.arange(3)', 'total = values.sum()\nitem = values[7]\nprint("unreachable")']);

const plan = (file: string, args: string) => ({
  summary: `Run the notebook ${file} top to bottom with the worker's notebook runner.`,
  asks: [
    { ask: file, kind: 'target', status: 'honoured', detail: `python -m chatgpu.notebook ${file}` },
    ...(args ? [{ ask: 'lr 0.3', kind: 'setting', status: 'honoured', detail: `passed \`${args.trim()}\`` }] : []),
  ],
  steps: [`Run \`python -m chatgpu.notebook ${file}${args}\``],
  command: `python -m chatgpu.notebook ${file}${args}`,
  environment: [{ name: 'CHATGPU_FIGURES', value: 'outputs/figures' }],
  hardware: { workload: 'python', accelVendor: null, minMemoryMiB: null, minAccelMemoryMiB: null },
  timeoutSec: 600,
  outputs: ['outputs'],
  acceptance: { exitCode: 0, requiredFiles: [`outputs/${file}`], metrics: [], evaluate: null },
});
const model = createScriptedClient([
  () => completed(fnCall('submit_plan', plan('fit.ipynb', ' --set lr=0.3'))),
  () => completed(fnCall('submit_plan', plan('broken.ipynb', ''))),
]);

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const worker = await startWorker(api.url, wt.data.createWorkerToken.token, 'notebooks', ['--python', '/usr/bin/python3']);
afterAll(async () => {
  await worker.stop();
  await api.server.close();
});
const prisma = api.server.db.prisma;

const JOB = `query($id: ID!) { job(id: $id) { status statusReason outputs { path sha256 } } }`;

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

async function finished(id: string) {
  return waitFor(
    async () => {
      const j = (await api.gql(JOB, { id }, user.token)).data.job;
      return ['SUCCEEDED', 'FAILED'].includes(j.status) ? j : null;
    },
    150_000,
    'job done',
  );
}

async function logs(jobId: string) {
  const attempts = await prisma.attempt.findMany({ where: { task: { jobId } }, select: { id: true, metrics: true } });
  const lines = await prisma.logChunk.findMany({
    where: { attemptId: { in: attempts.map((a) => a.id) } },
    orderBy: [{ attemptId: 'asc' }, { seq: 'asc' }],
  });
  return { text: lines.map((l) => `${l.stream}: ${l.text}`).join('\n'), attempts };
}

describe('a notebook as a job', () => {
  it("SUCCEEDS: the executed notebook (setting honoured, figure embedded) and the figure file are outputs; the cells' metrics are collected", async () => {
    const { id, jobId } = await submit({ 'fit.ipynb': FIT }, 'run the notebook fit.ipynb with lr 0.3');
    const job = await finished(id);
    const log = await logs(jobId);
    const answers = async () =>
      JSON.stringify((await prisma.agentItem.findMany({ where: { run: { jobId } }, orderBy: { seq: 'asc' } })).map((i) => i.payload)).slice(
        0,
        3000,
      );
    expect(job.status, `${job.statusReason}\n${log.text.slice(-3000)}\n${job.status === 'SUCCEEDED' ? '' : await answers()}`).toBe(
      'SUCCEEDED',
    );
    expect(job.outputs.map((o: { path: string }) => o.path)).toEqual(['outputs/figures/figure-1.png', 'outputs/fit.ipynb']);
    expect(log.text).toContain('stdout: lr=0.3 w=');
    expect(log.text).toContain('lr = 0.3 in cell 2 line 4 (was 0.1)');
    const figure = await api.getBlob(job.outputs[0].sha256, user.token);
    expect(figure.bytes.subarray(0, 8).equals(PNG)).toBe(true);
    const executed = JSON.parse((await api.getBlob(job.outputs[1].sha256, user.token)).bytes.toString());
    const cells = executed.cells.filter((c: { cell_type: string }) => c.cell_type === 'code');
    expect(cells.map((c: { execution_count: number }) => c.execution_count)).toEqual([1, 2, 3]);
    expect([cells[0].source].flat().join('')).toContain('lr = 0.3\n');
    const embedded = cells[2].outputs.find((o: { data?: Record<string, unknown> }) => o.data?.['image/png']);
    expect(Buffer.from([embedded.data['image/png']].flat().join(''), 'base64').equals(figure.bytes)).toBe(true);
    const points = await prisma.metricPoint.findMany({
      where: { attemptId: { in: log.attempts.map((a) => a.id) }, name: 'loss' },
      orderBy: { seq: 'asc' },
    });
    expect(points.map((p) => p.step)).toEqual([0, 1, 2, 3, 4]);
    expect(points[4]!.value).toBeLessThan(points[0]!.value);
  }, 200_000);

  it('a cell that raises FAILS the job; its log names the cell, the line and the error', async () => {
    const { id, jobId } = await submit({ 'broken.ipynb': BROKEN }, 'run the notebook broken.ipynb');
    const job = await finished(id);
    const log = await logs(jobId);
    expect(job.status).toBe('FAILED');
    expect(log.text).toContain('cell 3 (In [2]) failed at line 2: item = values[7]');
    expect(job.statusReason).toContain(
      'chatgpu.notebook: cell 3 (In [2]) failed at line 2 (item = values[7]): IndexError: index 7 is out of bounds for axis 0 with size 3',
    );
    expect(log.text).toContain('IndexError: index 7 is out of bounds for axis 0 with size 3');
    expect(log.text).not.toContain('stdout: unreachable'); // the traceback shows the line, the cell never printed it
  }, 200_000);
});
