/**
 * A worker does not download what it has just uploaded: the evaluation that reloads the run's
 * checkpoint, claimed by the worker that ran the run, copies the checkpoint from that worker's
 * recent outputs (worker/src/recentOutputs.ts). A real API (a scripted planner's plan: a run that
 * keeps outputs/model.bin, an evaluation that reloads it) and one real sandboxed worker that reaches
 * the API through a proxy on 127.0.0.1 counting blob downloads: the checkpoint is never fetched,
 * the evaluation reads the same bytes, and its log says where they came from. Nor is it uploaded
 * again as the evaluation's output: an evaluation's input left unchanged is the run's output already.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { completed, createScriptedClient, fnCall } from '../src/agents/models/scriptedClient.js';
import { startTestApi } from './helpers/api.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const TRAIN = `import hashlib, os
os.makedirs("outputs", exist_ok=True)
data = bytes(range(256)) * 8192
open("outputs/model.bin", "wb").write(data)
print("kept", hashlib.sha256(data).hexdigest())
`;
const EVAL = `import hashlib, sys
print("reloaded", hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())
`;

const plan = {
  summary: 'Keep a checkpoint, then reload it on a worker.',
  asks: [],
  steps: ['Run train.py', 'Reload outputs/model.bin'],
  command: 'python train.py',
  hardware: { workload: 'python' },
  timeoutSec: 300,
  outputs: ['outputs'],
  acceptance: {
    exitCode: 0,
    requiredFiles: ['outputs/model.bin'],
    metrics: [],
    evaluate: { checkpoint: 'outputs/model.bin', command: 'python eval.py outputs/model.bin' },
  },
};

const api = await startTestApi(
  { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' },
  { scheduler: true, model: createScriptedClient([completed(fnCall('submit_plan', plan))]) },
);
const user = await api.signUp();
const prisma = api.server.db.prisma;

/** Forwards the worker's requests to the API and records every blob it downloads and uploads. */
async function countingProxy() {
  const downloads: string[] = [];
  const uploads: string[] = [];
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/blobs/')) (req.method === 'GET' ? downloads : uploads).push(req.url.slice('/blobs/'.length));
    const up = request(
      `${api.url}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: new URL(api.url).host }, agent: false },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, downloads, uploads };
}

it("the evaluation takes the run's checkpoint from the worker that uploaded it, not from the API", async () => {
  const proxy = await countingProxy();
  const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
  const w = await startWorker(proxy.url, wt.data.createWorkerToken.token, 'keeps', ['--python', '/usr/bin/python3', '--sandbox', 'bwrap']);
  afterAll(() => w.stop());
  const files = [
    { path: 'train.py', sha256: (await api.putBlob(TRAIN, user.token)).sha256 },
    { path: 'eval.py', sha256: (await api.putBlob(EVAL, user.token)).sha256 },
  ];
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
    { i: { title: 'keeps', request: 'run the project', files } },
    user.token,
  );
  const jobId = Buffer.from(r.data.createJob.id as string, 'base64')
    .toString()
    .split(':')[1]!;
  const job = await waitFor(
    async () => {
      const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.status) ? j : null;
    },
    120_000,
    'the job to end',
  );
  expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
  const tasks = await prisma.task.findMany({ where: { jobId }, include: { attempts: true }, orderBy: { createdAt: 'asc' } });
  const run = tasks.find((t) => t.kind === 'RUN')!;
  const evaluation = tasks.find((t) => t.kind === 'EVALUATE')!;
  const checkpoint = (run.result as { outputs: { path: string; sha256: string }[] }).outputs.find((o) => o.path === 'outputs/model.bin')!;
  // The run's code was downloaded (the worker had none of it); the checkpoint never was.
  expect(proxy.downloads).toContain(files[0]!.sha256);
  expect(proxy.downloads).not.toContain(checkpoint.sha256);
  const log = (attemptId: string) =>
    prisma.logChunk.findMany({ where: { attemptId }, orderBy: { seq: 'asc' } }).then((l) => l.map((x) => x.text).join('\n'));
  const evalLog = await log(evaluation.attempts[0]!.id);
  expect(evalLog).toContain("outputs/model.bin: this worker's own output of a recent attempt, copied here, not downloaded again");
  expect(evalLog).toContain(`reloaded ${checkpoint.sha256}`);
  expect(await log(run.attempts[0]!.id)).toContain(`kept ${checkpoint.sha256}`);
  // Uploaded once, by the run; the evaluation's outputs leave out the input it did not change.
  expect(proxy.uploads.filter((s) => s === checkpoint.sha256)).toHaveLength(1);
  const evalOutputs = ((evaluation.result as { outputs?: { path: string }[] } | null)?.outputs ?? []).map((o) => o.path);
  expect(evalOutputs).not.toContain('outputs/model.bin');
  expect(evalLog).toMatch(
    /1 input file\(s\) matched the outputs but were not changed by the program, so they are not outputs: outputs\/model\.bin/,
  );
}, 180_000);
