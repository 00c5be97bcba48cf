/**
 * The generic evaluation step (`python -m chatgpu.reload_check`) against real checkpoints
 * written by Debian's PyTorch: it must rebuild a project's model from a state_dict, run a
 * forward pass, and fail a checkpoint that is broken — never pass it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const HELPERS = path.dirname(fileURLToPath(import.meta.url));
const PYTHON = '/usr/bin/python3'; // Debian's, with python3-torch (npm test installs it)
let project: string;

function py(args: string[]) {
  const r = spawnSync(PYTHON, args, { cwd: project, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', PYTHONPATH: HELPERS } });
  const metricLine = r.stdout.split('\n').find((l) => l.startsWith('CHATGPU_METRIC '));
  return {
    code: r.status,
    out: r.stdout,
    err: r.stderr,
    metrics: metricLine ? (JSON.parse(metricLine.slice(15)).values as Record<string, number>) : null,
  };
}

beforeAll(() => {
  project = mkdtempSync(path.join(tmpdir(), 'reload-check-'));
  writeFileSync(
    path.join(project, 'model.py'),
    [
      '"""The model."""',
      'import torch',
      'from torch import nn',
      'HIDDEN = 16',
      '',
      'class Net(nn.Module):',
      '    def __init__(self, hidden=HIDDEN):',
      '        super().__init__()',
      '        self.fc1 = nn.Linear(4, hidden)',
      '        self.fc2 = nn.Linear(hidden, 3)',
      '    def forward(self, x):',
      '        return self.fc2(torch.relu(self.fc1(x)))',
      '',
      'class Exploding(Net):',
      '    def forward(self, x):',
      '        return super().forward(x) / 0.0',
      '',
    ].join('\n'),
  );
  // A top-level script: importing it would train (and here, write a marker). Never imported.
  writeFileSync(
    path.join(project, 'train.py'),
    'import torch\nfrom model import Net\nopen("IMPORTED", "w").write("x")\nclass Other(torch.nn.Module):\n    pass\n',
  );
  const made = spawnSync(
    PYTHON,
    [
      '-c',
      [
        'import torch',
        'from model import Net',
        'torch.manual_seed(0)',
        'm = Net()',
        'torch.save(m.state_dict(), "sd.pt")',
        'torch.save({"model_state_dict": m.state_dict(), "epoch": 3}, "wrapped.pt")',
        'sd = m.state_dict(); sd["fc1.weight"][0, 0] = float("nan"); torch.save(sd, "nan.pt")',
        'torch.save(torch.nn.Sequential(torch.nn.Linear(5, 2)).state_dict(), "foreign.pt")',
        'torch.save({"epochs": 2}, "empty.pt")',
        'open("garbage.pt", "wb").write(b"not a checkpoint")',
      ].join('\n'),
    ],
    { cwd: project, encoding: 'utf8' },
  );
  expect(made.status, made.stderr).toBe(0);
}, 60_000);

describe('chatgpu.reload_check', () => {
  it('rebuilds the project’s model from a state_dict and runs a forward pass on an inferred input', () => {
    const r = py(['-m', 'chatgpu.reload_check', 'sd.pt']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/rebuilt as model\.py:Net with load_state_dict\(strict=True\)/);
    expect(r.out).toMatch(/forward pass on an input of shape \(2, 4\) \(inferred\): outputs finite/);
    expect(r.metrics).toMatchObject({ reload_ok: 1, tensors: 4, parameters: 4 * 16 + 16 + 16 * 3 + 3, rebuilt: 1, forward_ok: 1 });
  });

  it('finds the state_dict under a usual key, never imports a script with top-level code', () => {
    const r = py(['-m', 'chatgpu.reload_check', 'wrapped.pt']);
    expect(r.code, r.err).toBe(0);
    expect(r.metrics).toMatchObject({ rebuilt: 1, forward_ok: 1 });
    expect(spawnSync('test', ['-e', path.join(project, 'IMPORTED')]).status).not.toBe(0);
  });

  it('fails a checkpoint with non-finite values, one with no tensors, and one that cannot be loaded', () => {
    const nan = py(['-m', 'chatgpu.reload_check', 'nan.pt']);
    expect(nan.code).toBe(1);
    expect(nan.err).toMatch(/non-finite values in: fc1\.weight/);
    expect(nan.metrics).toMatchObject({ reload_ok: 0 });
    const empty = py(['-m', 'chatgpu.reload_check', 'empty.pt']);
    expect(empty.code).toBe(1);
    expect(empty.err).toMatch(/holds no tensors/);
    const garbage = py(['-m', 'chatgpu.reload_check', 'garbage.pt']);
    expect(garbage.code).toBe(1);
    expect(garbage.err).toMatch(/cannot load garbage\.pt/);
  });

  it('says a foreign state_dict was not rebuilt (not a failure), and fails a given input shape that does not fit', () => {
    const foreign = py(['-m', 'chatgpu.reload_check', 'foreign.pt']);
    expect(foreign.code, foreign.err).toBe(0);
    expect(foreign.out).toMatch(/not rebuilt: no model class of the project takes this state_dict \(tried model\.py:Net \(RuntimeError\)/);
    expect(foreign.metrics).toMatchObject({ reload_ok: 1, rebuilt: 0 });
    expect(foreign.metrics).not.toHaveProperty('forward_ok');
    const wrong = py(['-m', 'chatgpu.reload_check', 'sd.pt', '--input-shape', '2,7']);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/the forward pass on an input of shape \(2, 7\) failed/);
    expect(wrong.metrics).toMatchObject({ forward_ok: 0 });
    const bad = py(['-m', 'chatgpu.reload_check', 'sd.pt', '--input-shape', 'two']);
    expect(bad.code).toBe(2);
  });

  it('fails a model whose forward pass gives non-finite outputs', () => {
    const r = spawnSync(PYTHON, ['-c', 'import torch\nfrom model import Exploding\ntorch.save(Exploding(), "whole.pt")'], {
      cwd: project,
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const whole = py(['-m', 'chatgpu.reload_check', 'whole.pt']);
    expect(whole.code).toBe(1);
    expect(whole.out).toMatch(/the checkpoint holds the whole model/);
    expect(whole.err).toMatch(/non-finite values in the forward pass/);
    expect(whole.metrics).toMatchObject({ rebuilt: 1, forward_ok: 0 });
  });
});
