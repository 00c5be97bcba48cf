import { describe, expect, it } from 'vitest';
import { fixture } from '../../test/fixtures/fixture.js';
import { appleArch, parseSysctl, sysctlInfo } from './parseSysctl.js';

describe('parseSysctl', () => {
  it('reads brand string, memory and cores', () => {
    expect(sysctlInfo(fixture('sysctl-m2.txt'))).toEqual({ cpuBrand: 'Apple M2 Pro', memoryMiB: 32768, cores: 12, appleArch: 'apple-m2' });
  });

  it('tolerates Linux style, Intel Macs and garbage', () => {
    expect(parseSysctl('kernel.hostname = box\n').get('kernel.hostname')).toBe('box');
    expect(appleArch('Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz')).toBeNull();
    expect(sysctlInfo('nonsense')).toEqual({ cpuBrand: null, memoryMiB: null, cores: null, appleArch: null });
  });
});
