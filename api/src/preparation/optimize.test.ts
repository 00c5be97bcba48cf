/**
 * Optimization candidates on small scripts: each is proposed where the code and the target allow it,
 * not proposed elsewhere, edits minimally, byte-compiles, and is idempotent (applying it twice changes
 * nothing; code that already has it is not proposed).
 */
import { describe, expect, it } from 'vitest';
import { PARSER_PYTHON } from '../../test/preparation/toolchain.js';
import { optimization, proposeOptimizations, surveyOptimizations, type OptimizationName } from './optimize.js';
import { runStaticChecks } from './runStaticChecks.js';
import type { TransformContext } from './types.js';

const python = PARSER_PYTHON;
const CUDA_AMPERE: TransformContext = { target: 'cuda', runtime: { torch: '2.4', gpuArch: 'sm_86' } };
const CPU_113: TransformContext = { target: 'cpu', runtime: { torch: '1.13' } };

const CONVNET = `import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6, 2)

    def forward(self, x):
        return self.fc(torch.flatten(F.relu(self.conv(x)), 1))


def train(epochs=1):
    data = TensorDataset(torch.randn(8, 1, 8, 8), torch.randint(0, 2, (8,)))
    loader = DataLoader(data, batch_size=4, shuffle=True)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            out = model(x)
            loss = F.cross_entropy(out, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    return model


if __name__ == "__main__":
    train()
`;

/** The same training loop without convolutions. */
const MLP = CONVNET.replace('self.conv = nn.Conv2d(1, 4, 3)', 'self.conv = nn.Linear(8, 6)').replace(
  'self.fc = nn.Linear(4 * 6 * 6, 2)',
  'self.fc = nn.Linear(48, 2)',
);

const names = async (src: string, ctx: TransformContext): Promise<OptimizationName[]> =>
  (await proposeOptimizations({ 'train.py': src }, ctx, { python })).map((c) => c.name);

async function applied(name: OptimizationName, src: string, ctx: TransformContext): Promise<string> {
  const r = await optimization(name)({ 'train.py': src }, ctx, { python });
  expect(r.changed, `${name} should apply`).toBe(true);
  return r.tree['train.py']!;
}

describe('proposeOptimizations: which candidates for which target', () => {
  it('proposes every GPU candidate for a convnet on an Ampere CUDA worker with PyTorch 2.4', async () => {
    expect(await names(CONVNET, CUDA_AMPERE)).toEqual([
      'cudnn-benchmark',
      'matmul-precision-high',
      'autocast-bf16',
      'autocast-fp16',
      'dataloader-workers',
      'pin-memory',
      'torch-compile',
      'channels-last',
    ]);
  });

  it('on a CPU worker with PyTorch 1.13 proposes only bf16 autocast and loader workers, and says why not the rest', async () => {
    const s = await surveyOptimizations({ 'train.py': CONVNET }, CPU_113, { python });
    expect(s.candidates.map((c) => c.name)).toEqual(['autocast-bf16', 'dataloader-workers']);
    const why = Object.fromEntries(s.skipped.map((k) => [k.name, k.reason]));
    expect(why['cudnn-benchmark']).toMatch(/CUDA and ROCm/);
    expect(why['pin-memory']).toMatch(/CUDA transfers only/);
    expect(why['torch-compile']).toMatch(/PyTorch 1\.13 \(torch\.compile needs ≥ 2\.0\)/);
    expect(why['channels-last']).toMatch(/target cpu/);
  });

  it('gates TF32 on Ampere+ and PyTorch ≥ 1.12, NVIDIA only', async () => {
    expect(await names(CONVNET, { target: 'cuda', runtime: { torch: '2.4', gpuArch: 'sm_75' } })).not.toContain('matmul-precision-high');
    expect(await names(CONVNET, { target: 'cuda', runtime: { torch: '1.13', computeCapability: '7.5' } })).not.toContain(
      'matmul-precision-high',
    );
    expect(await names(CONVNET, { target: 'cuda', runtime: { torch: '1.11', gpuArch: 'sm_80' } })).not.toContain('matmul-precision-high');
    expect(await names(CONVNET, { target: 'cuda', runtime: { torch: '2.4' } })).not.toContain('matmul-precision-high'); // arch unknown
    expect(await names(CONVNET, { target: 'rocm', runtime: { torch: '2.4', gpuArch: 'gfx90a' } })).not.toContain('matmul-precision-high');
    expect(await names(CONVNET, { target: 'cuda', runtime: { torch: '1.12', computeCapability: '8.0' } })).toContain(
      'matmul-precision-high',
    );
  });

  it('gates bf16 on hardware that has it and fp16 on GPUs', async () => {
    const turing = await names(CONVNET, { target: 'cuda', runtime: { torch: '2.4', gpuArch: 'sm_75' } });
    expect(turing).not.toContain('autocast-bf16');
    expect(turing).toContain('autocast-fp16');
    expect(await names(CONVNET, { target: 'rocm', runtime: { torch: '2.4', gpuArch: 'gfx1030' } })).not.toContain('autocast-bf16');
    expect(await names(CONVNET, { target: 'rocm', runtime: { torch: '2.4', gpuArch: 'gfx90a' } })).toContain('autocast-bf16');
    expect(await names(CONVNET, { target: 'cpu', runtime: { torch: '1.9' } })).not.toContain('autocast-bf16');
    const mps = await names(CONVNET, { target: 'mps', runtime: { torch: '2.4' } });
    expect(mps).not.toContain('autocast-bf16');
    expect(mps).not.toContain('autocast-fp16');
  });

  it("gates torch.compile on PyTorch ≥ 2.0 (≥ 2.6 on MPS, and the worker's Python)", async () => {
    expect(await names(CONVNET, { target: 'cuda', runtime: { torch: '1.13', gpuArch: 'sm_86' } })).not.toContain('torch-compile');
    expect(await names(CONVNET, { target: 'cuda', runtime: { gpuArch: 'sm_86' } })).not.toContain('torch-compile'); // version unknown
    expect(await names(CONVNET, { target: 'mps', runtime: { torch: '2.3' } })).not.toContain('torch-compile');
    expect(await names(CONVNET, { target: 'mps', runtime: { torch: '2.6' } })).toContain('torch-compile');
    expect(await names(CONVNET, { target: 'cuda', runtime: { torch: '2.2', python: '3.12' } })).not.toContain('torch-compile');
    expect(await names(CONVNET, { target: 'cpu', runtime: { torch: '2.0' } })).toContain('torch-compile');
  });

  it('needs convolutions for cudnn.benchmark and Conv2d for channels-last', async () => {
    const mlp = await names(MLP, CUDA_AMPERE);
    expect(mlp).not.toContain('cudnn-benchmark');
    expect(mlp).not.toContain('channels-last');
    expect(mlp).toContain('matmul-precision-high');
    const s = await surveyOptimizations({ 'train.py': MLP }, CUDA_AMPERE, { python });
    expect(s.skipped.find((k) => k.name === 'channels-last')?.reason).toMatch(/no Conv2d/);
  });

  it('proposes nothing for a script without torch training code', async () => {
    expect(await names('print("hello")\n', CUDA_AMPERE)).toEqual([]);
  });
});

describe('each candidate: minimal edit, compiles, idempotent', () => {
  const cases: Array<[OptimizationName, TransformContext, string[]]> = [
    [
      'cudnn-benchmark',
      CUDA_AMPERE,
      ['from torch.utils.data import DataLoader, TensorDataset\n\ntorch.backends.cudnn.benchmark = True\n\n\nclass Net'],
    ],
    ['matmul-precision-high', CUDA_AMPERE, ['TensorDataset\n\ntorch.set_float32_matmul_precision("high")\n']],
    [
      'autocast-bf16',
      CPU_113,
      [
        '            opt.zero_grad()\n            with torch.autocast(device_type="cpu", dtype=torch.bfloat16):\n                out = model(x)\n                loss = F.cross_entropy(out, y)\n            loss.backward()\n',
      ],
    ],
    [
      'autocast-fp16',
      { target: 'cuda', runtime: { torch: '2.1', gpuArch: 'sm_75' } },
      [
        '    scaler = torch.cuda.amp.GradScaler()\n    for epoch in range(epochs):\n',
        '            with torch.autocast(device_type="cuda", dtype=torch.float16):\n                out = model(x)\n',
        '            scaler.scale(loss).backward()\n            scaler.unscale_(opt)\n            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n            scaler.step(opt)\n            scaler.update()\n    return model\n',
      ],
    ],
    ['dataloader-workers', CPU_113, ['loader = DataLoader(data, batch_size=4, shuffle=True, num_workers=2)\n']],
    ['pin-memory', CUDA_AMPERE, ['loader = DataLoader(data, batch_size=4, shuffle=True, pin_memory=True)\n']],
    ['torch-compile', CUDA_AMPERE, ['    model = Net()\n    model.compile()\n    opt =']],
    ['channels-last', CUDA_AMPERE, ['    model = Net()\n    model = model.to(memory_format=torch.channels_last)\n    opt =']],
  ];
  const outputs: Record<string, string> = {};
  for (const [name, ctx, expected] of cases) {
    it(`${name}`, async () => {
      const out = await applied(name, CONVNET, ctx);
      for (const e of expected) expect(out).toContain(e);
      outputs[`${name}.py`] = out;
      // applying it again changes nothing: the optimized code is not proposed the candidate again
      const again = await surveyOptimizations({ 'train.py': out }, ctx, { python });
      expect(again.candidates.map((c) => c.name)).not.toContain(name);
      expect(again.skipped.find((k) => k.name === name)?.reason).toBeTruthy();
      const twice = await optimization(name)({ 'train.py': out }, ctx, { python });
      expect(twice.changed).toBe(false);
      expect(twice.tree['train.py']).toBe(out);
    });
  }

  it('every candidate byte-compiles (py_compile through runStaticChecks)', async () => {
    expect(Object.keys(outputs).length).toBe(cases.length);
    const checks = await runStaticChecks(outputs, { target: 'cuda', python });
    expect(checks.feedback).toEqual([]);
    expect(checks.ok).toBe(true);
  });

  it('persistent_workers follows num_workers (constant or expression), leaves shuffled loaders alone, needs PyTorch ≥ 1.7', async () => {
    const src =
      'import torch\nfrom torch.utils.data import DataLoader\n\na = DataLoader(ds, batch_size=2, num_workers=4)\nb = DataLoader(ds, num_workers=args.workers)\nc = DataLoader(ds, num_workers=0)\nd = DataLoader(ds, shuffle=True, num_workers=4)\n';
    const out = await applied('persistent-workers', src, CPU_113);
    expect(out).toContain('a = DataLoader(ds, batch_size=2, num_workers=4, persistent_workers=True)\n');
    expect(out).toContain('b = DataLoader(ds, num_workers=args.workers, persistent_workers=args.workers > 0)\n');
    expect(out).toContain('c = DataLoader(ds, num_workers=0)\n');
    expect(out).toContain('d = DataLoader(ds, shuffle=True, num_workers=4)\n'); // would reshuffle later epochs differently
    expect(await names(src, { target: 'cpu', runtime: { torch: '1.6' } })).not.toContain('persistent-workers');
    expect((await optimization('persistent-workers')({ 'a.py': out }, CPU_113, { python })).changed).toBe(false);
  });

  it('the edits report the input lines they change', async () => {
    const r = await optimization('autocast-fp16')(
      { 'train.py': CONVNET },
      { target: 'cuda', runtime: { torch: '2.4', gpuArch: 'sm_86' } },
      { python },
    );
    expect(r.edits.map((e) => `${e.line}:${e.before.trim()}`)).toEqual([
      '22:',
      '25:out = model(x)\n            loss = F.cross_entropy(out, y)',
      '27:loss.backward()',
      '28:',
      '29:opt.step()',
      '30:',
    ]);
    expect(r.tree['train.py']).toContain('scaler = torch.amp.GradScaler("cuda")');
    expect(r.numericsMayChange).toBe(true);
  });
});

describe('code that must be left alone', () => {
  it('respects explicit cudnn and TF32 choices and existing mixed precision', async () => {
    const det = CONVNET.replace('import torch.nn as nn\n', 'import torch.nn as nn\ntorch.backends.cudnn.deterministic = True\n');
    expect(await names(det, CUDA_AMPERE)).not.toContain('cudnn-benchmark');
    const tf32 = CONVNET.replace('import torch.nn as nn\n', 'import torch.nn as nn\ntorch.backends.cuda.matmul.allow_tf32 = False\n');
    expect(await names(tf32, CUDA_AMPERE)).not.toContain('matmul-precision-high');
    const amp = CONVNET.replace(
      '            out = model(x)\n            loss = F.cross_entropy(out, y)\n',
      '            with torch.cuda.amp.autocast():\n                out = model(x)\n                loss = F.cross_entropy(out, y)\n',
    );
    const n = await names(amp, CUDA_AMPERE);
    expect(n).not.toContain('autocast-bf16');
    expect(n).not.toContain('autocast-fp16');
  });

  it('leaves DataLoaders with **kwargs, IterableDatasets and already-set options alone', async () => {
    expect(await names(CONVNET.replace('batch_size=4, shuffle=True)', '**kwargs)'), CUDA_AMPERE)).not.toContain('dataloader-workers');
    const stream =
      'import torch\n\n\nclass Stream(torch.utils.data.IterableDataset):\n    def __iter__(self):\n        return iter(range(8))\n';
    expect(
      (await proposeOptimizations({ 'data.py': stream, 'train.py': CONVNET }, CUDA_AMPERE, { python })).map((c) => c.name),
    ).not.toContain('dataloader-workers');
    const set = await names(
      CONVNET.replace('shuffle=True)', 'shuffle=True, num_workers=8, pin_memory=True, persistent_workers=True)'),
      CUDA_AMPERE,
    );
    expect(set).not.toContain('dataloader-workers');
    expect(set).not.toContain('pin-memory');
    expect(set).not.toContain('persistent-workers');
    expect(await names(CONVNET, { ...CPU_113, cpus: 1 })).not.toContain('dataloader-workers');
  });

  it('does not propose channels-last for a convnet that calls .view() on activations', async () => {
    const view = CONVNET.replace('torch.flatten(F.relu(self.conv(x)), 1)', 'F.relu(self.conv(x)).view(x.size(0), -1)');
    expect(await names(view, CUDA_AMPERE)).not.toContain('channels-last');
  });

  it('resolves aliases and adds `import torch` when the file has no name for it', async () => {
    const aliased = CONVNET.replace('import torch\n', 'import torch as T\n').replace(
      /(?<![\w.])torch\.(?!nn as|utils\.data import)/g,
      'T.',
    );
    expect(await applied('cudnn-benchmark', aliased, CUDA_AMPERE)).toContain('\nT.backends.cudnn.benchmark = True\n');
    const fromOnly =
      'from torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.c = nn.Conv2d(1, 1, 3)\n\n\nif __name__ == "__main__":\n    Net()\n';
    expect(await applied('cudnn-benchmark', fromOnly, CUDA_AMPERE)).toBe(
      fromOnly.replace('from torch import nn\n', 'from torch import nn\n\nimport torch\ntorch.backends.cudnn.benchmark = True\n'),
    );
  });

  it('uses the migrated device type for pin_memory in migrated code', async () => {
    const migrated = CONVNET.replace(
      'import torch\n',
      'import torch\n\n# >>> chatgpu device prelude\n_CHATGPU_DEVICE = "cuda"\n_CHATGPU_DEVICE_TYPE = _CHATGPU_DEVICE.split(":")[0]\n# <<< chatgpu device prelude\n',
    );
    expect(await applied('pin-memory', migrated, CUDA_AMPERE)).toContain('shuffle=True, pin_memory=_CHATGPU_DEVICE_TYPE == "cuda")');
    expect(await applied('cudnn-benchmark', migrated, CUDA_AMPERE)).toContain(
      '# <<< chatgpu device prelude\n\ntorch.backends.cudnn.benchmark = True\n',
    );
  });

  it('is deterministic', async () => {
    const a = await surveyOptimizations({ 'train.py': CONVNET, 'b/model.py': MLP }, CUDA_AMPERE, { python });
    const b = await surveyOptimizations({ 'b/model.py': MLP, 'train.py': CONVNET }, CUDA_AMPERE, { python });
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  });
});
