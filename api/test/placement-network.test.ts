/**
 * Placement by network policy (docs/data-downloads.md): a worker advertises its owner's
 * --allow-network (capabilities.allowNetwork), and the claim gives a task that needs the network
 * only to a worker whose policy gives it — a data-download step (requirements.download) to
 * `downloads` or `always`, any other network task to `always` only — so a refusing worker never
 * claims (and fails) what another would run. While only refusing workers are online, the wait
 * explanation names them. Protocol doubles of workers over real GraphQL, real PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { startTestApi } from './helpers/api.js';
import { addTask, CPU_CAPS, createJobWithFile, createWorkerToken, NVIDIA_CAPS, ProtocolWorker } from './helpers/protocolClient.js';
import { runTick } from '../src/scheduler/tick.js';
import { canRunOn, onlineWorkers } from '../src/domain/workers/placement.js';

const at = (d: Date, plusMs: number) => new Date(d.getTime() + plusMs);
const policy = (allowNetwork: string, caps: object = CPU_CAPS) => ({ ...caps, allowNetwork });
const DOWNLOAD = {
  workload: 'python' as const,
  network: true,
  download: { urls: ['http://127.0.0.1:9/corpus/input.txt'], files: ['data/prepare.py'] },
};

describe('placement by network policy', async () => {
  const api = await startTestApi();
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const job = await createJobWithFile(api, owner.token);
  const never = new ProtocolWorker(api, token, 'cpu-box');
  const downloads = new ProtocolWorker(api, token, 'dl-box');
  const always = new ProtocolWorker(api, token, 'open-box');
  const offline = (...ws: ProtocolWorker[]) =>
    prisma.worker.updateMany({ where: { id: { in: ws.map((w) => w.workerId) } }, data: { status: 'OFFLINE' } });
  const reasonOf = async (id: string) => {
    await runTick(api.server.resources, at(api.clock.now(), 2000));
    return (await prisma.task.findUniqueOrThrow({ where: { id } })).statusReason;
  };

  it('the policy is advertised in the hello and an unknown one is refused with a typed error', async () => {
    const h = await never.hello({ capabilities: policy('never') });
    expect(h.__typename).toBe('WorkerHelloResult');
    expect(h.worker.capabilities).toMatchObject({ allowNetwork: 'never' });
    const bad = await new ProtocolWorker(api, token, 'odd-box').hello({ capabilities: policy('sometimes') });
    expect(bad.__typename).toBe('ValidationError');
    expect(bad.issues).toEqual([expect.objectContaining({ path: ['capabilities', 'allowNetwork'] })]);
    expect(await prisma.worker.count({ where: { name: 'odd-box' } })).toBe(0);
  });

  it('a download step with a `never` and a `downloads` worker online: only the `downloads` worker gets it', async () => {
    await downloads.hello({ capabilities: policy('downloads') });
    const task = await addTask(api, job, { name: 'step:prepare-data', requirements: DOWNLOAD });
    const row = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    // The in-JS placement (explanations, trust checks) agrees with the claim.
    expect((await onlineWorkers(prisma)).filter((w) => canRunOn(row, w, 0)).map((w) => w.name)).toEqual(['dl-box']);
    expect(await never.claim({ max: 1 })).toEqual([]);
    const [a] = await downloads.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    expect(a!.task.requirements).toMatchObject({ network: true, download: DOWNLOAD.download });
    await downloads.complete(a!, { exitCode: 0 });
  });

  it('only a `never` worker online: it gets nothing and the task says why; it still runs work without the network', async () => {
    await offline(downloads);
    const task = await addTask(api, job, { name: 'step:prepare-data', requirements: DOWNLOAD });
    const plain = await addTask(api, job, { name: 'run', requirements: { workload: 'python' } });
    const got = await never.claim({ max: 2 });
    expect(got.map((a) => a.task.id)).toEqual([plain.id]);
    await never.complete(got[0]!, { exitCode: 0 });
    expect(await never.claim({ max: 1 })).toEqual([]);
    const reason = await reasonOf(task.id);
    expect(reason).toMatch(/^No online worker can run this: it needs python, a worker that allows data downloads/);
    expect(reason).toContain('(no online worker allows downloads: cpu-box runs with --allow-network never)');
    expect(await prisma.attempt.count({ where: { taskId: task.id } })).toBe(0);
    // A worker that allows downloads comes online: the waiting step is its.
    await downloads.hello({ capabilities: policy('downloads') });
    const [a] = await downloads.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    await downloads.complete(a!, { exitCode: 0 });
  });

  it('a network task that is no data download: not to a `downloads` worker, to an `always` worker', async () => {
    const task = await addTask(api, job, { name: 'fetches', requirements: { workload: 'python', network: true } });
    expect(await downloads.claim({ max: 1 })).toEqual([]);
    expect(await never.claim({ max: 1 })).toEqual([]);
    const reason = await reasonOf(task.id);
    expect(reason).toContain('a worker that gives any task the network (--allow-network always) (no online worker allows it: ');
    expect(reason).toContain('cpu-box runs with --allow-network never');
    expect(reason).toContain('dl-box runs with --allow-network downloads');
    await always.hello({ capabilities: policy('always') });
    const row = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect((await onlineWorkers(prisma)).filter((w) => canRunOn(row, w, 0)).map((w) => w.name)).toEqual(['open-box']);
    const [a] = await always.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    await always.complete(a!, { exitCode: 0 });
    // An `always` worker takes download steps too.
    const step = await addTask(api, job, { name: 'step:prepare-data', requirements: DOWNLOAD });
    const [b] = await always.claim({ max: 1 });
    expect(b!.task.id).toBe(step.id);
    await always.complete(b!, { exitCode: 0 });
  });

  it('a worker that advertises no policy has the default, downloads', async () => {
    await offline(never, downloads, always);
    const old = new ProtocolWorker(api, token, 'old-box');
    await old.hello({ capabilities: CPU_CAPS });
    const other = await addTask(api, job, { name: 'fetches', requirements: { workload: 'python', network: true } });
    const step = await addTask(api, job, { name: 'step:prepare-data', requirements: DOWNLOAD });
    const got = await old.claim({ max: 2 });
    expect(got.map((a) => a.task.id)).toEqual([step.id]);
    await old.complete(got[0]!, { exitCode: 0 });
    expect(await reasonOf(other.id)).toContain('no online worker allows it: old-box runs with --allow-network downloads');
    await offline(old);
  });

  it('a GPU worker that allows downloads takes a download step an idle CPU worker with `never` refuses', async () => {
    // The GPU worker leaves accelerator-free work to an idle CPU worker — but not work that one would refuse.
    await never.hello({ capabilities: policy('never') });
    const gpu = new ProtocolWorker(api, token, 'gpu-box');
    await gpu.hello({ capabilities: policy('downloads', NVIDIA_CAPS) });
    const plain = await addTask(api, job, { name: 'cpu work', requirements: { workload: 'python' } });
    const step = await addTask(api, job, { name: 'step:prepare-data', requirements: DOWNLOAD });
    const got = await gpu.claim({ max: 2 });
    expect(got.map((a) => a.task.id)).toEqual([step.id]);
    await gpu.complete(got[0]!, { exitCode: 0 });
    const [a] = await never.claim({ max: 1 });
    expect(a!.task.id).toBe(plain.id);
    await never.complete(a!, { exitCode: 0 });
  });
});
