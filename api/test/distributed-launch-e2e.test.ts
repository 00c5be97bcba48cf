/**
 * A DDP training script (tiny model, gloo, DistributedDataParallel) submitted as a project, planned
 * by the builtin planner and run by a real sandboxed worker process: the plan runs it under the
 * launcher with one process per core of the worker's slot (2 on a 2-core CI machine), says so, and
 * the job SUCCEEDS with every rank's log lines kept apart (rank prefix) and the metrics rank 0's
 * only — once per step, also when another rank prints a metric line by hand. Then two more real
 * workers simulating NVIDIA machines (`--simulate-accelerator`, numerics on the CPU), one with 1 GPU
 * and one with 2: a job asking for NVIDIA is planned with 2 processes and runs on the 2-GPU worker.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';
import { waitFor } from './helpers/waitFor.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const worker = await startWorker(api.url, wt.data.createWorkerToken.token, 'ddp-box', ['--python', '/usr/bin/python3']);
const others: Awaited<ReturnType<typeof startWorker>>[] = [];
afterAll(async () => {
  for (const o of others) await o.stop();
  await worker.stop();
  await api.server.close();
});
const prisma = api.server.db.prisma;

const STEPS = 12;
const TRAIN = `import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from chatgpu.metrics import log


def main():
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert int(os.environ["LOCAL_RANK"]) == rank
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 8, generator=g)
    y = x @ torch.randn(8, 1, generator=g)
    mine = slice(rank, None, world)  # each rank its share of the data
    for step in range(${STEPS}):
        opt.zero_grad()
        loss = ((model(x[mine]) - y[mine]) ** 2).mean()
        loss.backward()
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        mean /= world
        print(f"rank {rank}/{world} step {step} local loss {loss.item():.4f}", flush=True)
        log(step=step, loss=mean.item(), rank=rank)
        if rank == 1 and step == 0:
            print('CHATGPU_METRIC {"step": 0, "values": {"leaked": 1}}', flush=True)
    w = model.module.weight.detach().clone()
    ws = [torch.zeros_like(w) for _ in range(world)]
    dist.all_gather(ws, w)
    print(f"rank {rank} weights equal on all ranks: {all(torch.equal(ws[0], v) for v in ws)}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
`;

const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { command summary } } }`;

async function submit(files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title: 'ddp', request, files: manifest } },
    user.token,
  );
  return { id: r.data.createJob.id as string, jobId: Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]! };
}

describe('a DDP script under the launcher on a CPU worker', () => {
  it(
    'runs one gloo process per core of the slot, SUCCEEDS with both ranks’ logs kept apart and rank 0’s metrics',
    { timeout: 240_000 },
    async () => {
      const w = await prisma.worker.findFirstOrThrow({ where: { name: 'ddp-box' } });
      const n = Math.max(1, Math.floor(w.cpuCores / Math.max(1, w.slots)));
      expect(n, 'the CI machine has 2 cores').toBeGreaterThanOrEqual(2);
      const { id, jobId } = await submit(
        { 'train.py': TRAIN, 'README.md': '# Tiny DDP\n\n    torchrun --nproc_per_node=2 train.py\n' },
        'train the model',
      );
      const job = await waitFor(
        async () => {
          const j = (await api.gql(JOB, { id }, user.token)).data.job;
          return ['SUCCEEDED', 'FAILED', 'NEEDS_INPUT', 'CANCELLED'].includes(j.status) ? j : null;
        },
        220_000,
        'job done',
      );
      const lines = await prisma.logChunk.findMany({
        where: { attempt: { task: { jobId } } },
        orderBy: [{ attemptId: 'asc' }, { seq: 'asc' }],
      });
      const log = lines.map((l) => `${l.stream}: ${l.text}`).join('\n');
      expect(job.status, `${job.statusReason}\n${JSON.stringify(job.currentPlan)}\n${log.slice(-3000)}`).toBe('SUCCEEDED');
      const procs = Math.min(2, n); // the README asks for 2
      expect(job.currentPlan.command).toBe(`python -m chatgpu.torchrun --standalone --nproc_per_node ${procs} --tee 3 train.py`);
      expect(job.currentPlan.summary).toMatch(
        new RegExp(`its README launches it with \`torchrun\`.*${procs} processes — one per CPU core of one worker slot, backend gloo`),
      );
      const run = await prisma.task.findFirstOrThrow({ where: { jobId, kind: 'RUN' } });
      expect(run.requirements).toMatchObject({ devices: procs });
      expect(job.currentPlan.summary).not.toMatch(/multi-node/);
      // Every rank's lines, each with its rank prefix.
      for (let r = 0; r < procs; r++) {
        for (let s = 0; s < STEPS; s++)
          expect(log).toMatch(new RegExp(`stdout: \\[default${r}\\]:rank ${r}/${procs} step ${s} local loss`));
        expect(log).toContain(`[default${r}]:rank ${r} weights equal on all ranks: True`);
      }
      // Rank 0's metrics only: one loss point per step, all from rank 0; rank 1's hand-printed line stays a log line.
      const points = await prisma.metricPoint.findMany({ where: { attempt: { task: { jobId, kind: 'RUN' } } }, orderBy: [{ seq: 'asc' }] });
      const loss = points.filter((p) => p.name === 'loss');
      expect(loss.map((p) => p.step)).toEqual([...Array(STEPS).keys()]);
      expect(points.filter((p) => p.name === 'rank').map((p) => p.value)).toEqual(Array(STEPS).fill(0));
      expect(points.some((p) => p.name === 'leaked')).toBe(false);
      expect(log).toContain('[default1]:CHATGPU_METRIC {"step": 0, "values": {"leaked": 1}}');
      expect(loss.at(-1)!.value).toBeLessThan(loss[0]!.value);
    },
  );

  it('a simulated 2-GPU worker is chosen over a simulated 1-GPU worker for a job planned with 2 GPUs', { timeout: 240_000 }, async () => {
    const token = wt.data.createWorkerToken.token as string;
    others.push(
      await startWorker(api.url, token, 'sim-1gpu', [
        '--python',
        '/usr/bin/python3',
        '--simulate-accelerator',
        'nvidia:RTX-4090:cuda-12.4',
      ]),
    );
    others.push(
      await startWorker(api.url, token, 'sim-2gpu', [
        '--python',
        '/usr/bin/python3',
        '--simulate-accelerator',
        '2xnvidia:RTX-4090:cuda-12.4',
      ]),
    );
    const { id, jobId } = await submit({ 'train.py': TRAIN.replace(`range(${STEPS})`, 'range(3)') }, 'train the model on an NVIDIA GPU');
    const job = await waitFor(
      async () => {
        const j = (await api.gql(JOB, { id }, user.token)).data.job;
        return ['SUCCEEDED', 'FAILED', 'NEEDS_INPUT', 'CANCELLED'].includes(j.status) ? j : null;
      },
      220_000,
      'job done',
    );
    const lines = await prisma.logChunk.findMany({
      where: { attempt: { task: { jobId } } },
      orderBy: [{ attemptId: 'asc' }, { seq: 'asc' }],
    });
    const log = lines.map((l) => `${l.stream}: ${l.text}`).join('\n');
    expect(job.status, `${job.statusReason}\n${JSON.stringify(job.currentPlan)}\n${log.slice(-3000)}`).toBe('SUCCEEDED');
    expect(job.currentPlan.command).toBe('python -m chatgpu.torchrun --standalone --nproc_per_node 2 --tee 3 train.py');
    expect(job.currentPlan.summary).toMatch(/2 processes — one per NVIDIA GPU of one worker, backend NCCL or gloo, as the script chooses/);
    const attempts = await prisma.attempt.findMany({ where: { task: { jobId } }, include: { worker: { select: { name: true } } } });
    expect(attempts.map((a) => a.worker.name)).toEqual(attempts.map(() => 'sim-2gpu'));
    expect(log).toContain('[default1]:rank 1/2 step 2 local loss');
  });
});
