/**
 * Right after `npm start` the local worker is still starting (2–3 s): a job submitted then must be
 * planned for it, not for hardware that is not there. The API is told a worker is starting
 * (Resources.workerStarting, set by main.ts); the planner's network_capacity waits for it, bounded.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { untilWorkerOnline } from '../src/localWorker.js';
import { startTestApi } from './helpers/api.js';
import { createJobAt, waitFor } from './helpers/agents.js';
import { startWorker, type TestWorker } from './helpers/worker.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const workers: TestWorker[] = [];
afterAll(async () => {
  for (const w of workers) await w.stop();
  await api.server.close();
});

const CUDA_SCRIPT = ['import torch', "x = torch.ones(3, device='cuda')", 'print("sum", float(x.sum()))', ''].join('\n');

describe('a job submitted while the local worker starts', () => {
  it('is planned for the worker that comes online, not for the hardware its code is hard-wired to', { timeout: 120_000 }, async () => {
    const user = await api.signUp();
    const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
    api.server.resources.workerStarting = untilWorkerOnline(api.server.resources, 60_000);
    const job = await createJobAt(api.url, user.token, { 'train.py': CUDA_SCRIPT }, 'run it');
    // The worker connects a few seconds after the job was submitted, as npm start's does.
    await new Promise((r) => setTimeout(r, 3000));
    workers.push(await startWorker(api.url, wt.data.createWorkerToken.token, 'late-local'));
    const plan = await waitFor(
      'a plan',
      async () =>
        (await api.server.db.prisma.job.findUniqueOrThrow({ where: { id: job.jobId }, include: { currentPlan: true } })).currentPlan,
      90_000,
      250,
    );
    // Hard-wired to CUDA, and the worker online is a CPU worker: migrated for it (a required preparation step), never planned for NVIDIA.
    expect((plan.requirements as { workload: string }).workload).toBe('torch-cpu');
    expect(plan.preparationWorkload).toMatchObject({
      target: { workload: 'torch-cpu' },
      steps: [{ transformation: 'pytorch-device-agnostic', required: true }],
    });
    await api.gql(`mutation($id: ID!) { cancelJob(id: $id) { __typename } }`, { id: job.id }, user.token);
  });

  it(
    'with no worker coming, planning goes on when the wait ends (the run waits in the queue and says why)',
    { timeout: 60_000 },
    async () => {
      // Its own API and database: no worker has ever connected to it.
      const alone = await startTestApi({ TICK_INTERVAL_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
      try {
        const user = await alone.signUp();
        alone.server.resources.workerStarting = untilWorkerOnline(alone.server.resources, 1500, 100);
        const started = Date.now();
        const job = await createJobAt(alone.url, user.token, { 'main.py': 'print("hello")\n' }, 'run it');
        const plan = await waitFor(
          'a plan',
          async () =>
            (await alone.server.db.prisma.job.findUniqueOrThrow({ where: { id: job.jobId }, include: { currentPlan: true } })).currentPlan,
          40_000,
          250,
        );
        expect((plan.requirements as { workload: string }).workload).toBe('python');
        // It waited for the worker that never came (the 1.5 s limit), then planned.
        expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
      } finally {
        await alone.server.close();
      }
    },
  );
});

describe('a job planned while no worker was online', () => {
  it('is planned again when workers come and none of them can run what it was planned for', { timeout: 150_000 }, async () => {
    const user = await api.signUp();
    const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w2"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
    for (const w of workers.splice(0)) await w.stop();
    await waitFor(
      'no worker online',
      async () =>
        (await api.server.db.prisma.worker.updateMany({ where: { status: 'ONLINE' }, data: { status: 'OFFLINE' } })) &&
        (await api.server.db.prisma.worker.count({ where: { status: 'ONLINE' } })) === 0,
      30_000,
      250,
    );
    api.server.resources.workerStarting = undefined;
    const job = await createJobAt(api.url, user.token, { 'train.py': CUDA_SCRIPT }, 'run it');
    // Planned with no worker online: hard-wired to CUDA, so for an NVIDIA worker; it waits.
    const first = await waitFor(
      'the first plan',
      async () =>
        (await api.server.db.prisma.job.findUniqueOrThrow({ where: { id: job.jobId }, include: { currentPlan: true } })).currentPlan,
      60_000,
      250,
    );
    expect((first.requirements as { workload: string }).workload).toBe('torch-cuda');
    // A CPU worker comes: the tick hands the job back to the planner, which migrates it for the CPU.
    workers.push(await startWorker(api.url, wt.data.createWorkerToken.token, 'cpu-arrives'));
    const second = await waitFor(
      'a second plan',
      async () => {
        const j = await api.server.db.prisma.job.findUniqueOrThrow({ where: { id: job.jobId }, include: { currentPlan: true } });
        return j.currentPlan && j.currentPlan.id !== first.id ? j.currentPlan : null;
      },
      120_000,
      500,
    );
    expect((second.requirements as { workload: string }).workload).toBe('torch-cpu');
    expect(second.preparationWorkload).toMatchObject({ steps: [{ transformation: 'pytorch-device-agnostic' }] });
    const replanned = await api.server.db.prisma.jobEvent.findFirst({
      where: { jobId: job.jobId, kind: 'job.status', payload: { path: ['transition'], equals: 'replan' } },
    });
    expect(JSON.stringify(replanned?.payload)).toContain('planned while no worker was online');
    await api.gql(`mutation($id: ID!) { cancelJob(id: $id) { __typename } }`, { id: job.id }, user.token);
  });
});
