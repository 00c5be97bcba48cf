/**
 * Past preparation records steer the next proposals (issue 20 §2), with a real worker process:
 * a history is seeded (other users' jobs and one of this user's own) where bf16 autocast was
 * rejected on small MLPs on CPU workers 4 times out of 4, and high matmul precision accepted 3
 * times out of 3. The next job's plan names three optional optimizations in the order
 * channels-last, matmul, bf16: matmul is tried first, bf16 is SKIPPED with a record that
 * cites the evidence (and no candidate runs for it). The `similar_preparations` tool shows
 * the owner their own records and the network's only as counts.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { completed, createScriptedClient, fnCall } from '../src/agents/models/scriptedClient.js';
import { similarPreparationsTool } from '../src/agents/similarTool.js';
import { SIMILAR_REASON_PREFIX } from '../src/domain/preparation/similar.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';

const TRAIN = `import argparse, os
import torch
from torch import nn

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=3)
args = p.parse_args()
torch.manual_seed(0)
x = torch.randn(256, 8)
y = (x.sum(1) > 0).long()
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(args.epochs):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
os.makedirs("outputs", exist_ok=True)
torch.save(model.state_dict(), "outputs/model.pt")
`;

const step = (name: string, transformation: string) => ({
  name,
  kind: 'optimization',
  transformation,
  required: false,
  tolerance: null,
  on: null,
});
const PLAN = {
  summary: 'Train on a CPU worker; try three optional optimizations first.',
  asks: [],
  steps: ['Reference run', 'Optimizations', 'Train'],
  command: 'python train.py --epochs 3',
  environment: null,
  hardware: { workload: 'torch-cpu', accelVendor: null, minMemoryMiB: null, minAccelMemoryMiB: null },
  timeoutSec: 600,
  outputs: ['outputs'],
  acceptance: { exitCode: 0, requiredFiles: ['outputs/model.pt'], metrics: [], evaluate: null },
  preparation: {
    workload: { command: 'python train.py --epochs 1', timeoutSec: 300, scale: null },
    compare: ['outputs'],
    reference: { workload: 'torch-cpu', accelVendor: null },
    target: { workload: 'torch-cpu', accelVendor: null },
    steps: [step('opt-channels', 'channels-last'), step('opt-matmul', 'matmul-precision-high'), step('opt-bf16', 'autocast-bf16')],
    revisionBudget: null,
    frozenFiles: null,
    pinRun: null,
  },
  smoke: null,
};

const model = createScriptedClient([completed(fnCall('submit_plan', PLAN))]);
const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const other = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'cpu-similar');

/** A finished job of `ownerId` whose record says what `transformation` did on an MLP on a CPU worker. */
async function seed(ownerId: string, transformation: string, outcome: 'ACCEPTED' | 'REJECTED', reason: string) {
  const job = await prisma.job.create({ data: { ownerId, title: 'past', request: 'past', status: 'SUCCEEDED' } });
  const record = await prisma.preparationRecord.create({
    data: {
      jobId: job.id,
      step: 'opt',
      kind: 'optimization',
      hardware: {},
      workload: 'torch-cpu',
      accelerator: 'none',
      modelFamily: 'mlp',
      originalCodeId: randomUUID(),
      originalManifestSha: 'x',
      transformation,
      outcome,
      reason,
    },
  });
  return record.id;
}

describe('similar cases steer the next proposal', () => {
  it(
    'a candidate rejected in most similar cases is SKIPPED with the evidence; one accepted in them is tried first',
    { timeout: 200_000 },
    async () => {
      const mine = await seed(
        user.userId,
        'autocast-bf16',
        'REJECTED',
        'outputs differ from the reference beyond the tolerances: outputs/model.pt (bf16 on a CPU without bf16 units)',
      );
      for (let i = 0; i < 3; i++) await seed(other.userId, 'autocast-bf16', 'REJECTED', 'someone else’s private reason');
      for (let i = 0; i < 3; i++) await seed(other.userId, 'matmul-precision-high', 'ACCEPTED', 'faster');
      // A transformer's history is not a similar case for an MLP.
      const transformerJob = await prisma.job.create({
        data: { ownerId: other.userId, title: 'past', request: 'past', status: 'SUCCEEDED' },
      });
      for (const outcome of ['ACCEPTED', 'ACCEPTED', 'ACCEPTED', 'ACCEPTED'] as const) {
        await prisma.preparationRecord.create({
          data: {
            jobId: transformerJob.id,
            step: `opt-${randomUUID().slice(0, 8)}`,
            kind: 'optimization',
            hardware: {},
            workload: 'torch-cpu',
            accelerator: 'none',
            modelFamily: 'transformer',
            originalCodeId: randomUUID(),
            originalManifestSha: 'x',
            transformation: 'autocast-bf16',
            outcome,
            reason: 'ok',
          },
        });
      }

      const put = await api.putBlob(TRAIN, user.token);
      const r = await api.gql(
        `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
        { i: { title: 'opt', request: 'train it', files: [{ path: 'train.py', sha256: put.sha256 }] } },
        user.token,
      );
      const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
      let job;
      for (const end = Date.now() + 180_000; ; await new Promise((res) => setTimeout(res, 500))) {
        job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
        if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status) || Date.now() > end) break;
      }
      expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');

      const records = await prisma.preparationRecord.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
      // matmul (accepted 3 of 3 in similar cases) before channels-last (no history), bf16 last.
      expect(records.map((x) => [x.step, x.outcome])).toEqual([
        ['reference', 'ACCEPTED'],
        ['opt-matmul', 'SKIPPED'],
        ['opt-channels', 'SKIPPED'],
        ['opt-bf16', 'SKIPPED'],
      ]);
      expect(records.every((x) => x.modelFamily === 'mlp')).toBe(true);
      const bf16 = records[3]!;
      expect(bf16.reason).toBe(
        `${SIMILAR_REASON_PREFIX} autocast-bf16 on a mlp program on CPU-only workers was rejected in 4 of 4 similar cases across the network. Your records: ${mine.slice(0, 8)} (outputs differ from the reference beyond the tolerances: outputs/model.pt (bf16 on a CPU without bf16 units)).`,
      );
      expect(bf16.reason).not.toContain('someone else');
      // No candidate ran for it: the evidence saved the run.
      const tasks = await prisma.task.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
      expect(tasks.map((t) => t.kind)).toEqual(['REFERENCE', 'RUN']);

      // The agents' tool: the owner's own records in full, the network's as counts only.
      const out = (
        await similarPreparationsTool.read!({ transformation: 'autocast-bf16', accelerator: 'none' }, {
          r: api.server.resources,
          jobId,
        } as never)
      ).output as any;
      expect(out.key).toEqual({ transformation: 'autocast-bf16', modelFamily: 'mlp', accelerator: 'none' });
      expect(out.network).toEqual({ accepted: 0, rejected: 4 });
      expect(out.yourRecords.map((x: any) => x.recordId)).toEqual([mine]);
      expect(out.hazards).toEqual([
        'outputs differ from the reference beyond the tolerances: outputs/model.pt (bf16 on a CPU without bf16 units)',
      ]);
      expect(out.verdict).toMatch(/^skip: Skipped on the evidence of similar cases/);
      expect(JSON.stringify(out)).not.toContain('someone else');
    },
  );
});
