import { describe, expect, it } from 'vitest';
import { fixture } from '../../test/fixtures/fixture.js';
import { parseRocminfo } from './parseRocminfo.js';

describe('parseRocminfo', () => {
  it('keeps GPU agents only, with gfx target, marketing name and coarse-grained VRAM', () => {
    const r = parseRocminfo(fixture('rocminfo.txt'));
    expect(r.error).toBeNull();
    expect(r.gpus).toEqual([{ index: 0, name: 'AMD Radeon RX 6800 XT', memoryMiB: 16368, arch: 'gfx1030', driver: null, deviceId: null }]);
  });

  it('reports a machine without the ROCk driver', () => {
    const r = parseRocminfo('\u001b[31mROCk module is NOT loaded, possibly no GPU devices\u001b[0m\n');
    expect(r.gpus).toEqual([]);
    expect(r.error).toBe('ROCk module is NOT loaded, possibly no GPU devices');
    expect(parseRocminfo('garbage').error).toMatch(/unrecognised/);
  });
});
