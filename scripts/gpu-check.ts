/**
 * The GPU check (issue 13 §2): on a machine with a real NVIDIA GPU, a real worker probes CUDA
 * and takes a REFERENCE and a RUN task of examples/fused-gelu-mlp through a real API; the
 * figures are printed. Run it through scripts/gpu-check.sh (preflight + time limit). Never part
 * of CI: the test suites use simulated accelerators (api/test/nvidia-to-amd-e2e.test.ts).
 *
 *   - API in this process (embedded PGlite in a temporary data folder, or DATABASE_URL), the
 *     scheduler on, no agents: the two tasks are queued directly on a job created over GraphQL
 *   - one real worker process (worker/bin/chatgpu-worker.mjs), no --simulate-accelerator
 *   - REFERENCE: the bounded workload (1 epoch, 1000 samples, seed 0), the CUDA library built by
 *     nvcc and the kernel launched on the GPU; RUN: 5 epochs, then evaluate.py reloads the model
 *   - then, on this machine's CPU, the same bounded workload with the CPU build of the kernel,
 *     compared tensor by tensor with the GPU reference (what the simulated workers stand for)
 *
 * Prints a JSON summary on the last line; exit code 0 only when both tasks succeeded, the
 * kernel ran on the GPU and the run's evaluation reported an accuracy.
 *
 * GPU_CHECK_SIMULATE=nvidia:RTX-4090:cuda-12.4 rehearses the script on a machine without a GPU
 * (the worker gets --simulate-accelerator; the kernel then runs as its CPU build, and the result
 * says SIMULATED): it checks the plumbing, not the GPU.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../api/src/config.js';
import { createTask } from '../api/src/domain/jobs/createTask.js';
import { silentLogger } from '../api/src/domain/resources.js';
import { compareOutputs } from '../api/src/preparation/compareOutputs.js';
import { findPython } from '../api/src/preparation/findPython.js';
import { startServer } from '../api/src/server.js';

const root = path.resolve(import.meta.dirname, '..');
const example = path.join(root, 'examples/fused-gelu-mlp');
const BOUNDED = 'python train.py --epochs 1 --samples 1000 --seed 0 --save outputs/model.pt';
const FULL = 'python train.py --epochs 5 --seed 0 --save outputs/model.pt && python evaluate.py --checkpoint outputs/model.pt';
const say = (m: string) => console.log(`[gpu-check] ${m}`);
const simulate = process.env.GPU_CHECK_SIMULATE || null;

async function files(dir: string, under = ''): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  for (const f of await readdir(path.join(dir, under))) {
    const rel = under ? `${under}/${f}` : f;
    if (['build', 'outputs', '__pycache__'].includes(f)) continue;
    if ((await stat(path.join(dir, rel))).isDirectory()) Object.assign(out, await files(dir, rel));
    else out[rel] = await readFile(path.join(dir, rel));
  }
  return out;
}

async function main(): Promise<number> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-gpu-check-'));
  const config = loadConfig({
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    CHATGPU_DATA_DIR: dataDir,
    CHATGPU_SIGNUP: 'open',
    TICK_INTERVAL_SEC: '1',
    HEARTBEAT_SEC: '2',
    NODE_ENV: 'development',
  });
  const server = await startServer({ config, log: silentLogger, webDir: null, scheduler: true, model: null });
  const prisma = server.db.prisma;
  const gql = async (query: string, variables: Record<string, unknown>, token?: string) => {
    const res = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as { data?: any; errors?: unknown[] };
  };
  let worker: ReturnType<typeof spawn> | null = null;
  try {
    say(`API at ${server.url} (${server.db.kind}), data in ${dataDir}`);
    const su = await gql(`mutation($i: SignUpInput!) { signUp(input: $i) { ... on AuthPayload { token } } }`, {
      i: { email: 'gpu-check@example.com', password: 'correct horse battery' },
    });
    const token: string = su.data.signUp.token;
    const wt = await gql(`mutation { createWorkerToken(input: {name: "gpu"}) { ... on CreatedWorkerToken { token } } }`, {}, token);

    // A real worker: it probes the machine (nvidia-smi, the Python with CUDA-enabled torch, nvcc).
    let out = '';
    worker = spawn(
      process.execPath,
      [
        path.join(root, 'worker/bin/chatgpu-worker.mjs'),
        '--server',
        server.url,
        '--name',
        'gpu-check',
        '--data-dir',
        path.join(dataDir, 'worker'),
        ...(process.env.GPU_CHECK_PYTHON ? ['--python', process.env.GPU_CHECK_PYTHON] : []),
        ...(simulate ? ['--simulate-accelerator', simulate] : []),
      ],
      {
        env: { ...process.env, CHATGPU_WORKER_TOKEN: wt.data.createWorkerToken.token },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    worker.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    worker.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    for (let i = 0; !/connected to .* as worker/.test(out); i++) {
      if (i > 240 || worker.exitCode !== null) throw new Error(`the worker did not connect:\n${out.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const w = await prisma.worker.findFirstOrThrow({ where: { name: 'gpu-check' } });
    const caps = w.capabilities as {
      accelerators?: unknown[];
      pythons?: { path: string; torch?: unknown }[];
      python?: string;
      toolchains?: unknown;
    };
    say(`worker probe: accelerators ${JSON.stringify(caps.accelerators)}`);
    say(
      `worker probe: workloads ${w.workloads.join(', ')}; toolchains ${JSON.stringify(caps.toolchains)}; python ${caps.python} torch ${JSON.stringify(caps.pythons?.find((p) => p.path === caps.python)?.torch ?? null)}`,
    );
    if (!w.workloads.includes('torch-cuda'))
      throw new Error(
        'the worker does not offer torch-cuda: no NVIDIA GPU seen, or no Python whose torch reaches CUDA (set GPU_CHECK_PYTHON)',
      );

    // The example as a job, over GraphQL; the two tasks queued on it directly (no planner).
    const manifest = [];
    for (const [p, content] of Object.entries(await files(example))) {
      const sha = createHash('sha256').update(content).digest('hex');
      const res = await fetch(`${server.url}/blobs/${sha}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}` },
        body: new Uint8Array(content),
      });
      if (res.status >= 300) throw new Error(`upload ${p}: HTTP ${res.status}`);
      manifest.push({ path: p, sha256: sha });
    }
    const job = await gql(
      `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
      { i: { title: 'gpu-check', request: 'gpu check', files: manifest } },
      token,
    );
    const jobId = Buffer.from(job.data.createJob.id, 'base64').toString().split(':')[1]!;
    const cv = await prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
    const req = { workload: 'torch-cuda' as const, accelVendor: 'nvidia' as const, timeoutSec: 1800, outputs: [] as string[] };
    const ref = await createTask(server.resources, {
      jobId,
      kind: 'REFERENCE',
      name: 'reference',
      codeVersionId: cv.id,
      command: BOUNDED,
      requirements: req,
      maxAttempts: 1,
    });
    const run = await createTask(server.resources, {
      jobId,
      kind: 'RUN',
      name: 'run',
      codeVersionId: cv.id,
      command: FULL,
      requirements: req,
      maxAttempts: 1,
    });
    for (let i = 0; ; i++) {
      const t = await prisma.task.findMany({ where: { id: { in: [ref.id, run.id] } } });
      if (t.every((x) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(x.status))) break;
      if (i > 3000) throw new Error('tasks did not finish within 50 minutes');
      await new Promise((r) => setTimeout(r, 1000));
    }

    const figures: Record<string, unknown> = {};
    let ok = true;
    for (const id of [ref.id, run.id]) {
      const t = await prisma.task.findUniqueOrThrow({ where: { id }, include: { currentAttempt: true } });
      const a = t.currentAttempt!;
      const logs = (await prisma.logChunk.findMany({ where: { attemptId: a.id }, orderBy: { seq: 'asc' } })).map((l) => l.text);
      const pick = (re: RegExp) => logs.filter((l) => re.test(l));
      const wall = a.startedAt && a.finishedAt ? (a.finishedAt.getTime() - a.startedAt.getTime()) / 1000 : null;
      const ranOn = pick(/fused bias\+gelu ran on:/).at(-1) ?? '';
      const evalLine = pick(/evaluation accuracy/).at(-1) ?? null;
      figures[t.name] = {
        status: t.status,
        exitCode: a.exitCode,
        wallSeconds: wall,
        usage: a.usage,
        kernel: pick(/^kernel: /),
        ranOn,
        epochs: pick(/^epoch /),
        evaluation: evalLine,
      };
      say(`${t.kind} ${t.name}: ${t.status} in ${wall ?? '?'} s — ${ranOn}`);
      for (const l of [...pick(/^kernel: /), ...pick(/^epoch /), ...(evalLine ? [evalLine] : [])]) say(`  ${l}`);
      if (t.status !== 'SUCCEEDED') {
        say(`  last log lines:\n${logs.slice(-20).join('\n')}`);
        ok = false;
      }
      if (!simulate && !/ran on: .*\bgpu\b/.test(ranOn)) ok = false;
    }
    if (!(figures.run as { evaluation: string | null }).evaluation) ok = false;

    // What the simulated workers stand for: the same bounded workload here on the CPU (the CPU
    // build of the same kernel source), compared with the GPU reference tensor by tensor.
    const refTask = await prisma.task.findUniqueOrThrow({ where: { id: ref.id } });
    const refOut = ((refTask.result as { outputs?: { path: string; sha256: string }[] } | null)?.outputs ?? []).find(
      (o) => o.path === 'outputs/model.pt',
    );
    const py = await findPython({ modules: ['torch', 'numpy'] });
    if (refOut && py) {
      const cmp = await mkdtemp(path.join(tmpdir(), 'gpu-check-cmp-'));
      await mkdir(path.join(cmp, 'gpu/outputs'), { recursive: true });
      await pipeline(await server.resources.blobs.read(refOut.sha256), createWriteStream(path.join(cmp, 'gpu/outputs/model.pt')));
      await cp(example, path.join(cmp, 'src'), { recursive: true });
      const started = Date.now();
      const cpu = spawnSync(
        py.path,
        ['train.py', '--epochs', '1', '--samples', '1000', '--seed', '0', '--save', path.join(cmp, 'cpu/outputs/model.pt')],
        { cwd: path.join(cmp, 'src'), env: { ...process.env, CUDA_VISIBLE_DEVICES: '' }, encoding: 'utf8' },
      );
      const cpuSec = (Date.now() - started) / 1000;
      if (cpu.status === 0) {
        const report = await compareOutputs({ reference: path.join(cmp, 'gpu'), candidate: path.join(cmp, 'cpu'), python: py.path });
        const worst = report.files.flatMap((f) => f.tensors ?? []).reduce((m, t) => Math.max(m, Number(t.max_abs_error ?? 0)), 0);
        figures.cpuBuildVsGpu = {
          ok: report.ok,
          tensors: report.summary.tensors,
          failed: report.summary.tensors_failed,
          maxAbsError: worst,
          cpuSeconds: cpuSec,
          ranOn: /fused bias\+gelu ran on: .*/.exec(cpu.stdout)?.[0] ?? null,
        };
        say(
          `CPU build of the kernel vs the GPU reference (assert_close defaults): ${report.ok ? 'equal' : 'DIFFERENT'} — ${report.summary.tensors} tensors, max abs error ${worst}; CPU run ${cpuSec.toFixed(1)} s`,
        );
      } else say(`the CPU run failed:\n${cpu.stderr.slice(-2000)}`);
      await rm(cmp, { recursive: true, force: true });
    }
    if (simulate) say(`SIMULATED (${simulate}): no GPU was used; these figures check the script, not the GPU`);
    console.log(JSON.stringify({ ok, simulated: simulate, figures }));
    return ok ? 0 : 1;
  } finally {
    worker?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    await server.close();
    if (!process.env.GPU_CHECK_KEEP) await rm(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main().catch((err) => {
  console.error(`[gpu-check] ${(err as Error).stack ?? err}`);
  return 2;
});
