import { describe, expect, it } from 'vitest';
import { CPU_WORKER, NVIDIA_WORKER, entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { hardwareChoice, lowerBound } from './hardwareChoice.js';

const AMD_WORKER = { ...CPU_WORKER, accelVendor: 'amd', workloads: ['python', 'torch-cpu', 'torch-rocm'] };
const torchFacts = (over: Record<string, unknown> = {}) => ({ usesTorch: true, entryPoints: [entry('train.py', over)] });
const hw = (r: Parameters<typeof runRules>[0]) => {
  const { planning } = runRules({ ...r, reads: { 'train.py': '' } }, hardwareChoice);
  return { hardware: planning.hardware, migrate: planning.migrate, toAmd: planning.toAmd, minTorch: planning.minTorch };
};

describe('hardwareChoice', () => {
  it('no torch: python; torch and "any": NVIDIA when online, else the CPU', () => {
    expect(hw({ request: 'run it', facts: { entryPoints: [entry('train.py')] } }).hardware).toEqual({ workload: 'python' });
    expect(hw({ request: 'run it', facts: torchFacts(), classes: [CPU_WORKER, NVIDIA_WORKER] }).hardware).toEqual({
      workload: 'torch-cuda',
      accelVendor: 'nvidia',
    });
    expect(hw({ request: 'run it', facts: torchFacts() }).hardware).toEqual({ workload: 'torch-cpu' });
  });

  it('hard-wired to CUDA with no NVIDIA worker online: migrated to what is online; with none online: planned for NVIDIA', () => {
    expect(hw({ request: 'run it', facts: torchFacts({ hardwiredCuda: ['train.py:3'] }) })).toEqual({
      hardware: { workload: 'torch-cpu' },
      migrate: true,
      toAmd: false,
      minTorch: null,
    });
    expect(hw({ request: 'run it', facts: torchFacts({ hardwiredCuda: ['train.py:3'] }), classes: [] })).toMatchObject({
      hardware: { workload: 'torch-cuda', accelVendor: 'nvidia' },
      migrate: false,
    });
  });

  it('NVIDIA code the user wants on AMD, with both online: the AMD target and the migration', () => {
    expect(
      hw({ request: 'run it on the AMD GPU', facts: torchFacts({ hardwiredCuda: ['train.py:3'] }), classes: [NVIDIA_WORKER, AMD_WORKER] }),
    ).toEqual({ hardware: { workload: 'torch-rocm', accelVendor: 'amd' }, migrate: true, toAmd: true, minTorch: null });
  });

  it('a torch pin only some workers meet: minTorch, and the hardware among those that meet it', () => {
    const pins = [{ name: 'torch', spec: '>=2.1', file: 'requirements.txt', line: 'torch>=2.1' }];
    const old = { ...NVIDIA_WORKER, torchVersions: ['1.13.0'] };
    expect(hw({ request: 'run it', facts: { ...torchFacts(), pins }, classes: [CPU_WORKER, old] })).toEqual({
      hardware: { workload: 'torch-cpu' },
      migrate: false,
      toAmd: false,
      minTorch: '2.1',
    });
    expect(lowerBound('>=2.1,<3')).toBe('2.1');
    expect(lowerBound('~=2.1.0')).toBe('2.1');
    expect(lowerBound('<3')).toBeNull();
  });
});
