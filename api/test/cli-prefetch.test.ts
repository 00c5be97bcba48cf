/**
 * `chatgpu submit --wait --out DIR` downloads the run's outputs while the job validates, not
 * after it ends. A real API (a scripted planner submits a plan whose run keeps a checkpoint that
 * an evaluation task reloads), a real worker process that reaches the API through a proxy on
 * 127.0.0.1, and the real CLI. The proxy holds the evaluation attempt's completion: the job stays
 * VALIDATING until the test lets it go, which it does only once the CLI has staged the run's
 * outputs (a CLI that downloads only after the job ended never does, and the test times out).
 * Then the job succeeds and the files are in place, byte-identical, with no staging folder left.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { completed, createScriptedClient, fnCall } from '../src/agents/models/scriptedClient.js';
import { PREFETCH_DIR } from '../src/cli/prefetch.js';
import { startTestApi } from './helpers/api.js';
import { startCli } from './helpers/cli.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const TRAIN = `import os
os.makedirs("outputs", exist_ok=True)
with open("outputs/model.bin", "wb") as f:
    f.write(bytes(range(256)) * 4096)
with open("outputs/table.csv", "w") as f:
    f.write("epoch,loss\\n1,0.5\\n2,0.25\\n")
print("trained")
`;
const EVAL = `import sys
data = open(sys.argv[1], "rb").read()
print("reloaded", len(data), "bytes")
`;

const plan = {
  summary: 'Train, keep the checkpoint, reload it and evaluate it on a worker.',
  asks: [],
  steps: ['Run train.py', 'Reload and evaluate outputs/model.bin'],
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
const tmp = await mkdtemp(path.join(tmpdir(), 'chatgpu-prefetch-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

/** Forwards the worker's requests to the API, holding the evaluation attempt's completion (and its retries) until released. */
async function holdEvaluationCompletion() {
  let holding = true;
  let held: (() => void)[] = [];
  let seen = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const forward = () => {
        const up = request(
          `${api.url}${req.url}`,
          { method: req.method, headers: { ...req.headers, host: new URL(api.url).host }, agent: false },
          (upRes) => {
            res.writeHead(upRes.statusCode ?? 502, upRes.headers);
            upRes.pipe(res);
          },
        );
        up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
        up.end(body);
      };
      if (holding && body.includes('completeAttempts(')) {
        const ids = [...body.toString().matchAll(/"attemptId":"([0-9a-f-]{36})"/g)].map((m) => m[1]!);
        // (0 once the API is gone at the end of the file: forwarded, and refused there.)
        const evaluation = await prisma.attempt.count({ where: { id: { in: ids }, task: { kind: 'EVALUATE' } } }).catch(() => 0);
        if (evaluation > 0) {
          seen = true;
          held.push(forward);
          return;
        }
      }
      forward();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holdingOne: () => seen,
    release() {
      holding = false;
      for (const f of held) f();
      held = [];
    },
  };
}

it('submit --wait --out stages the run outputs while the evaluation runs, then puts them in place', async () => {
  const proxy = await holdEvaluationCompletion();
  const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
  const w = await startWorker(proxy.url, wt.data.createWorkerToken.token, 'prefetch-box', ['--python', '/usr/bin/python3']);
  afterAll(() => w.stop());

  const dir = path.join(tmp, 'project');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'train.py'), TRAIN);
  await writeFile(path.join(dir, 'eval.py'), EVAL);
  const out = path.join(tmp, 'out');
  const cli = startCli(['submit', dir, '-m', 'run the project', '--wait', '--out', out, '--server', api.url], {
    env: { HOME: path.join(tmp, 'home'), CHATGPU_DATA_DIR: path.join(tmp, 'no-data'), CHATGPU_TOKEN: user.token },
  });

  const run = await waitFor(
    async () => {
      if (cli.child.exitCode !== null) throw new Error(`the CLI exited ${cli.child.exitCode}:\n${cli.output()}`);
      return prisma.task.findFirst({ where: { kind: 'RUN', status: 'SUCCEEDED' }, select: { jobId: true, result: true } });
    },
    120_000,
    'the run to succeed',
  );
  const outputs = (run.result as { outputs: { path: string; sha256: string }[] }).outputs;
  expect(outputs.map((o) => o.path).sort()).toEqual(['outputs/model.bin', 'outputs/table.csv']);
  // Both staged by the CLI while the evaluation's completion is held: the job has not ended.
  await waitFor(
    async () => outputs.every((o) => existsSync(path.join(out, PREFETCH_DIR, o.sha256))),
    60_000,
    'the CLI to stage the run outputs during validation',
  );
  expect((await prisma.job.findUniqueOrThrow({ where: { id: run.jobId } })).status).toBe('VALIDATING');
  await waitFor(async () => proxy.holdingOne(), 60_000, 'the evaluation to complete (held)');
  expect((await prisma.job.findUniqueOrThrow({ where: { id: run.jobId } })).status).toBe('VALIDATING');
  proxy.release();

  expect(await cli.exited, cli.output()).toBe(0);
  expect(cli.output()).toContain('● VALIDATING');
  expect(cli.output()).toMatch(/↓ outputs\/model\.bin \(/);
  expect(await readFile(path.join(out, 'outputs/model.bin'))).toEqual(Buffer.concat(Array(4096).fill(Buffer.from([...Array(256).keys()]))));
  expect(await readFile(path.join(out, 'outputs/table.csv'), 'utf8')).toBe('epoch,loss\n1,0.5\n2,0.25\n');
  expect(JSON.parse(await readFile(path.join(out, 'job.json'), 'utf8'))).toMatchObject({ status: 'SUCCEEDED', validated: true });
  expect(existsSync(path.join(out, PREFETCH_DIR))).toBe(false);
  expect((await readdir(out)).sort()).toEqual(['job.json', 'outputs']);
}, 240_000);
