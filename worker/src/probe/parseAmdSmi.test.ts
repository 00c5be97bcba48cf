import { describe, expect, it } from 'vitest';
import { fixture } from '../../test/fixtures/fixture.js';
import { parseAmdSmi } from './parseAmdSmi.js';

describe('parseAmdSmi', () => {
  it('reads GPU sections of `amd-smi static`, skipping CPU sections', () => {
    const r = parseAmdSmi(fixture('amd-smi-static.txt'));
    expect(r.error).toBeNull();
    expect(r.driver).toBe('6.7.0');
    expect(r.gpus).toEqual([
      { index: 0, name: 'AMD Instinct MI250X', memoryMiB: 65536, arch: 'gfx90a', driver: '6.7.0', deviceId: '0x740c' },
      { index: 1, name: 'AMD Instinct MI325X', memoryMiB: 262144, arch: 'gfx942', driver: null, deviceId: '0x74a5' },
    ]);
  });

  it('reads JSON output', () => {
    const json = JSON.stringify([
      { gpu: 0, asic: { market_name: 'MI300X', target_graphics_version: 'gfx942' }, vram: { size: { value: 196592, unit: 'MB' } } },
    ]);
    expect(parseAmdSmi(json).gpus).toMatchObject([{ index: 0, name: 'AMD Instinct MI300X', memoryMiB: 196592, arch: 'gfx942' }]);
  });

  it('reports garbage', () => {
    expect(parseAmdSmi('amd-smi: command failed\n')).toMatchObject({ gpus: [], error: 'amd-smi: command failed' });
    expect(parseAmdSmi('[broken')).toMatchObject({ gpus: [], error: expect.stringMatching(/JSON/) });
  });
});
