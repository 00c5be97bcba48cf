import { describe, expect, it } from 'vitest';
import { fixture } from '../../test/fixtures/fixture.js';
import { parseCollectEnv } from './parseCollectEnv.js';

describe('parseCollectEnv', () => {
  it('reads versions, availability and a multi-GPU list', () => {
    const r = parseCollectEnv(fixture('collect-env-2gpu.txt'));
    expect(r).toMatchObject({
      torchVersion: '2.3.1+cu121',
      cudaBuild: '12.1',
      rocmBuild: null,
      cudaAvailable: true,
      cudaRuntime: '12.1.105',
      hipRuntime: null,
      nvidiaDriver: '535.104.05',
      pythonVersion: '3.11.9',
      cpu: null, // "Architecture: x86_64" is lscpu output, not a model
      packages: { numpy: '1.26.4', torch: '2.3.1+cu121' },
    });
    expect(r.gpus).toEqual([
      { index: 0, name: 'NVIDIA A100-SXM4-80GB', arch: null },
      { index: 1, name: 'NVIDIA A100-SXM4-80GB', arch: null },
    ]);
  });

  it('returns nulls for garbage', () => {
    expect(parseCollectEnv('???')).toMatchObject({ torchVersion: null, cudaAvailable: null, gpus: [] });
    expect(parseCollectEnv('[conda] Could not collect\n').packages).toEqual({});
  });
});
