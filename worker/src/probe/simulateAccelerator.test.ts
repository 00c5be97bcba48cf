import { describe, expect, it } from 'vitest';
import {
  applySimulatedAccelerator,
  parseSimulateAccelerator,
  SIMULATED_NOTE,
  simulatedTaskEnv,
  type SimulatedAccelerator,
} from './simulateAccelerator.js';
import type { Capabilities } from './types.js';

const CPU_BOX: Capabilities = {
  os: 'linux',
  arch: 'x64',
  hostname: 'box',
  cpu: { model: 'Test CPU', cores: 2 },
  memoryMiB: 8192,
  diskFreeMiB: 10000,
  accelerators: [],
  pythons: [],
  python: '/usr/bin/python3',
  toolchains: { nvcc: '13.0.48', hipcc: '5.2.21153' },
  workloads: ['shell', 'python', 'torch-cpu'],
  sandbox: 'bwrap',
  install: { enabled: false, index: null },
  probeErrors: [],
};

function sim(spec: string): SimulatedAccelerator {
  const s = parseSimulateAccelerator(spec);
  if ('error' in s) throw new Error(s.error);
  return s;
}

describe('parseSimulateAccelerator', () => {
  it('reads the issue’s two forms', () => {
    expect(parseSimulateAccelerator('nvidia:RTX-4090:cuda-12.4')).toEqual({
      spec: 'nvidia:RTX-4090:cuda-12.4',
      vendor: 'nvidia',
      name: 'RTX 4090',
      runtime: 'cuda 12.4',
      arch: null,
      note: SIMULATED_NOTE,
    });
    expect(parseSimulateAccelerator('amd:RX-7900-XTX:rocm-6.1:gfx1100')).toMatchObject({
      vendor: 'amd',
      name: 'RX 7900 XTX',
      runtime: 'rocm 6.1',
      arch: 'gfx1100',
    });
    expect(parseSimulateAccelerator('NVIDIA:H100:CUDA-12:sm_90')).toMatchObject({ vendor: 'nvidia', runtime: 'cuda 12', arch: 'sm_90' });
  });

  it.each([
    ['nvidia:RTX-4090', /VENDOR:NAME:RUNTIME/],
    ['intel:Arc:oneapi-1', /vendor must be nvidia or amd/],
    ['nvidia:RTX 4090!:cuda-12.4', /name .* must be letters/],
    ['nvidia:RTX-4090:rocm-6.1', /runtime for nvidia must look like cuda-12.4/],
    ['amd:MI300X:rocm-6.1:sm_90', /arch for amd must look like gfx1100/],
    ['amd:MI300X:rocm-6.1:gfx942:extra', /VENDOR:NAME:RUNTIME/],
    ['1xnvidia:RTX-4090:cuda-12.4', /device count .* must be 2 to 16/],
    ['17xnvidia:RTX-4090:cuda-12.4', /device count .* must be 2 to 16/],
  ])('refuses %s with a clear error', (spec, re) => {
    const r = parseSimulateAccelerator(spec);
    expect('error' in r && r.error).toMatch(re);
  });
});

describe('applySimulatedAccelerator', () => {
  it('an NVIDIA class: the accelerator (marked simulated) and the CUDA workloads this CPU machine can serve', () => {
    const caps = applySimulatedAccelerator(CPU_BOX, sim('nvidia:RTX-4090:cuda-12.4:sm_89'));
    expect(caps.accelerators).toEqual([
      {
        vendor: 'nvidia',
        index: 0,
        name: 'RTX 4090 (simulated accelerator)',
        memoryMiB: null,
        driver: null,
        runtime: 'cuda 12.4',
        arch: 'sm_89',
        simulated: true,
      },
    ]);
    expect(caps.workloads).toEqual(['shell', 'python', 'torch-cpu', 'torch-cuda', 'cuda-cxx']);
    expect(caps.simulatedAccelerator?.spec).toBe('nvidia:RTX-4090:cuda-12.4:sm_89');
  });

  it('an AMD class replaces a real accelerator and its workloads; no compiler, no C++ workload', () => {
    const real: Capabilities = {
      ...CPU_BOX,
      toolchains: { nvcc: null, hipcc: null },
      accelerators: [{ vendor: 'nvidia', index: 0, name: 'T4', memoryMiB: 15360, driver: '535', runtime: 'cuda 12.2', arch: 'sm_75' }],
      workloads: ['shell', 'python', 'torch-cpu', 'torch-cuda'],
    };
    const caps = applySimulatedAccelerator(real, sim('amd:RX-7900-XTX:rocm-6.1:gfx1100'));
    expect(caps.accelerators.map((a) => [a.vendor, a.simulated])).toEqual([['amd', true]]);
    expect(caps.workloads).toEqual(['shell', 'python', 'torch-cpu', 'torch-rocm']);
  });

  it('a device count (2xnvidia:…): that many simulated GPUs, indexed, so the worker is placed as a multi-GPU machine', () => {
    const two = sim('2xnvidia:RTX-4090:cuda-12.4');
    expect(two).toMatchObject({ spec: '2xnvidia:RTX-4090:cuda-12.4', vendor: 'nvidia', name: 'RTX 4090', count: 2 });
    const caps = applySimulatedAccelerator(CPU_BOX, two);
    expect(caps.accelerators.map((a) => [a.vendor, a.index, a.simulated])).toEqual([
      ['nvidia', 0, true],
      ['nvidia', 1, true],
    ]);
    expect(applySimulatedAccelerator(CPU_BOX, sim('nvidia:RTX-4090:cuda-12.4')).accelerators).toHaveLength(1);
  });

  it('without PyTorch nothing of torch is advertised', () => {
    const caps = applySimulatedAccelerator({ ...CPU_BOX, workloads: ['shell', 'python'] }, sim('amd:RX-6900-XT:rocm-5.2:gfx1030'));
    expect(caps.workloads).toEqual(['shell', 'python', 'hip-cxx']);
  });
});

describe('simulatedTaskEnv', () => {
  it('labels the task and makes hipcc target AMD', () => {
    expect(simulatedTaskEnv(null)).toEqual({});
    expect(simulatedTaskEnv(sim('nvidia:RTX-4090:cuda-12.4'))).toEqual({ CHATGPU_SIMULATED_ACCELERATOR: 'nvidia:RTX-4090:cuda-12.4' });
    expect(simulatedTaskEnv(sim('amd:RX-6900-XT:rocm-5.2:gfx1030'))).toEqual({
      CHATGPU_SIMULATED_ACCELERATOR: 'amd:RX-6900-XT:rocm-5.2:gfx1030',
      HIP_PLATFORM: 'amd',
    });
  });
});
