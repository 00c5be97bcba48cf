/**
 * The checkpoint-resume step end to end: the real API and scheduler, real PostgreSQL, real
 * `chatgpu-worker` processes running real PyTorch on this machine's CPU. A scripted planner submits
 * a plan whose preparation has the optional `checkpoint-resume` step; the builtin planner's rule
 * (agents/builtin/planner/checkpointResume.ts) proposes the same step when asked (the last test).
 *
 *   - a training script with no resume path: the reference runs the unchanged code; the candidate
 *     (the rewrite) is checked by killing its bounded run half-way and resuming it; ACCEPTED with the
 *     check's report in the record and the evidence; the full run starts on a worker that is then
 *     SIGKILLed mid-run; the second attempt, on another worker, resumes at the step of the last
 *     uploaded checkpoint (> 0); the job SUCCEEDS and its outputs are byte-identical to an
 *     uninterrupted run of the same code;
 *   - the same when the owner drains the first worker: the program saves at the next iteration on
 *     SIGTERM and exits, the attempt is DRAINED with that checkpoint, and the run resumes there on the
 *     other worker, ending equal to an uninterrupted run;
 *   - a rewrite the check finds unequal (the model lives in a dict the rewrite does not look into, so
 *     only its optimizer is saved): REJECTED with the differences, and the job runs the unchanged code
 *     and SUCCEEDS, the record saying a lost machine restarts it from step 0;
 *   - a script whose data position cannot be restored: the step is SKIPPED with the reason, the job
 *     runs the unchanged code and SUCCEEDS, and the record says a lost machine restarts it from step 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { completed, createScriptedClient, fnCall } from '../src/agents/models/scriptedClient.js';
import { readBlobBuffer } from '../src/domain/blobs/blobStore.js';
import { loadTree } from '../src/domain/preparation/codeTrees.js';
import type { ManifestEntry } from '../src/domain/blobs/paths.js';
import { inRepo } from '../src/paths.js';
import { startTestApi } from './helpers/api.js';
import { runCli } from './helpers/cli.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const TRAIN = `"""A small classifier trained over a shuffling DataLoader, with no resume path of its own."""
import argparse, json, os, time
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--sleep", type=float, default=0.0, help="seconds per epoch (a long run, for the test)")
a = p.parse_args()
torch.manual_seed(0)
x = torch.randn(128, 6)
y = (x[:, 0] - x[:, 1] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.1), nn.Linear(24, 2))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
history = []
for epoch in range(a.epochs):
    total = 0.0
    for xb, yb in loader:
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    sched.step()
    history.append(total / len(loader))
    print(f"epoch {epoch + 1}/{a.epochs} loss {history[-1]:.10f}", flush=True)
    time.sleep(a.sleep)
os.makedirs("outputs", exist_ok=True)
torch.save(model.state_dict(), "outputs/model.pt")
json.dump({"loss": history[-1], "history": history}, open("outputs/metrics.json", "w"))
`;

// The model only in a dict: the rewrite saves the optimizer it finds, not the parameters, so a resumed run differs.
const HIDDEN_MODEL = `import os, torch
from torch import nn
torch.manual_seed(0)
nets = {"main": nn.Linear(4, 1)}
opt = torch.optim.SGD(nets["main"].parameters(), lr=0.1)
for step in range(6):
    x = torch.randn(8, 4)
    loss = nn.functional.mse_loss(nets["main"](x), x.sum(dim=1, keepdim=True))
    opt.zero_grad(); loss.backward(); opt.step()
    print(f"step {step} loss {loss.item():.8f}")
os.makedirs("outputs", exist_ok=True)
torch.save(nets["main"].state_dict(), "outputs/model.pt")
`;

// Batches drawn with next() from one iterator made before the loop: its position cannot be restored.
const UNRESTORABLE = `import os, torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = iter(loader)
step = 0
while step < 6:
    xb, yb = next(batches)
    loss = nn.functional.mse_loss(model(xb), yb)
    opt.zero_grad(); loss.backward(); opt.step()
    step += 1
    print(f"step {step} loss {loss.item():.8f}")
os.makedirs("outputs", exist_ok=True)
torch.save(model.state_dict(), "outputs/model.pt")
`;

const EPOCHS = 12;
function plan(command: string, bounded: string) {
  return {
    summary: 'Train the classifier on a CPU worker, made resumable so a lost machine costs at most the last epoch.',
    asks: [
      {
        ask: 'make it resumable',
        kind: 'other',
        status: 'honoured',
        detail: 'the checkpoint-resume preparation step, kept only when a killed and resumed run equals an uninterrupted one',
      },
    ],
    steps: ['Reference run of the unchanged code', 'Checkpoint-resume rewrite, checked by kill-and-resume', 'Full run'],
    command,
    // Every epoch is checkpointed in the test (the default is every 300 s).
    environment: [{ name: 'CHATGPU_RESUME_EVERY_STEPS', value: '1' }],
    hardware: { workload: 'torch-cpu', accelVendor: null, minMemoryMiB: null, minAccelMemoryMiB: null },
    timeoutSec: 600,
    outputs: ['outputs'],
    acceptance: { exitCode: 0, requiredFiles: ['outputs/model.pt'], metrics: [], evaluate: null },
    preparation: {
      workload: { command: bounded, timeoutSec: 300 },
      compare: ['outputs'],
      reference: { workload: 'torch-cpu', accelVendor: null },
      target: { workload: 'torch-cpu', accelVendor: null },
      steps: [{ name: 'resume', kind: 'adaptation', transformation: 'checkpoint-resume', required: false, tolerance: null }],
      revisionBudget: 0,
      frozenFiles: null,
      pinRun: null,
    },
  };
}

const PY = ['--python', '/usr/bin/python3'];

/** `chatgpu-worker …` (asynchronous: the API answering it runs in this process). */
async function workerCli(args: string[]) {
  const child = spawn(process.execPath, [inRepo('worker/bin/chatgpu-worker.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, out, err };
}

async function setUp(planArgs: Parameters<typeof plan>) {
  const api = await startTestApi(
    { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '6' },
    { scheduler: true, model: createScriptedClient([completed(fnCall('submit_plan', plan(...planArgs)))]) },
  );
  const user = await api.signUp();
  const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
  return { api, user, workerToken: wt.data.createWorkerToken.token as string };
}

async function submit(api: Awaited<ReturnType<typeof setUp>>['api'], token: string, files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
    { i: { title: 'resumable', request, files: manifest } },
    token,
  );
  return Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
}

/** Runs `command` in a fresh folder holding `tree`, with the worker's helpers, and returns its outputs' bytes. */
function runLocally(tree: Record<string, string>, command: string): Record<string, string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'resume-e2e-local-'));
  const bin = path.join(dir, '.bin');
  mkdirSync(bin);
  symlinkSync('/usr/bin/python3', path.join(bin, 'python'));
  for (const [p, text] of Object.entries(tree)) writeFileSync(path.join(dir, p), text);
  const r = spawnSync('sh', ['-c', command], {
    cwd: dir,
    encoding: 'utf8',
    env: {
      PATH: `${bin}:/usr/bin:/bin`,
      PYTHONPATH: inRepo('worker/python'),
      HOME: dir,
      CHATGPU_CHECKPOINT_DIR: path.join(dir, 'checkpoint'),
    },
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`${command} failed: ${r.stderr}`);
  const out: Record<string, string> = {};
  for (const f of readdirSync(path.join(dir, 'outputs')))
    out[`outputs/${f}`] = readFileSync(path.join(dir, 'outputs', f)).toString('base64');
  return out;
}

describe('checkpoint-resume end to end', () => {
  it(
    'accepted by the kill-and-resume check; the full run survives a SIGKILLed worker, resumes at step > 0 and ends equal to an uninterrupted run',
    { timeout: 400_000 },
    async () => {
      const { api, user, workerToken } = await setUp([`python train.py --epochs ${EPOCHS} --sleep 1.5`, 'python train.py --epochs 4']);
      const prisma = api.server.db.prisma;
      const first = await startWorker(api.url, workerToken, 'vanishes', PY);
      const jobId = await submit(api, user.token, { 'train.py': TRAIN }, 'train it; make it resumable');

      // The step is decided before the full run starts.
      const run = await waitFor(
        async () => {
          if ((await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status === 'FAILED') throw new Error('the job failed');
          return prisma.task.findFirst({ where: { jobId, kind: 'RUN' } });
        },
        240_000,
        'the full run',
        250,
      ).catch(async (err: Error) => {
        const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
        const tasks = await prisma.task.findMany({ where: { jobId }, include: { attempts: true } });
        const logs = await prisma.logChunk.findMany({
          where: { attemptId: { in: tasks.flatMap((t) => t.attempts.map((x) => x.id)) } },
          orderBy: { seq: 'asc' },
        });
        const records = await prisma.preparationRecord.findMany({ where: { jobId } });
        throw new Error(
          `${err.message}: job ${job.status} ${job.statusReason}; tasks ${JSON.stringify(tasks.map((t) => [t.name, t.status, t.statusReason]))}; records ${JSON.stringify(records.map((r) => [r.step, r.outcome, r.reason]))}; logs ${logs
            .map((l) => l.text)
            .join('\n')
            .slice(-3000)}`,
        );
      });
      const records = await prisma.preparationRecord.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
      expect(records.map((r) => [r.step, r.outcome, r.transformation])).toEqual([
        ['reference', 'ACCEPTED', 'none'],
        ['resume', 'ACCEPTED', 'checkpoint-resume'],
      ]);
      const accepted = records[1]!;
      expect(accepted.kind).toBe('adaptation');
      expect(accepted.reason).toMatch(/its outputs match the reference within the tolerances/);
      expect(accepted.reason).toMatch(
        /killed with SIGKILL after step 2 of 4 and resumed in a fresh process at step 2, the run ended bitwise equal to the uninterrupted one/,
      );
      const check = (
        accepted.numericalCheck as { resumeCheck: { equal: boolean; killed: { afterStep: number }; resumed: { atStep: number } } }
      ).resumeCheck;
      expect(check).toMatchObject({ equal: true, killed: { afterStep: 2 }, resumed: { atStep: 2 } });
      expect(accepted.evidenceSha).toMatch(/^[0-9a-f]{64}$/);
      const candidateTask = await prisma.task.findFirstOrThrow({ where: { jobId, name: 'candidate:resume:0' } });
      expect(candidateTask.command).toBe(
        "python -m chatgpu.resume_check --report .chatgpu-resume-check.json -- 'python train.py --epochs 4'",
      );
      const frozen = await prisma.codeVersion.findUniqueOrThrow({ where: { id: run.codeVersionId } });
      expect(frozen.origin).toBe('checkpoint-resume');
      const frozenTree = (await loadTree(api.server.resources, frozen.manifest as unknown as ManifestEntry[])).text;
      expect(frozenTree['train.py']).toContain('for epoch in _chatgpu_run.loop(range(a.epochs)):');

      // The full run checkpoints every epoch; its worker vanishes after a few.
      const cp = await waitFor(
        async () => {
          const t = await prisma.task.findUniqueOrThrow({
            where: { id: run.id },
            include: { currentAttempt: { include: { worker: true } } },
          });
          const step = (t.checkpoint as { step?: number } | null)?.step ?? -1;
          return t.currentAttempt?.worker.name === 'vanishes' && t.currentAttempt.status === 'RUNNING' && step >= 3
            ? { step, attemptId: t.currentAttempt.id }
            : null;
        },
        120_000,
        'a checkpoint of epoch 3 from the first worker',
        250,
      );
      await first.stop('SIGKILL');
      const second = await startWorker(api.url, workerToken, 'replacement', PY);
      const job = await waitFor(
        async () => {
          const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
          return ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(j.status) ? j : null;
        },
        240_000,
        'the job to end',
        500,
      );
      expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
      const attempts = await prisma.attempt.findMany({ where: { taskId: run.id }, orderBy: { number: 'asc' }, include: { worker: true } });
      expect(attempts.map((x) => [x.status, x.worker.name])).toEqual([
        ['LOST', 'vanishes'],
        ['SUCCEEDED', 'replacement'],
      ]);
      const logs = (await prisma.logChunk.findMany({ where: { attemptId: attempts[1]!.id }, orderBy: { seq: 'asc' } }))
        .map((l) => l.text)
        .join('\n');
      const saved = (attempts[0]!.checkpoint as { step: number }).step;
      expect(saved).toBeGreaterThanOrEqual(cp.step);
      expect(logs).toContain(`worker: restored the checkpoint of attempt 1 (step ${saved}) into checkpoint/`);
      const resumedAt = Number(/chatgpu\.resume: resumed at step (\d+) of 12 from a checkpoint of /.exec(logs)?.[1]);
      expect(resumedAt).toBe(saved);
      expect(resumedAt).toBeGreaterThan(0);
      // The resumed attempt ran only the epochs left.
      expect([...logs.matchAll(/^epoch (\d+)\/12/gm)].map((m) => Number(m[1]))).toEqual(
        Array.from({ length: EPOCHS - saved }, (_, i) => saved + i + 1),
      );
      console.log(
        `checkpoint-resume e2e: the first worker was SIGKILLed after its checkpoint of epoch ${cp.step}; the second attempt resumed at epoch ${resumedAt} of ${EPOCHS}`,
      );
      // The job's events say so (attempt.resumed, written by the claim), and `chatgpu watch` prints it.
      const resumed = await prisma.jobEvent.findMany({ where: { jobId, kind: 'attempt.resumed' } });
      expect(resumed.map((e) => e.payload)).toEqual([
        expect.objectContaining({ attemptId: attempts[1]!.id, number: 2, fromAttempt: 1, step: saved, of: EPOCHS }),
      ]);
      const ev = resumed[0]!.payload as { checkpointAt: string; previousEndedAt: string; workLostSec: number };
      expect(ev.previousEndedAt).toBe(attempts[0]!.leaseExpiresAt.toISOString());
      expect(ev.workLostSec).toBe(Math.round((attempts[0]!.leaseExpiresAt.getTime() - Date.parse(ev.checkpointAt)) / 1000));
      const home = mkdtempSync(path.join(tmpdir(), 'resume-e2e-cli-'));
      const watch = await runCli(['watch', jobId, '--server', api.url], {
        env: {
          HOME: home,
          XDG_CONFIG_HOME: path.join(home, '.config'),
          CHATGPU_DATA_DIR: path.join(home, 'no-data'),
          CHATGPU_TOKEN: user.token,
        },
      });
      expect(watch.code, watch.stderr).toBe(0);
      const at = `${ev.checkpointAt.slice(0, 10)} ${ev.checkpointAt.slice(11, 19)} UTC`;
      expect(watch.stdout).toContain(
        `${run.name} attempt 2: resumed at step ${saved} of ${EPOCHS} from a checkpoint of ${at} (work lost: ${ev.workLostSec} s)`,
      );

      // The final outputs equal an uninterrupted run of the same code, byte for byte.
      const result = (await prisma.task.findUniqueOrThrow({ where: { id: run.id } })).result as unknown as { outputs: ManifestEntry[] };
      const got: Record<string, string> = {};
      for (const o of result.outputs.filter((o) => o.path.startsWith('outputs/')))
        got[o.path] = (await readBlobBuffer(api.server.resources.blobs, o.sha256)).toString('base64');
      const uninterrupted = runLocally(frozenTree, `python train.py --epochs ${EPOCHS}`);
      expect(Object.keys(got).sort()).toEqual(['outputs/metrics.json', 'outputs/model.pt']);
      expect(got).toEqual(uninterrupted);
      await second.stop();
    },
  );

  it(
    'a drain mid-run: saved at the next epoch on SIGTERM, DRAINED with that checkpoint, resumed on the other worker, equal to an uninterrupted run',
    { timeout: 400_000 },
    async () => {
      const { api, user, workerToken } = await setUp([`python train.py --epochs ${EPOCHS} --sleep 1.5`, 'python train.py --epochs 4']);
      const prisma = api.server.db.prisma;
      const drainee = await startWorker(api.url, workerToken, 'drainee', [...PY, '--drain-grace', '20']);
      const jobId = await submit(api, user.token, { 'train.py': TRAIN }, 'train it; make it resumable');
      const run = await waitFor(() => prisma.task.findFirst({ where: { jobId, kind: 'RUN' } }), 240_000, 'the full run', 250);
      await waitFor(
        async () => {
          const t = await prisma.task.findUniqueOrThrow({ where: { id: run.id }, include: { currentAttempt: true } });
          return t.currentAttempt?.status === 'RUNNING' && ((t.checkpoint as { step?: number } | null)?.step ?? -1) >= 2;
        },
        120_000,
        'a checkpoint of epoch 2',
        250,
      );
      const drain = await workerCli(['drain', '--data-dir', drainee.dataDir]);
      expect(drain.code, drain.err).toBe(0);
      const other = await startWorker(api.url, workerToken, 'takes-over', PY);
      const job = await waitFor(
        async () => {
          const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
          return ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(j.status) ? j : null;
        },
        240_000,
        'the job to end',
        500,
      );
      expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
      const attempts = await prisma.attempt.findMany({ where: { taskId: run.id }, orderBy: { number: 'asc' }, include: { worker: true } });
      expect(attempts.map((x) => [x.status, x.worker.name])).toEqual([
        ['DRAINED', 'drainee'],
        ['SUCCEEDED', 'takes-over'],
      ]);
      const drainedLogs = (await prisma.logChunk.findMany({ where: { attemptId: attempts[0]!.id }, orderBy: { seq: 'asc' } }))
        .map((l) => l.text)
        .join('\n');
      const saved = (attempts[0]!.checkpoint as { step: number }).step;
      // It saved the epoch it had reached when the signal came, then stopped there.
      expect(drainedLogs).toContain(`chatgpu.resume: drained: saved step ${saved}, exiting`);
      expect(Math.max(...[...drainedLogs.matchAll(/^epoch (\d+)\/12/gm)].map((m) => Number(m[1])))).toBe(saved);
      const logs = (await prisma.logChunk.findMany({ where: { attemptId: attempts[1]!.id }, orderBy: { seq: 'asc' } }))
        .map((l) => l.text)
        .join('\n');
      expect(logs).toMatch(new RegExp(`chatgpu\\.resume: resumed at step ${saved} of 12 from a checkpoint of `));
      expect([...logs.matchAll(/^epoch (\d+)\/12/gm)].map((m) => Number(m[1]))[0]).toBe(saved + 1);
      console.log(`checkpoint-resume drain: drained after epoch ${saved}, resumed at epoch ${saved} of ${EPOCHS} on the other worker`);
      const frozen = await prisma.codeVersion.findUniqueOrThrow({ where: { id: run.codeVersionId } });
      const frozenTree = (await loadTree(api.server.resources, frozen.manifest as unknown as ManifestEntry[])).text;
      const result = (await prisma.task.findUniqueOrThrow({ where: { id: run.id } })).result as unknown as { outputs: ManifestEntry[] };
      const got: Record<string, string> = {};
      for (const o of result.outputs.filter((o) => o.path.startsWith('outputs/')))
        got[o.path] = (await readBlobBuffer(api.server.resources.blobs, o.sha256)).toString('base64');
      expect(got).toEqual(runLocally(frozenTree, `python train.py --epochs ${EPOCHS}`));
      await drainee.stop();
      await other.stop();
    },
  );

  it(
    'a rewrite the kill-and-resume check finds unequal: REJECTED with the differences; the job runs without it and succeeds',
    { timeout: 300_000 },
    async () => {
      const { api, user, workerToken } = await setUp(['python train.py', 'python train.py']);
      const prisma = api.server.db.prisma;
      const w = await startWorker(api.url, workerToken, 'checker', PY);
      const jobId = await submit(api, user.token, { 'train.py': HIDDEN_MODEL }, 'train it; make it resumable');
      const job = await waitFor(
        async () => {
          const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
          return ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(j.status) ? j : null;
        },
        240_000,
        'the job to end',
        500,
      );
      expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
      const records = await prisma.preparationRecord.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
      expect(records.map((r) => [r.step, r.outcome])).toEqual([
        ['reference', 'ACCEPTED'],
        ['resume', 'REJECTED'],
      ]);
      const rejected = records[1]!;
      expect(rejected.reason).toMatch(
        /^the kill-and-resume check found the resumed run different: .*(state objects\.opt|outputs\/model\.pt|logged losses)/,
      );
      expect(rejected.reason).toMatch(
        /The job runs without it: if its machine is lost \(a drain or a lost lease\), the run restarts from step 0\.$/,
      );
      expect((rejected.numericalCheck as { resumeCheck: { equal: boolean } }).resumeCheck.equal).toBe(false);
      const candidate = await prisma.codeVersion.findUniqueOrThrow({ where: { id: rejected.candidateCodeId! } });
      expect(candidate.status).toBe('REJECTED');
      const run = await prisma.task.findFirstOrThrow({ where: { jobId, kind: 'RUN' } });
      expect(run.codeVersionId).toBe((await prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } })).id);
      await w.stop();
    },
  );

  it(
    'the builtin planner, asked to make it resumable, plans the step; the job succeeds with it accepted',
    { timeout: 300_000 },
    async () => {
      const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
      const prisma = api.server.db.prisma;
      const user = await api.signUp();
      const wt = await api.gql(
        `mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`,
        {},
        user.token,
      );
      const w = await startWorker(api.url, wt.data.createWorkerToken.token, 'builtin', PY);
      const jobId = await submit(api, user.token, { 'train.py': TRAIN }, 'train it for 6 epochs and make it resumable');
      const job = await waitFor(
        async () => {
          const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
          return ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(j.status) ? j : null;
        },
        240_000,
        'the job to end',
        500,
      );
      expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
      const plan = await prisma.plan.findUniqueOrThrow({ where: { id: job.currentPlanId! } });
      expect(plan.command).toMatch(/^python train\.py --epochs 6\b/);
      expect(plan.preparationWorkload).toMatchObject({
        workload: { command: expect.stringMatching(/^python train\.py --epochs 2\b/) },
        steps: [{ name: 'resume', transformation: 'checkpoint-resume', required: false }],
      });
      expect(plan.asks).toContainEqual(expect.objectContaining({ ask: 'make it resumable', status: 'honoured' }));
      const records = await prisma.preparationRecord.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
      expect(records.map((r) => [r.step, r.outcome])).toEqual([
        ['reference', 'ACCEPTED'],
        ['resume', 'ACCEPTED'],
      ]);
      expect(records[1]!.reason).toMatch(
        /killed with SIGKILL after step 1 of 2 and resumed in a fresh process at step 1, the run ended bitwise equal/,
      );
      await w.stop();
    },
  );

  it(
    'a data position it cannot restore: the step is SKIPPED with why, and the job runs without it and succeeds',
    { timeout: 300_000 },
    async () => {
      const { api, user, workerToken } = await setUp(['python train.py', 'python train.py']);
      const prisma = api.server.db.prisma;
      const w = await startWorker(api.url, workerToken, 'only', PY);
      const jobId = await submit(api, user.token, { 'train.py': UNRESTORABLE }, 'train it; make it resumable');
      const job = await waitFor(
        async () => {
          const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
          return ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(j.status) ? j : null;
        },
        240_000,
        'the job to end',
        500,
      );
      expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
      const records = await prisma.preparationRecord.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
      expect(records.map((r) => [r.step, r.outcome])).toEqual([
        ['reference', 'ACCEPTED'],
        ['resume', 'SKIPPED'],
      ]);
      expect(records[1]!.reason).toMatch(
        /^Not made resumable: train\.py:10: the data position cannot be restored: next\(batches\) draws from an iterator made before the loop/,
      );
      expect(records[1]!.reason).toMatch(
        /The job runs without it: if its machine is lost \(a drain or a lost lease\), the run restarts from step 0\.$/,
      );
      // The run used the unchanged code.
      const run = await prisma.task.findFirstOrThrow({ where: { jobId, kind: 'RUN' } });
      const original = await prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
      expect(run.codeVersionId).toBe(original.id);
      await w.stop();
    },
  );
});
