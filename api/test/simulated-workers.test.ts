/**
 * Simulated accelerators (issue 13 §2) at the API's door: a worker started with
 * --simulate-accelerator advertises a GPU class while its numerics run on the CPU. Outside
 * production the API takes it (labelled on the worker row); a production API refuses it with a
 * typed error — over GraphQL and for a real worker process — unless the operator allows it
 * (CHATGPU_ALLOW_SIMULATED_ACCELERATORS=true). Real API processes in-process, real PostgreSQL.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { repoRoot, spawnProc } from './helpers/processes.js';
import { createWorkerToken } from './helpers/protocolClient.js';

const SIMULATED_CAPS = {
  os: 'linux',
  arch: 'x64',
  cpu: { model: 'Test CPU', cores: 2 },
  memoryMiB: 8192,
  accelerators: [
    { vendor: 'nvidia', name: 'RTX 4090 (simulated accelerator)', memoryMiB: null, runtime: 'cuda 12.4', arch: 'sm_89', simulated: true },
  ],
  workloads: ['python', 'torch-cpu', 'torch-cuda', 'shell'],
  simulatedAccelerator: {
    spec: 'nvidia:RTX-4090:cuda-12.4:sm_89',
    vendor: 'nvidia',
    name: 'RTX 4090',
    runtime: 'cuda 12.4',
    arch: 'sm_89',
  },
};

const HELLO = `mutation($i: WorkerHelloInput!) { workerHello(input: $i) { __typename
  ... on WorkerHelloResult { workerId worker { simulatedAccelerator } }
  ... on SimulatedAcceleratorRefusedError { code message accelerator }
  ... on ValidationError { message } } }`;

async function hello(api: TestApi, name: string, capabilities: unknown) {
  const user = await api.signUp();
  const token = await createWorkerToken(api, user.token);
  const r = await api.gql(HELLO, { i: { name, version: 'test', slots: 1, capabilities } }, token);
  return { r, token, user };
}

const dev = await startTestApi();
const prod = await startTestApi({ NODE_ENV: 'production' });
const prodAllowing = await startTestApi({ NODE_ENV: 'production', CHATGPU_ALLOW_SIMULATED_ACCELERATORS: 'true' });

describe('a worker with a simulated accelerator says hello', () => {
  it('outside production: accepted, and the worker is labelled', async () => {
    const { r } = await hello(dev, 'sim', SIMULATED_CAPS);
    expect(r.data.workerHello).toMatchObject({
      __typename: 'WorkerHelloResult',
      worker: { simulatedAccelerator: 'nvidia:RTX-4090:cuda-12.4:sm_89' },
    });
    const row = await dev.server.db.prisma.worker.findFirstOrThrow({ where: { name: 'sim' } });
    expect(row).toMatchObject({ accelVendor: 'nvidia', simulatedAccelerator: 'nvidia:RTX-4090:cuda-12.4:sm_89' });
  });

  it('an accelerator marked simulated without the summary is still labelled', async () => {
    const { simulatedAccelerator: _omit, ...caps } = SIMULATED_CAPS;
    const { r } = await hello(dev, 'sim-bare', caps);
    expect(r.data.workerHello.worker.simulatedAccelerator).toBe('nvidia:RTX 4090 (simulated accelerator)');
  });

  it('a real machine is not labelled', async () => {
    const { r } = await hello(dev, 'real', {
      ...SIMULATED_CAPS,
      accelerators: [{ vendor: 'nvidia', name: 'RTX 4090', memoryMiB: 24564, runtime: 'cuda 12.4' }],
      simulatedAccelerator: null,
    });
    expect(r.data.workerHello).toMatchObject({ __typename: 'WorkerHelloResult', worker: { simulatedAccelerator: null } });
  });

  it('a production API refuses it with a typed error, and stores nothing', async () => {
    const { r } = await hello(prod, 'sim', SIMULATED_CAPS);
    expect(r.data.workerHello).toMatchObject({
      __typename: 'SimulatedAcceleratorRefusedError',
      code: 'SIMULATED_ACCELERATOR_REFUSED',
      accelerator: 'nvidia:RTX-4090:cuda-12.4:sm_89',
    });
    expect(r.data.workerHello.message).toMatch(/production mode .* CHATGPU_ALLOW_SIMULATED_ACCELERATORS=true/);
    expect(await prod.server.db.prisma.worker.count()).toBe(0);
    // A real machine is welcome there.
    const real = await hello(prod, 'real', {
      ...SIMULATED_CAPS,
      accelerators: [{ vendor: 'nvidia', name: 'RTX 4090', memoryMiB: 24564, runtime: 'cuda 12.4' }],
      simulatedAccelerator: null,
    });
    expect(real.r.data.workerHello.__typename).toBe('WorkerHelloResult');
  });

  it('a production API whose operator allows them takes it, labelled', async () => {
    const { r } = await hello(prodAllowing, 'sim', SIMULATED_CAPS);
    expect(r.data.workerHello).toMatchObject({
      __typename: 'WorkerHelloResult',
      worker: { simulatedAccelerator: 'nvidia:RTX-4090:cuda-12.4:sm_89' },
    });
  });

  it(
    'a real worker process with --simulate-accelerator is refused by the production API and exits saying why',
    { timeout: 90_000 },
    async () => {
      const user = await prod.signUp();
      const token = await createWorkerToken(prod, user.token);
      const p = spawnProc(
        process.execPath,
        [
          path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs'),
          '--server',
          prod.url,
          '--name',
          'sim-proc',
          '--data-dir',
          path.join(prod.dataDir, 'w'),
          '--sandbox',
          'none',
          '--simulate-accelerator',
          'amd:RX-7900-XTX:rocm-6.1:gfx1100',
        ],
        {
          env: { ...process.env, CHATGPU_WORKER_TOKEN: token },
        },
      );
      await p.waitFor(/SIMULATED ACCELERATOR amd:RX-7900-XTX:rocm-6.1:gfx1100/, 60_000);
      await p.waitFor(
        /the API refused this worker: This API runs in production mode and refuses workers with a simulated accelerator \(amd:RX-7900-XTX:rocm-6.1:gfx1100\)/,
        60_000,
      );
      expect(await p.stop()).not.toBe(0);
      expect(await prod.server.db.prisma.worker.count({ where: { name: 'sim-proc' } })).toBe(0);
    },
  );

  it('a malformed --simulate-accelerator stops the worker before it connects', { timeout: 60_000 }, async () => {
    const p = spawnProc(
      process.execPath,
      [path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs'), '--server', dev.url, '--simulate-accelerator', 'intel:Arc:oneapi-1'],
      { env: { ...process.env, CHATGPU_WORKER_TOKEN: 'cgw_x' } },
    );
    await p.waitFor(/--simulate-accelerator: vendor must be nvidia or amd/, 30_000);
    const code = p.child.exitCode ?? (await new Promise((r) => p.child.once('exit', r)));
    expect(code).toBe(2);
  });
});

describe('configuration', () => {
  it('CHATGPU_ALLOW_SIMULATED_ACCELERATORS takes true or false only; production refuses by default', () => {
    expect(() => loadConfig({ CHATGPU_ALLOW_SIMULATED_ACCELERATORS: 'yes' })).toThrow(/CHATGPU_ALLOW_SIMULATED_ACCELERATORS/);
    expect(loadConfig({}).allowSimulatedAccelerators).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).allowSimulatedAccelerators).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', CHATGPU_ALLOW_SIMULATED_ACCELERATORS: 'false' }).allowSimulatedAccelerators).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', CHATGPU_ALLOW_SIMULATED_ACCELERATORS: 'true' }).allowSimulatedAccelerators).toBe(true);
  });
});
