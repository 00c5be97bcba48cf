import { describe, expect, it } from 'vitest';
import { fixture } from '../../test/fixtures/fixture.js';
import { NVIDIA_QUERY_FIELDS, parseNvidiaSmiCsv } from './parseNvidiaSmiCsv.js';

describe('parseNvidiaSmiCsv', () => {
  it('reads noheader,nounits output by the queried field order', () => {
    const r = parseNvidiaSmiCsv(fixture('nvidia-smi-query-noheader-nounits.csv'), NVIDIA_QUERY_FIELDS);
    expect(r.error).toBeNull();
    expect(r.driver).toBe('550.54.14');
    expect(r.gpus).toMatchObject([
      { index: 0, name: 'NVIDIA GeForce RTX 3090', memoryMiB: 24576, computeCap: '8.6', arch: 'sm_86' },
      { index: 1, name: 'NVIDIA RTX A4000', memoryMiB: 16376, driver: '550.54.14', arch: 'sm_86' },
    ]);
  });

  it('reads a header with units, values with units and [N/A]', () => {
    const r = parseNvidiaSmiCsv(fixture('nvidia-smi-query-units.csv'));
    expect(r.gpus).toHaveLength(2);
    expect(r.gpus[0]).toMatchObject({
      name: 'Tesla V100-SXM2-32GB',
      memoryMiB: 32768,
      computeCap: '7.0',
      arch: 'sm_70',
      migEnabled: false,
    });
    // no compute_cap: the arch comes from the name
    expect(r.gpus[1]).toMatchObject({ computeCap: null, arch: 'sm_70' });
  });

  it('reports nvidia-smi failures and garbage instead of throwing', () => {
    expect(parseNvidiaSmiCsv(fixture('nvidia-smi-nvml-mismatch.txt'), NVIDIA_QUERY_FIELDS).error).toMatch(/Failed to initialize NVML/);
    expect(parseNvidiaSmiCsv('Field "compute_cap" is not a valid field to query.\n', NVIDIA_QUERY_FIELDS).error).toMatch(
      /not a valid field/,
    );
    expect(parseNvidiaSmiCsv('', NVIDIA_QUERY_FIELDS)).toMatchObject({ gpus: [], error: expect.any(String) });
    expect(parseNvidiaSmiCsv('\u0000\u0001 garbage')).toMatchObject({ gpus: [], error: expect.any(String) });
  });
});
