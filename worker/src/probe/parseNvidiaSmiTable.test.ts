import { describe, expect, it } from 'vitest';
import { fixture } from '../../test/fixtures/fixture.js';
import { parseNvidiaSmiTable } from './parseNvidiaSmiTable.js';

describe('parseNvidiaSmiTable', () => {
  it('reads driver, CUDA version and each GPU, ignoring the process list', () => {
    const r = parseNvidiaSmiTable(fixture('nvidia-smi-table.txt'));
    expect(r).toMatchObject({ driver: '545.29.06', cuda: '12.3', error: null });
    expect(r.gpus).toMatchObject([
      { index: 0, name: 'NVIDIA L4', memoryMiB: 23034, arch: 'sm_89', cuda: '12.3' },
      { index: 1, name: 'Tesla T4', memoryMiB: 15360, arch: 'sm_75' },
    ]);
  });

  it('returns the failure message of a broken driver', () => {
    const r = parseNvidiaSmiTable(fixture('nvidia-smi-nvml-mismatch.txt'));
    expect(r.gpus).toEqual([]);
    expect(r.error).toMatch(/Driver\/library version mismatch/);
    expect(parseNvidiaSmiTable('hello world').error).toBe('unrecognised nvidia-smi output');
  });
});
