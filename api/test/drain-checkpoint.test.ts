/**
 * Drain with checkpoint hand-off, and periodic checkpoints (issue 17 §1), end to end: the real
 * API with the builtin planner, real `chatgpu-worker` processes (bwrap sandbox when the machine
 * has it), the real `chatgpu submit --wait` and `chatgpu-worker drain`.
 *
 * The project trains a logistic-regression model in pure Python, one epoch a second, saving a
 * checkpoint in the folder its `--checkpoint-dir` names every 2 epochs (and at once on SIGTERM),
 * and resuming from it when it is there. The planner passes the worker's checkpoint folder.
 *   - drain mid-training: the drained worker has no task process left once `drain` answers
 *     (the bound: its grace period), the attempt is DRAINED with the checkpoint of the epoch it
 *     reached and is billed to the user (its work carried over), the run resumes on the other
 *     worker at the next epoch, and the job SUCCEEDS with a model whose evaluation passes;
 *   - SIGKILL of the worker mid-training: the retry resumes from the last checkpoint uploaded
 *     while it ran, losing at most one checkpoint interval (2 epochs);
 *   - a program that ignores SIGTERM is killed at the end of the grace period, and its task still
 *     resumes elsewhere from its last periodic checkpoint.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { startCli } from './helpers/cli.js';
import { repoRoot } from './helpers/processes.js';
import { descendants } from './helpers/processTree.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker, type TestWorker } from './helpers/worker.js';

const api = await startTestApi(
  { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '6' },
  { scheduler: true, model: createBuiltinClient() },
);
const prisma = api.server.db.prisma;
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const workerToken: string = wt.data.createWorkerToken.token;
const PY = ['--python', '/usr/bin/python3'];
const GRACE_SEC = 20;

const home = await mkdtemp(path.join(tmpdir(), 'cli-home-'));
const cliEnv = {
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, '.config'),
  CHATGPU_DATA_DIR: path.join(home, 'no-data'),
  CHATGPU_TOKEN: user.token,
};

const TRAIN = (onTerm: 'checkpoint' | 'ignore') => `"""Logistic regression on synthetic points, one epoch a second, with checkpoints."""
import argparse, json, math, os, random, signal, sys, time
from chatgpu.metrics import log

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=10)
p.add_argument("--save", default="model.bin", help="where the trained model goes")
p.add_argument("--checkpoint-dir", default="ckpt", help="saves a checkpoint here and resumes from it")
p.add_argument("--checkpoint-every", type=int, default=2)
a = p.parse_args()

stop = {"asked": False}
${onTerm === 'checkpoint' ? 'signal.signal(signal.SIGTERM, lambda *_: stop.update(asked=True))' : 'signal.signal(signal.SIGTERM, signal.SIG_IGN)'}

from data import points
xs = points(400, seed=1)
ckpt = os.path.join(a.checkpoint_dir, "ckpt.json")

def save_checkpoint(epoch, w, b):
    os.makedirs(a.checkpoint_dir, exist_ok=True)
    for name, body in (("ckpt.json", {"epoch": epoch, "w": w, "b": b, "rng": list(random.getstate()[1]), "rng_v": random.getstate()[0]}), ("chatgpu-checkpoint.json", {"step": epoch})):
        tmp = os.path.join(a.checkpoint_dir, name + ".tmp")
        with open(tmp, "w") as f:
            json.dump(body, f)
        os.replace(tmp, os.path.join(a.checkpoint_dir, name))
    print(f"checkpoint saved at epoch {epoch}", flush=True)

random.seed(0)
w, b, start = [0.0, 0.0], 0.0, 1
if os.path.exists(ckpt):
    c = json.load(open(ckpt))
    w, b, start = c["w"], c["b"], c["epoch"] + 1
    random.setstate((c["rng_v"], tuple(c["rng"]), None))
    print(f"resuming from the checkpoint of epoch {c['epoch']}: starting at epoch {start}", flush=True)
else:
    print("no checkpoint: starting at epoch 1", flush=True)

for epoch in range(start, a.epochs + 1):
    random.shuffle(xs)
    for (x1, x2, y) in xs:
        z = w[0] * x1 + w[1] * x2 + b
        g = 1 / (1 + math.exp(-z)) - y
        w[0] -= 0.1 * g * x1; w[1] -= 0.1 * g * x2; b -= 0.1 * g
    acc = sum((w[0] * x1 + w[1] * x2 + b > 0) == (y == 1) for x1, x2, y in xs) / len(xs)
    time.sleep(1.0)
    print(f"epoch {epoch}/{a.epochs} accuracy {acc:.3f}", flush=True)
    log(step=epoch, accuracy=acc)
    if epoch % a.checkpoint_every == 0 or stop["asked"]:
        save_checkpoint(epoch, w, b)
    if stop["asked"]:
        print(f"drained after epoch {epoch}", flush=True)
        sys.exit(0)

os.makedirs(os.path.dirname(a.save) or ".", exist_ok=True)
json.dump({"w": w, "b": b, "epochs": a.epochs}, open(a.save, "w"))
print(f"saved {a.save}", flush=True)
`;

const DATA = `import random
def points(n, seed):
    r = random.Random(seed)
    out = []
    for _ in range(n):
        x1, x2 = r.uniform(-1, 1), r.uniform(-1, 1)
        out.append((x1, x2, 1 if x1 + 0.5 * x2 > 0.1 else 0))
    return out
`;

const EVALUATE = `"""Reloads the model and measures its accuracy on fresh points."""
import argparse, json
from chatgpu.metrics import log
from data import points
p = argparse.ArgumentParser()
p.add_argument("--checkpoint", default="model.bin")
a = p.parse_args()
m = json.load(open(a.checkpoint))
xs = points(1000, seed=7)
acc = sum((m["w"][0] * x1 + m["w"][1] * x2 + m["b"] > 0) == (y == 1) for x1, x2, y in xs) / len(xs)
print(f"accuracy {acc:.3f}")
log(accuracy=acc)
`;

async function project(onTerm: 'checkpoint' | 'ignore') {
  const dir = await mkdtemp(path.join(tmpdir(), 'drain-project-'));
  await writeFile(path.join(dir, 'train.py'), TRAIN(onTerm));
  await writeFile(path.join(dir, 'data.py'), DATA);
  await writeFile(path.join(dir, 'evaluate.py'), EVALUATE);
  return dir;
}

/** `chatgpu submit --wait` in the background; the job row once it exists. */
async function submit(dir: string, request: string) {
  const before = new Date();
  const cli = startCli(['submit', dir, '-m', request, '--wait', '--server', api.url], { env: cliEnv });
  const job = await waitFor(() => prisma.job.findFirst({ where: { ownerId: user.userId, createdAt: { gte: before } } }), 60_000);
  return { cli, jobId: job.id };
}

async function runTask(jobId: string) {
  return waitFor(() => prisma.task.findFirst({ where: { jobId, kind: 'RUN' } }), 90_000);
}

async function logsOf(attemptId: string): Promise<string> {
  return (await prisma.logChunk.findMany({ where: { attemptId }, orderBy: { seq: 'asc' } })).map((l) => l.text).join('\n');
}

/** The current attempt of the task on `worker`, once a checkpoint of at least `step` reached the API while it runs. */
async function checkpointedPast(taskId: string, worker: TestWorker, step: number) {
  return waitFor(
    async () => {
      const t = await prisma.task.findUniqueOrThrow({ where: { id: taskId }, include: { currentAttempt: { include: { worker: true } } } });
      const a = t.currentAttempt;
      const saved = (t.checkpoint as { step?: number } | null)?.step ?? -1;
      return a && a.worker.name === worker.name && a.status === 'RUNNING' && saved >= step ? { attempt: a, step: saved } : null;
    },
    120_000,
    `a checkpoint of step ${step} from ${worker.name}`,
    250,
  );
}

/** `chatgpu-worker …` (asynchronous: the API answering it runs in this process). */
async function workerCli(args: string[]) {
  const child = spawn(process.execPath, [path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, out, err };
}

/** The task's processes under a worker (not the worker's own helpers: there are none besides runs). */
const taskProcesses = (w: TestWorker) => descendants(w.child.pid!).filter((p) => /python|bwrap|setpriv|sh -c/.test(p.cmdline));

const epochsIn = (text: string) => [...text.matchAll(/^epoch (\d+)\//gm)].map((m) => Number(m[1]));

describe('drain with checkpoint hand-off', () => {
  it(
    'drain mid-training: the machine is free within the grace period, the run resumes on another worker at the next epoch, and the job succeeds with a model that passes its evaluation',
    { timeout: 300_000 },
    async () => {
      const a = await startWorker(api.url, workerToken, 'drainee', [...PY, '--drain-grace', String(GRACE_SEC)]);
      // The other worker is ready but paused, so the run starts on the one to be drained.
      const b = await startWorker(api.url, workerToken, 'takes-over', PY);
      expect((await workerCli(['pause', '--data-dir', b.dataDir])).code).toBe(0);
      const { cli, jobId } = await submit(await project('checkpoint'), 'train it for 24 epochs and give me the model; no smoke run');
      const plan = await waitFor(() => prisma.plan.findFirst({ where: { jobId } }), 90_000, 'the plan').catch((err: Error) => {
        throw new Error(`${err.message}; the CLI said:\n${cli.output()}`);
      });
      expect(plan.command).toBe('python train.py --epochs 24 --save outputs/model.bin --checkpoint-dir checkpoint');
      expect(plan.requirements).toMatchObject({ checkpoint: { path: 'checkpoint' } });
      const task = await runTask(jobId);
      const { attempt: first } = await checkpointedPast(task.id, a, 2);

      const began = Date.now();
      const drain = await workerCli(['drain', '--data-dir', a.dataDir]);
      const answeredSec = (Date.now() - began) / 1000;
      expect(drain.code, drain.err).toBe(0);
      const report = JSON.parse(drain.out) as {
        status: string;
        graceSec: number;
        attempts: { attemptId: string; freeAfterSec: number; killed: boolean }[];
      };
      expect(report, a.output().slice(-4000)).toMatchObject({
        status: 'DRAINING',
        graceSec: GRACE_SEC,
        attempts: [{ attemptId: first.id, killed: false }],
      });
      // The owner's machine is free: no process of the task is left once drain answered, and the
      // program was gone within the bound (it checkpointed and exited; nothing had to be killed).
      expect(taskProcesses(a)).toEqual([]);
      const freeAfter = report.attempts[0]!.freeAfterSec;
      console.log(
        `drain: task processes gone ${freeAfter.toFixed(1)} s after the drain began (bound: the ${GRACE_SEC} s grace period, then SIGKILL); drain answered after ${answeredSec.toFixed(1)} s`,
      );
      expect(freeAfter).toBeLessThanOrEqual(GRACE_SEC);

      const drained = await prisma.attempt.findUniqueOrThrow({ where: { id: first.id } });
      expect(drained.status).toBe('DRAINED');
      const cp = drained.checkpoint as { step: number; files: { path: string }[] };
      expect(cp.files.map((f) => f.path).sort()).toEqual(['checkpoint/chatgpu-checkpoint.json', 'checkpoint/ckpt.json']);
      const drainedLogs = await logsOf(first.id);
      // It checkpointed the epoch it had reached when the signal came, and stopped there.
      expect(drainedLogs).toContain(`drained after epoch ${cp.step}`);
      expect(Math.max(...epochsIn(drainedLogs))).toBe(cp.step);
      expect(cp.step).toBeGreaterThanOrEqual(2);
      expect(drainedLogs).toMatch(/worker: drained: the program exited with code 0/);
      // The task waits for a worker; the other one is resumed and takes it.
      expect((await workerCli(['resume', '--data-dir', b.dataDir])).code).toBe(0);

      const exit = await cli.exited;
      expect(exit, cli.output()).toBe(0);
      const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      expect(job.status).toBe('SUCCEEDED');
      const attempts = await prisma.attempt.findMany({ where: { taskId: task.id }, orderBy: { number: 'asc' }, include: { worker: true } });
      expect(attempts.map((x) => [x.status, x.worker.name])).toEqual([
        ['DRAINED', 'drainee'],
        ['SUCCEEDED', 'takes-over'],
      ]);
      const resumedLogs = await logsOf(attempts[1]!.id);
      // The retry got the checkpoint before its program started, and the program resumed at the next epoch.
      expect(resumedLogs).toContain(`worker: restored the checkpoint of attempt 1 (step ${cp.step}) into checkpoint/`);
      expect(resumedLogs).toContain(`resuming from the checkpoint of epoch ${cp.step}: starting at epoch ${cp.step + 1}`);
      expect(epochsIn(resumedLogs)[0]).toBe(cp.step + 1);
      expect(Math.max(...epochsIn(resumedLogs))).toBe(24);
      console.log(`drain: drained at epoch ${cp.step}, resumed at epoch ${cp.step + 1} on takes-over`);
      // The model passes the job's checks: its evaluation reloaded it and reported the accuracy.
      const evaluate = await prisma.task.findFirstOrThrow({
        where: { jobId, kind: 'EVALUATE' },
        include: { attempts: { include: { worker: true } } },
      });
      expect(evaluate.status).toBe('SUCCEEDED');
      expect(evaluate.attempts.map((x) => x.worker.name)).toEqual(['takes-over']);
      expect((evaluate.result as { metrics: { accuracy: number } }).metrics.accuracy).toBeGreaterThan(0.9);
      // A drained attempt with a checkpoint is not a failure and is the user's (its work carried over).
      expect(Number(job.lostCostCad)).toBe(0);
      expect(await prisma.usageEntry.count({ where: { attemptId: first.id, billable: false } })).toBe(0);
      // The drained worker takes nothing while draining; the owner resumes it.
      expect((await prisma.worker.findFirstOrThrow({ where: { name: 'drainee' } })).status).toBe('DRAINING');
      const resumed = await workerCli(['resume', '--data-dir', a.dataDir]);
      expect(resumed.code, resumed.err).toBe(0);
      expect(JSON.parse(resumed.out)).toEqual({ status: 'ONLINE' });
      await a.stop();
      await b.stop();
    },
  );

  it(
    'SIGKILL of the worker mid-training: the retry resumes from the last checkpoint uploaded while it ran, losing at most one checkpoint interval',
    { timeout: 300_000 },
    async () => {
      const c = await startWorker(api.url, workerToken, 'vanishes', PY);
      const { cli, jobId } = await submit(await project('checkpoint'), 'train it for 24 epochs and give me the model; no smoke run');
      const task = await runTask(jobId);
      // The periodic checkpoint of epoch 4 reaches the API while the program runs on.
      const { attempt: first } = await checkpointedPast(task.id, c, 4);
      await c.stop('SIGKILL');
      const d = await startWorker(api.url, workerToken, 'replacement', PY);
      expect(await cli.exited, cli.output()).toBe(0);
      const attempts = await prisma.attempt.findMany({ where: { taskId: task.id }, orderBy: { number: 'asc' }, include: { worker: true } });
      expect(attempts.map((x) => [x.status, x.worker.name])).toEqual([
        ['LOST', 'vanishes'],
        ['SUCCEEDED', 'replacement'],
      ]);
      expect(attempts[0]!.id).toBe(first.id);
      const saved = (attempts[0]!.checkpoint as { step: number }).step;
      expect(saved).toBeGreaterThanOrEqual(4);
      const resumedLogs = await logsOf(attempts[1]!.id);
      expect(resumedLogs).toContain(`resuming from the checkpoint of epoch ${saved}: starting at epoch ${saved + 1}`);
      expect(epochsIn(resumedLogs)[0]).toBe(saved + 1);
      // Lost: the epochs the vanished worker finished past its last uploaded checkpoint (its logs
      // reach the API in batches, so this counts what arrived) — at most one interval of 2 epochs.
      const reached = Math.max(...epochsIn(await logsOf(first.id)));
      console.log(
        `SIGKILL: last uploaded checkpoint epoch ${saved}, the vanished run had logged epoch ${reached}; lost ${reached - saved} epoch(s) (interval 2)`,
      );
      expect(reached - saved).toBeLessThanOrEqual(2);
      expect((await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('SUCCEEDED');
      await d.stop();
    },
  );

  it(
    'a program that ignores SIGTERM is killed at the end of the grace period; the task resumes elsewhere from its last periodic checkpoint',
    { timeout: 300_000 },
    async () => {
      const e = await startWorker(api.url, workerToken, 'stubborn-host', [...PY, '--drain-grace', '3']);
      const f = await startWorker(api.url, workerToken, 'after-stubborn', PY);
      expect((await workerCli(['pause', '--data-dir', f.dataDir])).code).toBe(0);
      const { cli, jobId } = await submit(await project('ignore'), 'train it for 16 epochs and give me the model; no smoke run');
      const task = await runTask(jobId);
      const { attempt: first } = await checkpointedPast(task.id, e, 2);
      const drain = await workerCli(['drain', '--data-dir', e.dataDir]);
      expect(drain.code, drain.err).toBe(0);
      expect((await workerCli(['resume', '--data-dir', f.dataDir])).code).toBe(0);
      const report = JSON.parse(drain.out) as { attempts: { attemptId: string; freeAfterSec: number; killed: boolean }[] };
      expect(report.attempts).toEqual([{ attemptId: first.id, killed: true, freeAfterSec: expect.any(Number) }]);
      // It was killed because it kept running through the grace period; nothing of it is left.
      expect(report.attempts[0]!.freeAfterSec).toBeGreaterThanOrEqual(3);
      expect(taskProcesses(e)).toEqual([]);
      console.log(
        `drain of a program ignoring SIGTERM: killed, gone ${report.attempts[0]!.freeAfterSec.toFixed(1)} s after the drain began (grace 3 s)`,
      );
      const drained = await prisma.attempt.findUniqueOrThrow({ where: { id: first.id } });
      expect(drained.status).toBe('DRAINED');
      expect(await logsOf(first.id)).toMatch(/worker: drained: the program was killed after the grace period of 3s/);
      expect(await cli.exited, cli.output()).toBe(0);
      const attempts = await prisma.attempt.findMany({ where: { taskId: task.id }, orderBy: { number: 'asc' }, include: { worker: true } });
      expect(attempts.map((x) => [x.status, x.worker.name])).toEqual([
        ['DRAINED', 'stubborn-host'],
        ['SUCCEEDED', 'after-stubborn'],
      ]);
      const saved = (drained.checkpoint as { step: number }).step;
      expect(await logsOf(attempts[1]!.id)).toContain(`resuming from the checkpoint of epoch ${saved}: starting at epoch ${saved + 1}`);
      await e.stop();
      await f.stop();
    },
  );
});
