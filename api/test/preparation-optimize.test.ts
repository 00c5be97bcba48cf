/**
 * Optimizations that do not pay are not kept (docs/architecture.md §4): a real worker
 * process, real PyTorch on this machine's CPU, the plan submitted by a scripted planner.
 *
 * Two optional steps are planted: more DataLoader workers (same numbers, but slower on a
 * tiny dataset, where each of the bounded workload's 4 epochs forks the workers again: the
 * timing runs say "not faster" — one epoch's fork was within a loaded 2-core CI machine's
 * noise) and bf16 autocast (faster or not, its
 * outputs differ from the reference beyond the float32 tolerances). Both are REJECTED with
 * their evidence, and the job runs the last accepted version: the original upload.
 */
import { describe, expect, it } from 'vitest';
import { completed, createScriptedClient, fnCall } from '../src/agents/models/scriptedClient.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';

const TRAIN = `import argparse, os
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    x = torch.randn(512, 16)
    y = (x.sum(1) > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(args.epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
    os.makedirs("outputs", exist_ok=True)
    torch.save(model.state_dict(), "outputs/model.pt")
    print("final loss", loss.item())


if __name__ == "__main__":
    main()
`;

const PLAN = {
  summary: 'Train on a CPU worker; try two optional optimizations first.',
  asks: [],
  steps: ['Reference run', 'Try more DataLoader workers', 'Try bf16 autocast', 'Train'],
  command: 'python train.py --epochs 3',
  environment: null,
  hardware: { workload: 'torch-cpu', accelVendor: null, minMemoryMiB: null, minAccelMemoryMiB: null },
  timeoutSec: 600,
  outputs: ['outputs'],
  acceptance: { exitCode: 0, requiredFiles: ['outputs/model.pt'], metrics: [], evaluate: null },
  preparation: {
    workload: { command: 'python train.py --epochs 4 --seed 0', timeoutSec: 300 },
    compare: ['outputs'],
    reference: { workload: 'torch-cpu', accelVendor: null },
    target: { workload: 'torch-cpu', accelVendor: null },
    steps: [
      { name: 'opt-workers', kind: 'optimization', transformation: 'dataloader-workers', required: false, tolerance: null },
      { name: 'opt-bf16', kind: 'optimization', transformation: 'autocast-bf16', required: false, tolerance: null },
    ],
    revisionBudget: null,
    frozenFiles: null,
    pinRun: null,
  },
};

const model = createScriptedClient([completed(fnCall('submit_plan', PLAN))]);
const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'cpu-opt');

describe('optional optimizations that do not pay', () => {
  it('a slower one and one that changes numerics are REJECTED; the job runs the original', { timeout: 300_000 }, async () => {
    const put = await api.putBlob(TRAIN, user.token);
    const r = await api.gql(
      `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
      { i: { title: 'opt', request: 'train it', files: [{ path: 'train.py', sha256: put.sha256 }] } },
      user.token,
    );
    const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
    const end = Date.now() + 280_000;
    let job;
    for (;;) {
      job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status) || Date.now() > end) break;
      await new Promise((res) => setTimeout(res, 500));
    }
    expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');

    const records = await prisma.preparationRecord.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
    expect(records.map((x) => [x.step, x.outcome])).toEqual([
      ['reference', 'ACCEPTED'],
      ['opt-workers', 'REJECTED'],
      ['opt-bf16', 'REJECTED'],
    ]);
    const [, workers, bf16] = records as [(typeof records)[0], (typeof records)[0], (typeof records)[0]];
    // The slower one: numerics equal, the timing statistics say "not faster".
    expect((workers.numericalCheck as any).ok).toBe(true);
    expect(workers.reason).toMatch(/not faster \(median speedup/);
    const timings = workers.timings as any;
    expect(timings.samples.a).toHaveLength(9);
    expect(timings.samples.b).toHaveLength(9);
    expect(timings.statistics.decision).toBe('not-faster');
    expect(timings.statistics.speedup).toBeLessThan(1);
    expect(workers.evidenceSha).toBeNull();
    // The numerics one: outside the tolerances, never timed.
    expect((bf16.numericalCheck as any).ok).toBe(false);
    expect(bf16.reason).toMatch(/differ from the reference beyond the tolerances: outputs\/model\.pt/);
    expect(bf16.timings).toBeNull();

    // The last accepted version is the original: the full run used it.
    const original = await prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
    expect(job.frozenCodeId).toBe(original.id);
    const tasks = await prisma.task.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
    expect(tasks.map((t) => [t.kind, t.name, t.status])).toEqual([
      ['REFERENCE', 'reference', 'SUCCEEDED'],
      ['CANDIDATE', 'candidate:opt-workers:0', 'SUCCEEDED'],
      ['BENCHMARK', 'benchmark:opt-workers:0', 'SUCCEEDED'],
      ['CANDIDATE', 'candidate:opt-bf16:0', 'SUCCEEDED'],
      ['RUN', 'run', 'SUCCEEDED'],
    ]);
    const run = tasks.find((t) => t.kind === 'RUN')!;
    expect(run.codeVersionId).toBe(original.id);
    // The benchmark ran on the worker that ran the candidate.
    const cand = await prisma.attempt.findFirstOrThrow({ where: { taskId: tasks[1]!.id, status: 'SUCCEEDED' } });
    const bench = await prisma.attempt.findFirstOrThrow({ where: { taskId: tasks[2]!.id, status: 'SUCCEEDED' } });
    expect(bench.workerId).toBe(cand.workerId);
    expect(tasks[2]!.pinnedWorkerId).toBe(cand.workerId);
    const candidates = await prisma.codeVersion.findMany({ where: { jobId, step: { in: ['opt-workers', 'opt-bf16'] } } });
    expect(candidates.map((c) => c.status)).toEqual(['REJECTED', 'REJECTED']);
  });
});
