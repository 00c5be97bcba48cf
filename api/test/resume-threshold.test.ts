/**
 * The checkpoint-resume step proposed by the run's length, not only when asked: the real API with the
 * builtin planner and one real `chatgpu-worker` running PyTorch on this machine's CPU.
 *   - over the threshold (RESUME_THRESHOLD_SEC, here 2 s): the smoke run's estimate of the full run is
 *     longer, so the job is planned again (the replan's evidence says the estimate and the threshold),
 *     the new plan has the step, the kill-and-resume check accepts it, and the job SUCCEEDS;
 *   - under it (3600 s): the full run starts after the smoke run with the plan as it was.
 * Beside them, resumeReplanEvidence's other refusals on the same jobs' code (domain/preparation/resumeReplan.ts).
 */
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { resumeReplanEvidence } from '../src/domain/preparation/resumeReplan.js';
import { startTestApi } from './helpers/api.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const TRAIN = `import argparse, json, os, time
import torch
from torch import nn

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=20)
a = p.parse_args()
torch.manual_seed(0)
x = torch.randn(64, 4)
y = x.sum(dim=1, keepdim=True)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(a.epochs):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch + 1}/{a.epochs} loss {loss.item():.8f}", flush=True)
    time.sleep(0.25)
os.makedirs("outputs", exist_ok=True)
torch.save(model.state_dict(), "outputs/model.pt")
json.dump({"loss": loss.item()}, open("outputs/metrics.json", "w"))
`;

async function runJob(thresholdSec: number) {
  const api = await startTestApi(
    { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', RESUME_THRESHOLD_SEC: String(thresholdSec) },
    { scheduler: true, model: createBuiltinClient() },
  );
  const prisma = api.server.db.prisma;
  const user = await api.signUp();
  const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
  const worker = await startWorker(api.url, wt.data.createWorkerToken.token, 'box', ['--python', '/usr/bin/python3']);
  const put = await api.putBlob(TRAIN, user.token);
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
    { i: { title: 'long training', request: 'train the model', files: [{ path: 'train.py', sha256: put.sha256 }] } },
    user.token,
  );
  const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
  const job = await waitFor(
    async () => {
      const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      return ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(j.status) ? j : null;
    },
    300_000,
    'the job to end',
    500,
  );
  await worker.stop();
  const events = await prisma.jobEvent.findMany({ where: { jobId }, orderBy: { id: 'asc' } });
  const plans = await prisma.plan.findMany({ where: { jobId }, orderBy: { version: 'asc' } });
  const records = await prisma.preparationRecord.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
  // The smoke run's estimate (a preparation run's, on the same class, is recorded the same way: left out).
  const smoke = events
    .filter((e) => e.kind === 'smoke.result')
    .map((e) => (e.payload as { estimate: { durationSec: number; source: string } }).estimate)
    .filter((x) => x.source === 'smoke run');
  const replans = events
    .filter((e) => e.kind === 'job.status' && (e.payload as { transition?: string }).transition === 'replan')
    .map((e) => (e.payload as { evidence: string }).evidence);
  const original = await prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
  return { api, job, plans, records, smoke, replans, original };
}

describe('checkpoint-resume by the run’s estimate', () => {
  it(
    'over the threshold: planned again after the smoke run with the step, accepted by the check; the job succeeds',
    { timeout: 400_000 },
    async () => {
      const { api, job, plans, records, smoke, replans, original } = await runJob(2);
      expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
      expect(smoke).toHaveLength(1);
      expect(smoke[0]!.durationSec).toBeGreaterThan(5);
      expect(replans).toEqual([
        expect.stringMatching(
          new RegExp(
            `^Not failed: the smoke run estimates the full run at ${Math.round(smoke[0]!.durationSec)} s, longer than the checkpoint-resume threshold of 2 s, and train\\.py trains with PyTorch`,
          ),
        ),
      ]);
      expect(plans.map((p) => p.version)).toEqual([1, 2]);
      expect(plans[0]!.preparationWorkload).toBeNull();
      expect(plans[1]!.preparationWorkload).toMatchObject({
        steps: [{ name: 'resume', transformation: 'checkpoint-resume', required: false }],
      });
      expect(plans[1]!.smokeRun).toBeNull();
      expect(records.map((r) => [r.step, r.outcome])).toEqual([
        ['reference', 'ACCEPTED'],
        ['resume', 'ACCEPTED'],
      ]);
      // Once per job: the same estimate does not replan it again.
      const requirements = plans[0]!.requirements as { checkpoint?: unknown };
      expect(
        await resumeReplanEvidence(api.server.resources, { jobId: job.id, codeVersionId: original.id, requirements }, 10_000),
      ).toBeNull();
    },
  );

  it('under the threshold: no replan, the full run follows the smoke run with the plan as it was', { timeout: 300_000 }, async () => {
    const { api, job, plans, records, smoke, replans, original } = await runJob(3600);
    expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
    expect(smoke).toHaveLength(1);
    expect(smoke[0]!.durationSec).toBeLessThan(3600);
    expect(replans).toEqual([]);
    expect(plans.map((p) => p.version)).toEqual([1]);
    expect(records).toEqual([]);
    const r = api.server.resources;
    const requirements = plans[0]!.requirements as { checkpoint?: unknown };
    // The same job's code over this API's threshold would be replanned; not when the plan checkpoints by itself.
    expect(await resumeReplanEvidence(r, { jobId: job.id, codeVersionId: original.id, requirements }, 3601)).toMatch(
      /estimates the full run at 3601 s, longer than the checkpoint-resume threshold of 3600 s/,
    );
    expect(await resumeReplanEvidence(r, { jobId: job.id, codeVersionId: original.id, requirements }, 3600)).toBeNull();
    expect(
      await resumeReplanEvidence(r, { jobId: job.id, codeVersionId: original.id, requirements: { checkpoint: { path: 'ckpt' } } }, 9999),
    ).toBeNull();
  });
});
