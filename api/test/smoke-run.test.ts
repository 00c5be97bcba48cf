/**
 * The smoke run before the full run (issue 20 §1), end to end with the builtin planner, the
 * real `chatgpu submit --wait` and a real worker: the plan's bounded workload runs first on
 * the worker class of the full run. A failure there (a module only imported at run time, an
 * out-of-memory) stops the job before the full run is leased; a pass gives an estimate of
 * the full run that is checked against its real duration, shown by the CLI, and used by the
 * spending-cap check at lease grant.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { priceInterval, reservationOf } from '../src/domain/billing/usage.js';
import { startTestApi } from './helpers/api.js';
import { runCli } from './helpers/cli.js';
import { startWorker } from './helpers/worker.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
// A memory limit, so that an allocation past it is an out-of-memory (error class OOM).
await startWorker(api.url, wt.data.createWorkerToken.token, 'smoker', ['--python', '/usr/bin/python3', '--memory-limit', '400']);

const home = await mkdtemp(path.join(tmpdir(), 'cli-home-'));
const cliEnv = {
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, '.config'),
  CHATGPU_DATA_DIR: path.join(home, 'no-data'),
  CHATGPU_TOKEN: user.token,
};

const JOB = `query($id: ID!) { job(id: $id) { status statusReason costCad currentPlan { command smokeRun }
  estimate { basis durationSec lowSec highSec costCad highCad peakMemoryMiB outputBytes actualSec ratio }
  tasks { name kind status command attempts { errorClass usage } } } }`;

/** A training script as people write them: start-up work, then epochs that report progress (as metrics, or only as printed lines). */
const train = (body = '', metrics = true) => `import argparse, json, time
${metrics ? 'from chatgpu.metrics import log' : 'log = lambda **kw: None'}
p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=10)
p.add_argument("--save", default="model.json")
a = p.parse_args()
time.sleep(1.0)  # loading data
${body}
for epoch in range(1, a.epochs + 1):
    time.sleep(0.4)
    log(step=epoch, loss=1.0 / epoch)
    print(f"epoch {epoch} done", flush=True)
json.dump({"epochs": a.epochs}, open(a.save, "w"))
`;

async function submitWait(files: Record<string, string>, request: string, extra: string[] = []) {
  const dir = await mkdtemp(path.join(tmpdir(), 'smoke-project-'));
  for (const [p, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await writeFile(path.join(dir, p), content);
  }
  const r = await runCli(['submit', dir, '-m', request, '--wait', '--server', api.url, ...extra], { env: cliEnv, timeoutMs: 140_000 });
  const row = await api.server.db.prisma.job.findFirstOrThrow({ where: { ownerId: user.userId }, orderBy: { createdAt: 'desc' } });
  const id = Buffer.from(`Job:${row.id}`).toString('base64');
  const job = (await api.gql(JOB, { id }, user.token)).data.job;
  const tasks = await api.server.db.prisma.task.findMany({ where: { jobId: row.id }, orderBy: { createdAt: 'asc' } });
  return { ...job, jobId: row.id, rows: tasks, out: r.stdout + r.stderr, exitCode: r.code };
}

describe('the smoke run', () => {
  it(
    'runs the bounded workload first; its estimate of the full run is within 2× of the real duration, shown by the CLI and kept on the job',
    { timeout: 150_000 },
    async () => {
      const job = await submitWait({ 'train.py': train() }, 'train it for 12 epochs');
      expect(job.status, job.out).toBe('SUCCEEDED');
      expect(job.currentPlan.command).toBe('python train.py --epochs 12 --save outputs/model.json');
      expect(job.currentPlan.smokeRun).toEqual({
        command: 'python train.py --epochs 2 --save outputs/model.json',
        timeoutSec: 1800,
        scale: { unit: 'epoch', bounded: 2, full: 12 },
      });
      // The smoke run came first, then the full run — never both at once.
      expect(job.rows.map((t: any) => [t.kind, t.name, t.status])).toEqual([
        ['PROBE', 'smoke', 'SUCCEEDED'],
        ['RUN', 'run', 'SUCCEEDED'],
      ]);
      expect(job.rows[1].createdAt.getTime()).toBeGreaterThanOrEqual(job.rows[0].finishedAt.getTime());
      const e = job.estimate;
      expect(e.basis).toMatch(
        /^Smoke run on smoker: 2 of 12 epochs in [\d.]+ s, peak memory \d+ MiB \(sampled\); [\d.]+ s per step from its progress metrics, start-up [\d.]+ s, ×6\.$/,
      );
      // The model: start-up ≈ 1 s, 0.4 s per epoch → 12 epochs ≈ 6 s (+ the interpreter's start).
      expect(e.lowSec).toBeLessThan(e.durationSec);
      expect(e.durationSec).toBeLessThan(e.highSec);
      expect(e.peakMemoryMiB).toBeGreaterThan(1);
      expect(e.outputBytes).toBeGreaterThan(0);
      // The stated factor on these machines: the real duration within 2× of the estimate.
      expect(e.actualSec).toBeGreaterThan(0);
      expect(e.ratio).toBeGreaterThan(0.5);
      expect(e.ratio).toBeLessThan(2);
      console.log(`smoke-run estimate: ${e.durationSec} s (${e.lowSec}–${e.highSec}); actual ${e.actualSec} s; ratio ${e.ratio}`);
      // The full run is projected to the estimate's high end at lease grant (not its time limit).
      expect((job.rows[1].requirements as any).estimateSec).toBe(Math.ceil(e.highSec));
      expect(job.out).toMatch(/⏱ smoke run passed; estimate of the full run: about \d+(\.\d)? s \(/);
      expect(job.out).toMatch(
        /Estimate was about [\d.]+ s \([^)]+\), CA\$[\d.]+ \([^)]+\); the full run took [\d.]+ s \([\d.]+× the estimate\)\./,
      );
    },
  );

  it(
    'a module the code imports only at run time stops the job at the smoke run: the full run is never leased',
    { timeout: 120_000 },
    async () => {
      const body = 'import importlib, os\nbackend = importlib.import_module(os.environ.get("BACKEND", "fastbackend_not_installed"))\n';
      const job = await submitWait({ 'train.py': train(body) }, 'train it for 12 epochs');
      expect(job.exitCode).toBe(1);
      expect(job.status).toBe('FAILED');
      expect(job.statusReason).toMatch(
        /^The smoke run \(`python train\.py --epochs 2 --save outputs\/model\.json`\) failed .*on smoker, so the full run was not started: .*ModuleNotFoundError: No module named 'fastbackend_not_installed'/s,
      );
      expect(job.rows.map((t: any) => t.kind)).toEqual(['PROBE']);
      expect(job.estimate).toBeNull();
    },
  );

  it('an out-of-memory stops the job at the smoke run, named as such', { timeout: 120_000 }, async () => {
    const body = "buffers = [bytearray(64 << 20) for _ in range(16)]  # 1 GiB, past the worker's memory limit\n";
    const job = await submitWait({ 'train.py': train(body) }, 'train it for 12 epochs');
    expect(job.status).toBe('FAILED');
    expect(job.statusReason).toMatch(/^The smoke run \(`[^`]+`\) failed \(OOM\) on smoker, so the full run was not started/);
    expect(job.rows.map((t: any) => t.kind)).toEqual(['PROBE']);
    expect(job.tasks[0].attempts[0].errorClass).toBe('OOM');
  });

  it(
    'the spending cap at lease grant uses the estimate: a full run that would not fit to its time limit is leased on its estimate',
    { timeout: 150_000 },
    async () => {
      // A cap that holds the smoke run to its time limit (30 min) but not the full run to its
      // own (1 h): without the estimate the full run would wait for ever.
      const worker = await api.server.db.prisma.worker.findFirstOrThrow({ where: { name: 'smoker' } });
      const price = (sec: number) =>
        priceInterval(api.config.rates, reservationOf({ requirements: {}, accelVendor: null }, worker), sec / 3600).costCad;
      const cap = price(1800) * 1.2;
      expect(price(3600)).toBeGreaterThan(cap);
      // This script reports no metrics: its progress is read from the lines it prints ("epoch 2 done").
      const job = await submitWait({ 'train.py': train('', false) }, 'train it for 12 epochs', ['--cap', cap.toFixed(6)]);
      expect(job.status, job.out).toBe('SUCCEEDED');
      expect(job.rows.map((t: any) => t.kind)).toEqual(['PROBE', 'RUN']);
      expect(job.estimate.basis).toMatch(/; [\d.]+ s per epoch from its log lines, start-up [\d.]+ s, ×6\.$/);
      expect(job.estimate.ratio).toBeGreaterThan(0.5);
      expect(job.estimate.ratio).toBeLessThan(2);
      expect(Number(job.costCad)).toBeLessThanOrEqual(cap);
    },
  );

  it('is skipped when the user asks for none, and when the job is itself tiny', { timeout: 120_000 }, async () => {
    const asked = await submitWait({ 'train.py': train() }, 'train it for 12 epochs, no smoke run');
    expect(asked.status, asked.out).toBe('SUCCEEDED');
    expect(asked.currentPlan.smokeRun).toBeNull();
    expect(asked.rows.map((t: any) => t.kind)).toEqual(['RUN']);
    const tiny = await submitWait({ 'train.py': train() }, 'train it for 2 epochs');
    expect(tiny.currentPlan.smokeRun).toBeNull();
    expect(tiny.rows.map((t: any) => t.kind)).toEqual(['RUN']);
  });
});
