import { describe, expect, it } from 'vitest';
import { checkableOutputs } from './checkableOutputs.js';

const base = { command: 'python main.py', workload: 'python', request: 'run it', preparation: false, service: false };

describe('the builtin planner marks deterministic outputs checkable', () => {
  it('a CPU program with no randomness, or seeded randomness, is checkable with tolerances for its runtime', () => {
    expect(checkableOutputs({ ...base, source: 'import json\njson.dump({"s": sum(range(10))}, open("outputs/r.json", "w"))\n' })).toEqual({
      compare: ['outputs'],
      tolerance: { rtol: 1e-9, atol: 1e-12 },
    });
    expect(checkableOutputs({ ...base, source: 'import random\nrandom.seed(42)\nx = random.random()\n' })).not.toBeNull();
    expect(
      checkableOutputs({ ...base, command: 'python pi.py --seed 42', source: 'import random\nrng = random.Random(args.seed)\n' }),
    ).not.toBeNull();
    expect(checkableOutputs({ ...base, source: 'import random\nrng = random.Random(args.seed)\nx = rng.random()\n' })).not.toBeNull();
    expect(
      checkableOutputs({ ...base, workload: 'torch-cpu', source: 'import torch\ntorch.manual_seed(0)\nx = torch.randn(3)\n' }),
    ).toEqual({ compare: ['outputs'], tolerance: { rtol: 1e-4, atol: 1e-6 } });
  });

  it('unseeded randomness, a clock in what is written, GPU numerics, preparation, services and a request saying so are not', () => {
    expect(checkableOutputs({ ...base, source: 'import random\nx = random.random()\n' })).toBeNull();
    expect(checkableOutputs({ ...base, source: 'import numpy as np\nx = np.random.rand(3)\n' })).toBeNull();
    expect(checkableOutputs({ ...base, source: 'import random\nrng = random.Random()\nx = rng.random()\n' })).toBeNull();
    expect(
      checkableOutputs({ ...base, source: 'import json, time\njson.dump({"t": time.time()}, open("outputs/r.json", "w"))\n' }),
    ).toBeNull();
    expect(checkableOutputs({ ...base, workload: 'torch-cuda', source: 'import torch\ntorch.manual_seed(0)\n' })).toBeNull();
    expect(checkableOutputs({ ...base, preparation: true, source: 'print(1)\n' })).toBeNull();
    expect(checkableOutputs({ ...base, service: true, source: 'print(1)\n' })).toBeNull();
    expect(checkableOutputs({ ...base, request: 'its results are not reproducible', source: 'print(1)\n' })).toBeNull();
  });

  it('a clock read only for progress (never written out) keeps it checkable', () => {
    expect(checkableOutputs({ ...base, source: 'import time\nt0 = time.time()\nprint(time.time() - t0)\n' })).not.toBeNull();
  });
});
