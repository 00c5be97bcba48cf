import { describe, expect, it } from 'vitest';
import { fixture } from '../../test/fixtures/fixture.js';
import { parseRocmSmi } from './parseRocmSmi.js';

describe('parseRocmSmi', () => {
  it('reads JSON with VRAM, gfx version (decimal gfx9 stepping fixed) and driver', () => {
    const r = parseRocmSmi(fixture('rocm-smi.json'));
    expect(r).toMatchObject({ driver: '6.3.6', error: null });
    expect(r.gpus).toMatchObject([
      { index: 0, name: 'AMD Radeon RX 6800 XT', memoryMiB: 16368, arch: 'gfx1030', driver: '6.3.6' },
      { index: 1, name: 'AMD Instinct MI210', memoryMiB: 65520, arch: 'gfx90a' },
    ]);
  });

  it('reads CSV with quoted commas', () => {
    const r = parseRocmSmi(fixture('rocm-smi.csv'));
    expect(r.gpus).toMatchObject([{ index: 0, name: 'AMD Radeon VII', arch: 'gfx906' }]);
  });

  it('reads the GPU[n] key/value text, naming cards that only print a device id', () => {
    const r = parseRocmSmi(fixture('rocm-smi-showproductname.txt'));
    expect(r.gpus).toMatchObject([
      { index: 0, name: 'AMD Instinct MI210', arch: 'gfx90a' },
      { index: 1, name: 'AMD Instinct MI210', memoryMiB: 65520, arch: 'gfx90a' },
    ]);
  });

  it('reads the concise table', () => {
    const r = parseRocmSmi(fixture('rocm-smi-concise.txt'));
    expect(r.gpus).toMatchObject([{ index: 0, name: 'Radeon RX 7900 XTX', arch: 'gfx1100', deviceId: '0x744c' }]);
  });

  it('reports errors and garbage instead of throwing', () => {
    expect(parseRocmSmi('')).toMatchObject({ gpus: [], error: expect.any(String) });
    expect(parseRocmSmi('{not json')).toMatchObject({ gpus: [], error: expect.stringMatching(/JSON/) });
    expect(parseRocmSmi('ERROR:root:Driver not initialized (amdgpu not found in modules)').error).toMatch(/Driver not initialized/);
  });
});
