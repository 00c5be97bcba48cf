/**
 * Placement by device count (issue 38, distributed launchers): a task that needs N devices on one
 * worker (requirements.devices, from the plan's hardware.devices) is claimed only by a worker with N
 * accelerators of its vendor — or, on the CPU, N cores in one slot — and while none is online the
 * wait explanation names the count. Protocol doubles of workers over real GraphQL, real PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { startTestApi } from './helpers/api.js';
import { addTask, CPU_CAPS, createJobWithFile, createWorkerToken, NVIDIA_CAPS, ProtocolWorker } from './helpers/protocolClient.js';
import { runTick } from '../src/scheduler/tick.js';
import { canRunOn, onlineWorkers } from '../src/domain/workers/placement.js';
import { networkCapacity } from '../src/domain/workers/networkCapacity.js';
import { planRequirements } from '../src/domain/jobs/acceptPlan.js';
import { PlanSchema } from '../src/domain/jobs/planSchema.js';

const at = (d: Date, plusMs: number) => new Date(d.getTime() + plusMs);
const gpus = (n: number) => ({
  ...NVIDIA_CAPS,
  accelerators: Array.from({ length: n }, (_, i) => ({ ...NVIDIA_CAPS.accelerators[0]!, index: i })),
});

describe('placement by device count', async () => {
  const api = await startTestApi();
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const job = await createJobWithFile(api, owner.token);
  const one = new ProtocolWorker(api, token, 'one-gpu');
  const two = new ProtocolWorker(api, token, 'two-gpu');

  it('a job asking for 2 GPUs: the 1-GPU worker gets nothing and the wait names the count; the 2-GPU worker is chosen', async () => {
    await one.hello({ slots: 1, capabilities: gpus(1) });
    const task = await addTask(api, job, {
      name: 'ddp',
      command: 'python -m chatgpu.torchrun --standalone --nproc_per_node 2 --tee 3 train.py',
      requirements: { workload: 'torch-cuda', accelVendor: 'nvidia', devices: 2 },
    });
    // A one-GPU task is still the one-GPU worker's (devices absent or 1 changes nothing).
    const single = await addTask(api, job, { name: 'single', requirements: { workload: 'torch-cuda', accelVendor: 'nvidia', devices: 1 } });
    const got = await one.claim({ max: 1 });
    expect(got.map((a) => a.task.id)).toEqual([single.id]);
    await one.complete(got[0]!, { exitCode: 0 });
    expect(await one.claim({ max: 1 })).toEqual([]);

    await runTick(api.server.resources, at(api.clock.now(), 2000));
    const reason = (await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).statusReason;
    expect(reason).toMatch(
      /^No online worker can run this: it needs torch-cuda, 2 nvidia GPUs on one worker \(a distributed launch of 2 processes; multi-node runs are not supported\)/,
    );
    expect(reason).toMatch(/one-gpu \(python\/torch-cpu\/torch-cuda\/cuda-cxx, nvidia 24 GiB/);

    await two.hello({ slots: 1, capabilities: gpus(2) });
    const [a] = await two.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    expect(a!.task.requirements).toMatchObject({ devices: 2 });
    await two.complete(a!, { exitCode: 0 });
  });

  it('with both online, the 2-GPU worker takes the 2-GPU job even when the 1-GPU worker claims first', async () => {
    const task = await addTask(api, job, {
      name: 'ddp again',
      requirements: { workload: 'torch-cuda', accelVendor: 'nvidia', devices: 2 },
    });
    const workers = await onlineWorkers(prisma);
    const row = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(workers.filter((w) => canRunOn(row, w, 0)).map((w) => w.name)).toEqual(['two-gpu']);
    expect(await one.claim({ max: 1 })).toEqual([]);
    const [a] = await two.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    await two.complete(a!, { exitCode: 0 });
    // What the planner reads: the most GPUs one worker of the class has.
    const cap = await networkCapacity({ prisma });
    expect(cap.classes.find((c) => c.accelVendor === 'nvidia')).toMatchObject({ count: 2, maxDevices: 2 });
  });

  it('on the CPU a device is a core of one slot: 4 processes need a worker with 4 cores a slot', async () => {
    await prisma.worker.updateMany({ where: { id: { in: [one.workerId, two.workerId] } }, data: { status: 'OFFLINE' } });
    const halves = new ProtocolWorker(api, token, 'cpu-halves');
    await halves.hello({ slots: 2, capabilities: CPU_CAPS });
    const task = await addTask(api, job, { name: 'gloo ddp', requirements: { workload: 'torch-cpu', devices: 4 } });
    expect(await halves.claim({ max: 2 })).toEqual([]);
    await runTick(api.server.resources, at(api.clock.now(), 2000));
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).statusReason).toMatch(
      /4 CPU cores in one slot on one worker .*cpu-halves \(.*, 2 cores a slot\)/,
    );
    const whole = new ProtocolWorker(api, token, 'cpu-whole');
    await whole.hello({ slots: 1, capabilities: CPU_CAPS });
    const [a] = await whole.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    await whole.complete(a!, { exitCode: 0 });
    const cap = await networkCapacity({ prisma });
    expect(cap.classes.find((c) => c.accelVendor === 'none')).toMatchObject({ maxDevices: 0, maxSlotCores: 4 });
  });

  it('a bad device count is refused with a typed error, and the plan carries its count to the tasks', async () => {
    await expect(addTask(api, job, { name: 'zero', requirements: { workload: 'torch-cpu', devices: 0 } })).rejects.toMatchObject({
      name: 'ValidationError',
    });
    await expect(addTask(api, job, { name: 'half', requirements: { workload: 'torch-cpu', devices: 1.5 } })).rejects.toMatchObject({
      name: 'ValidationError',
    });
    const plan = PlanSchema.parse({
      summary: 's',
      steps: [],
      command: 'python -m chatgpu.torchrun --standalone --nproc_per_node 2 --tee 3 train.py',
      hardware: { workload: 'torch-cuda', accelVendor: 'nvidia', devices: 2 },
      outputs: [],
      acceptance: { requiredFiles: [], metrics: [] },
      asks: [],
    });
    expect(planRequirements(plan)).toMatchObject({ devices: 2 });
    expect(planRequirements({ ...plan, hardware: { ...plan.hardware, devices: 1 } })).not.toHaveProperty('devices');
    expect(PlanSchema.safeParse({ ...plan, hardware: { ...plan.hardware, devices: 0 } }).success).toBe(false);
  });
});

describe('devices held by live attempts', async () => {
  const api = await startTestApi();
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const job = await createJobWithFile(api, owner.token);
  const box = new ProtocolWorker(api, token, 'two-gpu-two-slots');
  await box.hello({ slots: 2, capabilities: gpus(2) });

  it('a 2-GPU task waits while a 1-GPU attempt holds one of the two GPUs, and no GPU task joins it while it runs', async () => {
    const one = await addTask(api, job, { name: 'one gpu', requirements: { workload: 'torch-cuda', accelVendor: 'nvidia' } });
    const [a] = await box.claim({ max: 1 });
    expect(a!.task.id).toBe(one.id);
    const two = await addTask(api, job, { name: 'two gpus', requirements: { workload: 'torch-cuda', accelVendor: 'nvidia', devices: 2 } });
    expect(await box.claim({ max: 1 })).toEqual([]); // one GPU free, a slot free
    await box.complete(a!, { exitCode: 0 });
    const [b] = await box.claim({ max: 1 });
    expect(b!.task.id).toBe(two.id);
    const another = await addTask(api, job, { name: 'another gpu task', requirements: { workload: 'torch-cuda', accelVendor: 'nvidia' } });
    const cpuWork = await addTask(api, job, { name: 'cpu work', requirements: { workload: 'torch-cpu' } });
    const got = await box.claim({ max: 1 });
    expect(got.map((x) => x.task.id)).toEqual([cpuWork.id]); // the free slot takes CPU work, not a GPU task
    await box.complete(got[0]!, { exitCode: 0 });
    await box.complete(b!, { exitCode: 0 });
    const [c] = await box.claim({ max: 1 });
    expect(c!.task.id).toBe(another.id);
    await box.complete(c!, { exitCode: 0 });
  });
});
