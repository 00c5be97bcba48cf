/**
 * Data downloads end to end (issue 38 item 3, docs/data-downloads.md), builtin planner and real
 * sandboxed workers, the download source a local HTTP server on 127.0.0.1 that counts what it is asked:
 *   - prepare.py fetches the corpus: it runs as its own step, marked as a data download, with the
 *     network; the run has none (train.py tries to connect to the same server and must fail);
 *   - a second job with the same data on the same worker restores the step's outputs from the
 *     worker's download cache (the server saw exactly one request, one connection);
 *   - a worker whose owner chose --allow-network never (it advertises so) is not given the step: the
 *     step waits, saying no online worker allows downloads and naming the worker's policy, and the
 *     server is asked nothing (placement by policy, api/test/placement-network.test.ts);
 *   - a download that fails (404) stops the job before its run the same way.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { startWorker, type TestWorker } from './helpers/worker.js';
import { waitFor } from './helpers/waitFor.js';

const CORPUS = 'to be or not to be that is the question\n'.repeat(50);
const seen = { requests: [] as string[], connections: 0 };
const source: Server = createServer((req, res) => {
  seen.requests.push(req.url ?? '');
  if (req.url === '/corpus/input.txt' || req.url === '/corpus/other.txt') res.end(CORPUS);
  else res.writeHead(404).end('no such file');
});
source.on('connection', () => seen.connections++);
await new Promise<void>((r) => source.listen(0, '127.0.0.1', r));
const port = (source.address() as AddressInfo).port;

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const token = async (name: string) =>
  (
    await api.gql(
      `mutation($n: String!) { createWorkerToken(input: {name: $n}) { ... on CreatedWorkerToken { token } } }`,
      { n: name },
      user.token,
    )
  ).data.createWorkerToken.token as string;
let worker: TestWorker | null = await startWorker(api.url, await token('w1'), 'dl-box', ['--python', '/usr/bin/python3']);
let refusing: TestWorker | null = null;
afterAll(async () => {
  await worker?.stop();
  await refusing?.stop();
  await api.server.close();
  await new Promise((r) => source.close(r));
});
const prisma = api.server.db.prisma;

const prepare = (file: string) =>
  [
    'import os',
    'import urllib.request',
    '',
    `URL = "http://127.0.0.1:${port}/corpus/${file}"`,
    'here = os.path.dirname(os.path.abspath(__file__))',
    'text = urllib.request.urlopen(URL, timeout=20).read().decode()',
    "with open(os.path.join(here, 'corpus.txt'), 'w') as f:",
    '    f.write(text)',
    'print(f"downloaded {len(text)} characters")',
  ].join('\n');

// The run reads what the step made, then tries the same server itself: it must not reach it.
const TRAIN = [
  'import os',
  'import socket',
  '',
  "text = open('corpus.txt').read()",
  'print(f"read {len(text)} characters, {len(set(text))} distinct")',
  'try:',
  `    socket.create_connection(("127.0.0.1", ${port}), timeout=5).close()`,
  '    reached = True',
  'except OSError as e:',
  '    reached = False',
  '    print(f"RUN_NETWORK=unreachable ({type(e).__name__})")',
  "os.makedirs('outputs', exist_ok=True)",
  "open('outputs/vocab.txt', 'w').write(''.join(sorted(set(text))))",
  'if reached:',
  '    raise SystemExit("RUN_NETWORK=reachable: the run must have no network")',
].join('\n');

const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { summary steps command } outputs { path sha256 } } }`;

async function submit(files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title: 'download then train', request, files: manifest } },
    user.token,
  );
  return { id: r.data.createJob.id as string, jobId: Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]! };
}

async function finished(id: string) {
  return waitFor(
    async () => {
      const j = (await api.gql(JOB, { id }, user.token)).data.job;
      return ['SUCCEEDED', 'FAILED', 'NEEDS_INPUT', 'CANCELLED', 'STOPPED'].includes(j.status) ? j : null;
    },
    180_000,
    'job done',
  );
}

async function logOf(jobId: string, taskName: string) {
  const lines = await prisma.logChunk.findMany({
    where: { attempt: { task: { jobId, name: taskName } } },
    orderBy: [{ attemptId: 'asc' }, { seq: 'asc' }],
  });
  return lines.map((l) => `${l.stream}: ${l.text}`).join('\n');
}

const URL1 = () => `http://127.0.0.1:${port}/corpus/input.txt`;

describe('a project whose prepare step downloads', () => {
  it(
    'the download runs in its own step with the network; the run has none; a second job reuses the cache',
    { timeout: 400_000 },
    async () => {
      const files = { 'prepare.py': prepare('input.txt'), 'train.py': TRAIN };
      const first = await submit(files, 'train it on the corpus');
      const job = await finished(first.id);
      const stepLog = await logOf(first.jobId, 'step:prepare-data');
      const runLog = await logOf(first.jobId, 'run');
      expect(job.status, `${job.statusReason}\n${JSON.stringify(job.currentPlan)}\n${stepLog}\n${runLog}`).toBe('SUCCEEDED');
      // The plan: a separate step marked as a data download, naming the URL and why.
      expect(job.currentPlan.summary).toContain(`prepare.py downloads its data (urllib; from ${URL1()})`);
      expect(job.currentPlan.steps[0]).toContain('the only step with the network');
      const tasks = await prisma.task.findMany({ where: { jobId: first.jobId }, select: { name: true, requirements: true } });
      const step = tasks.find((t) => t.name === 'step:prepare-data')!;
      const run = tasks.find((t) => t.name === 'run')!;
      expect(step.requirements).toMatchObject({ network: true, download: { urls: [URL1()], files: ['prepare.py'] } });
      expect((run.requirements as { network?: boolean }).network).toBeUndefined();
      // The step had the network (and said so); the run had none, tested from inside it.
      expect(stepLog).toMatch(/worker: running `python prepare\.py` \(attempt 1; sandbox \w+, network host/);
      expect(stepLog).toContain('stdout: downloaded 2000 characters');
      expect(stepLog).toContain("in this worker's download cache");
      expect(runLog).toMatch(/network isolated/);
      expect(runLog).toContain('stdout: read 2000 characters');
      expect(runLog).toContain('stdout: RUN_NETWORK=unreachable');
      expect(job.outputs.map((o: { path: string }) => o.path)).toContain('outputs/vocab.txt');
      expect(seen.requests).toEqual(['/corpus/input.txt']);
      expect(seen.connections).toBe(1);

      // The same data again on the same worker: restored from its cache, not downloaded.
      const second = await submit(files, 'train it on the corpus');
      const job2 = await finished(second.id);
      const stepLog2 = await logOf(second.jobId, 'step:prepare-data');
      expect(job2.status, `${job2.statusReason}\n${stepLog2}`).toBe('SUCCEEDED');
      expect(stepLog2).toContain("worker: data download found in this worker's cache");
      expect(stepLog2).toContain('restored corpus.txt instead of running `python prepare.py`');
      expect(stepLog2).not.toContain('stdout: downloaded');
      expect(await logOf(second.jobId, 'run')).toContain('stdout: read 2000 characters');
      expect(seen.requests).toEqual(['/corpus/input.txt']);
      expect(seen.connections).toBe(1);
    },
  );

  it(
    'only a worker whose policy is --allow-network never: it is not given the download step, which waits saying why',
    { timeout: 300_000 },
    async () => {
      await worker!.stop();
      worker = null;
      refusing = await startWorker(api.url, await token('w2'), 'no-net-box', ['--python', '/usr/bin/python3', '--allow-network', 'never']);
      const before = seen.requests.length;
      const { id, jobId } = await submit({ 'prepare.py': prepare('other.txt'), 'train.py': TRAIN }, 'train it on the corpus');
      // Once the stopped worker is marked offline, the step's wait names the refusing worker's policy.
      const step = await waitFor(
        async () => {
          const t = await prisma.task.findFirst({ where: { jobId, name: 'step:prepare-data' } });
          return t?.statusReason?.includes('no online worker allows downloads: no-net-box runs with --allow-network never') ? t : null;
        },
        180_000,
        'the download step waiting for a worker that allows downloads',
      );
      expect(step.status).toBe('QUEUED');
      expect(step.statusReason).toMatch(/^No online worker can run this: it needs .*a worker that allows data downloads/);
      // Not claimed (so not refused either), no run, and the source was asked nothing.
      expect(await prisma.attempt.count({ where: { taskId: step.id } })).toBe(0);
      expect(await prisma.task.count({ where: { jobId, name: 'run' } })).toBe(0);
      expect(seen.requests.length).toBe(before);
      // Cancelled, so the next test's worker does not take it.
      const cancelled = await api.gql(`mutation($id: ID!) { cancelJob(id: $id) { __typename ... on Job { status } } }`, { id }, user.token);
      expect(cancelled.data.cancelJob).toEqual({ __typename: 'Job', status: 'CANCELLED' });
    },
  );

  it(
    'a download that fails (the source answers 404): the job stops before the run, naming the URL and the policy',
    { timeout: 300_000 },
    async () => {
      await refusing!.stop();
      refusing = null;
      worker = await startWorker(api.url, await token('w3'), 'dl-box-2', ['--python', '/usr/bin/python3']);
      const { id, jobId } = await submit({ 'prepare.py': prepare('missing.txt'), 'train.py': TRAIN }, 'train it on the corpus');
      const job = await finished(id);
      const url = `http://127.0.0.1:${port}/corpus/missing.txt`;
      expect(job.status, `${job.statusReason}\n${await logOf(jobId, 'step:prepare-data')}`).toBe('FAILED');
      expect(job.statusReason).toContain(`the data download from ${url} failed (this worker's network policy: --allow-network downloads`);
      expect(job.statusReason).toContain('HTTP Error 404');
      expect(seen.requests).toContain('/corpus/missing.txt');
      expect(await prisma.task.count({ where: { jobId, name: 'run' } })).toBe(0);
      // A failed download is not cached: nothing was kept.
      expect(await logOf(jobId, 'step:prepare-data')).not.toContain('download cache');
    },
  );
});
