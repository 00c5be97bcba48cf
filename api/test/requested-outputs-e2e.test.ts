/**
 * Outputs the user asked for, end to end: a plan (from a scripted model) that asks the worker for
 * the figures a matplotlib program only shows and for its stdout as a file, run by a real worker
 * process in its sandbox with Debian's matplotlib; the job's outputs hold the figures and the
 * output, and never a file of the upload the program left as it was.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { completed, createScriptedClient, fnCall } from '../src/agents/models/scriptedClient.js';
import { createTask } from '../src/domain/jobs/createTask.js';
import { jobOutputs } from '../src/domain/jobs/jobOutputs.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';
import { waitFor } from './helpers/waitFor.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const PLOT = [
  'import csv',
  'import matplotlib.pyplot as plt',
  'rows = list(csv.reader(open("data.csv")))[1:]',
  'xs = [float(r[0]) for r in rows]; ys = [float(r[1]) for r in rows]',
  'plt.plot(xs, ys); plt.title("line")',
  'plt.show()',
  'plt.figure(); plt.scatter(xs, ys); plt.title("points")',
  'plt.show()',
  'plt.figure(); plt.bar(xs, ys); plt.title("left open")',
  'print(f"{len(rows)} rows, mean {sum(ys) / len(ys):.2f}")',
].join('\n');
const DATA = 'x,y\n1,2\n2,4\n3,9\n';

const REQUEST = 'run plot.py and give me the figures and the output';
const plan = {
  summary: 'Run plot.py; its figures are saved as it shows them, its output kept as a file.',
  asks: [
    { ask: 'run plot.py', kind: 'target', status: 'honoured', detail: 'python plot.py' },
    { ask: 'the figures', kind: 'output', status: 'honoured', detail: 'each figure saved as it is shown, under outputs/figures/' },
    { ask: 'the output', kind: 'output', status: 'honoured', detail: "the program's stdout kept as outputs/stdout.txt" },
  ],
  steps: ['Run `python plot.py`'],
  command: 'python plot.py',
  environment: [
    { name: 'CHATGPU_FIGURES', value: 'outputs/figures' },
    { name: 'CHATGPU_STDOUT_FILE', value: 'outputs/stdout.txt' },
  ],
  hardware: { workload: 'python', accelVendor: null, minMemoryMiB: null, minAccelMemoryMiB: null },
  timeoutSec: 600,
  // '*.csv' and '*.py' match the uploaded files too: they are not results
  outputs: ['outputs', '*.csv', '*.py'],
  acceptance: { exitCode: 0, requiredFiles: ['outputs/figures/', 'outputs/stdout.txt'], metrics: [], evaluate: null },
};
const model = createScriptedClient([() => completed(fnCall('submit_plan', plan))]);

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'plotter', ['--python', '/usr/bin/python3']);
const prisma = api.server.db.prisma;

const JOB = `query($id: ID!) { job(id: $id) { status statusReason outputs { path sha256 } tasks { kind status } } }`;

async function submit(files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id originalCode { id } } } }`,
    { i: { title: 'plots', request, files: manifest } },
    user.token,
  );
  return {
    id: r.data.createJob.id as string,
    jobId: Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!,
    codeVersionId: r.data.createJob.originalCode.id as string,
  };
}

describe('outputs the user asked for', () => {
  it("a program that only calls plt.show(): its figures and its output are among the job's outputs; its inputs are not", async () => {
    const { id, jobId } = await submit({ 'plot.py': PLOT, 'data.csv': DATA }, REQUEST);
    const job = await waitFor(
      async () => {
        const j = (await api.gql(JOB, { id }, user.token)).data.job;
        return ['SUCCEEDED', 'FAILED'].includes(j.status) ? j : null;
      },
      120_000,
      'job done',
    );
    // What the planner's tools answered, when the plan was refused.
    const answers = async () =>
      JSON.stringify((await prisma.agentItem.findMany({ where: { run: { jobId } }, orderBy: { seq: 'asc' } })).map((i) => i.payload)).slice(
        0,
        3000,
      );
    expect(job.status, `${job.statusReason} ${job.status === 'SUCCEEDED' ? '' : await answers()}`).toBe('SUCCEEDED');
    expect(job.outputs.map((o: { path: string }) => o.path)).toEqual([
      'outputs/figures/figure-1.png',
      'outputs/figures/figure-2.png',
      'outputs/figures/figure-3.png',
      'outputs/stdout.txt',
    ]);
    for (const o of job.outputs.filter((x: { path: string }) => x.path.endsWith('.png'))) {
      const blob = await api.getBlob(o.sha256, user.token);
      expect(blob.bytes.subarray(0, 8).equals(PNG)).toBe(true);
    }
    const stdout = job.outputs.find((o: { path: string }) => o.path === 'outputs/stdout.txt');
    expect((await api.getBlob(stdout.sha256, user.token)).bytes.toString()).toBe('3 rows, mean 5.00\n');
  }, 150_000);

  it("jobOutputs leaves out a file of the task's code that a result lists unchanged (a worker that did not filter it)", async () => {
    const job = await submit({ 'main.py': 'print(1)\n', 'data.csv': DATA }, 'run main.py');
    const task = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'old-worker',
      codeVersionId: job.codeVersionId,
      command: 'python main.py',
      requirements: { workload: 'torch-cuda', accelVendor: 'nvidia' },
    });
    // Test setup: the result a worker without the rule would have reported.
    const outputs = [
      { path: 'data.csv', sha256: sha(DATA), size: DATA.length, mode: 0o644 },
      { path: 'main.py', sha256: sha('changed\n'), size: 8, mode: 0o644 },
      { path: 'outputs/result.txt', sha256: sha('r'), size: 1, mode: 0o644 },
    ];
    await prisma.task.update({ where: { id: task.id }, data: { status: 'SUCCEEDED', result: { exitCode: 0, outputs } } });
    expect((await jobOutputs(prisma, job.jobId)).map((o) => o.path)).toEqual(['main.py', 'outputs/result.txt']);
  });
});
