import { describe, expect, it } from 'vitest';
import { migrateTree } from './migrateTree.js';
import { PRELUDE_BEGIN } from './migratePytorch.js';
import type { TransformContext } from './types.js';
import { PARSER_PYTHON } from '../../test/preparation/toolchain.js';

const CPU: TransformContext = { target: 'cpu', runtime: { torch: '1.13' } };
const one = async (src: string, ctx: TransformContext = CPU) => {
  const r = await migrateTree({ 'a.py': src }, ctx, { python: PARSER_PYTHON });
  return { ...r, out: r.tree['a.py']! };
};
const body = (out: string): string => out.slice(out.indexOf('# <<< chatgpu device prelude') + 29);

describe('migratePytorch', () => {
  it('resolves aliases and leaves comments and strings alone', async () => {
    const r = await one(
      'import torch as T\nfrom torch import cuda\nfrom torch.cuda.amp import autocast as ac\n' +
        '# x.cuda() in a comment\ns = "x.cuda() and \'cuda\' in a string"\n' +
        'if cuda.is_available():\n    y = T.zeros(1).cuda()\nwith ac(True):\n    pass\n',
    );
    const b = body(r.out);
    expect(b).toContain('# x.cuda() in a comment\ns = "x.cuda() and \'cuda\' in a string"\n');
    expect(b).toContain('if _chatgpu_has_accelerator():\n    y = T.zeros(1).to(_CHATGPU_DEVICE)\n');
    expect(b).toContain('with _chatgpu_autocast(enabled=True):');
    expect(r.unconverted).toEqual([]);
  });

  it('rewrites multi-line calls and keeps their formatting', async () => {
    const r = await one(
      "import torch\nx = torch.randn(\n    2,\n    3,  # rows\n    device='cuda:0',\n)\nm = torch.nn.Linear(3, 3).cuda(\n    non_blocking=True)\n",
    );
    expect(body(r.out)).toContain(
      'x = torch.randn(\n    2,\n    3,  # rows\n    device=_CHATGPU_DEVICE,\n)\nm = torch.nn.Linear(3, 3).to(_CHATGPU_DEVICE, non_blocking=True)\n',
    );
    expect(r.hazards.map((h) => `${h.line}:${h.rule}`)).toEqual(['5:device-index']);
    expect(r.edits.map((e) => e.line)).toEqual([2, 5, 7]); // the prelude goes in at line 2, after the import
  });

  it('puts the prelude after docstring and imports, once; a second run changes nothing', async () => {
    const src =
      '#!/usr/bin/env python\n"""Doc."""\nfrom __future__ import annotations\nimport torch\n\n\ndef f():\n    torch.cuda.synchronize()\n';
    const r = await one(src);
    expect(
      r.out.startsWith('#!/usr/bin/env python\n"""Doc."""\nfrom __future__ import annotations\nimport torch\n\n' + PRELUDE_BEGIN),
    ).toBe(true);
    expect(r.out.endsWith('\n\n\ndef f():\n    _chatgpu_synchronize()\n')).toBe(true);
    const again = await one(r.out);
    expect(again.changed).toBe(false);
    expect(again.out).toBe(r.out);
  });

  it('the migrated code compiles and the prelude picks CHATGPU_DEVICE', async () => {
    const r = await one("import torch\nprint(torch.device('cuda'), torch.cuda.is_available(), torch.cuda.memory_allocated())\n");
    const { runProcess } = await import('./pythonAst.js');
    const { torchPython } = await import('../../test/preparation/toolchain.js');
    const py = (await torchPython()).path;
    const run = await runProcess(py, ['-c', r.out], null, 60_000, { ...process.env, CHATGPU_DEVICE: 'cpu' });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('cpu False 0');
  });

  it('reports MPS hazards for an MPS target', async () => {
    const r = await one(
      'import numpy as np\nimport torch\nx = torch.from_numpy(np.zeros(3)).cuda()\ny = x.double()\nz = torch.zeros(2, dtype=torch.float64)\nf = torch.fft.rfft(x)\n',
      { target: 'mps', runtime: { torch: '2.1' } },
    );
    expect(r.hazards.map((h) => `${h.line}:${h.rule}`)).toEqual([
      '3:mps-float64',
      '4:mps-float64',
      '5:mps-float64',
      '6:mps-missing-kernel',
    ]);
  });

  it("reports APIs newer than the worker's PyTorch and rewrites torch.compile compatibly", async () => {
    const r = await one(
      'import torch\nm = torch.compile(torch.nn.Linear(2, 2))\nwith torch.serialization.safe_globals([dict]):\n    pass\nok = torch.accelerator.is_available()\n',
    );
    expect(body(r.out)).toContain('m = _chatgpu_compile(torch.nn.Linear(2, 2))');
    expect(body(r.out)).toContain('ok = _chatgpu_has_accelerator()');
    expect(r.hazards.map((h) => `${h.line}:${h.severity}:${h.what}`)).toEqual([
      '2:info:torch.compile needs PyTorch ≥ 2.0',
      '3:error:torch.serialization.safe_globals needs PyTorch ≥ 2.5',
      '5:info:torch.accelerator.is_available needs PyTorch ≥ 2.6',
    ]);
    const newer = await one('import torch\nm = torch.compile(torch.nn.Linear(2, 2))\n', { target: 'cpu', runtime: { torch: '2.4' } });
    expect(newer.changed).toBe(false);
  });

  it("PyTorch 1.13: scaled_dot_product_attention and a device-less torch.amp.GradScaler are rewritten, and the attention written out agrees with 1.13's own kernel", async () => {
    const src = [
      'import torch',
      'import torch.nn.functional as F',
      'q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 8)',
      'mask = torch.rand(5, 7) > 0.3',
      'mask[:, 0] = True',
      'ref = F._scaled_dot_product_attention',
      'cases = [',
      '    (F.scaled_dot_product_attention(q, k, v), ref(q, k, v, None, 0.0, False, False)[0]),',
      '    (F.scaled_dot_product_attention(q, k[..., :5, :], v[..., :5, :], is_causal=True), ref(q, k[..., :5, :], v[..., :5, :], None, 0.0, False, True)[0]),',
      '    (F.scaled_dot_product_attention(q, k, v, attn_mask=mask), ref(q, k, v, mask, 0.0, False, False)[0]),',
      '    (F.scaled_dot_product_attention(q, k, v, scale=0.5), ref(q * 0.5 * 8 ** 0.5, k, v, None, 0.0, False, False)[0]),',
      ']',
      'print(all(torch.allclose(a, b, atol=1e-6) for a, b in cases), type(torch.amp.GradScaler()).__name__)',
      '',
    ].join('\n');
    const r = await one(src);
    expect(r.edits.filter((e) => e.rule !== 'device-prelude').map((e) => `${e.line}:${e.rule}`)).toEqual([
      '8:torch-sdpa-compat',
      '9:torch-sdpa-compat',
      '10:torch-sdpa-compat',
      '11:torch-sdpa-compat',
      '13:amp-grad-scaler',
    ]);
    expect(r.hazards.filter((h) => h.severity === 'error')).toEqual([]);
    expect(r.numericsMayChange).toBe(true);
    const { runProcess } = await import('./pythonAst.js');
    const { torchPython } = await import('../../test/preparation/toolchain.js');
    const py = await torchPython();
    expect(py.modules.torch).toMatch(/^1\.13/); // Debian's: no fused kernel, so the written-out path runs
    const run = await runProcess(py.path, ['-c', r.out], null, 60_000, { ...process.env, CHATGPU_DEVICE: 'cpu' });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('True GradScaler');
    // The unchanged code does not run there.
    const before = await runProcess(py.path, ['-c', src], null, 60_000, process.env);
    expect(before.stderr).toMatch(/AttributeError: module 'torch.nn.functional' has no attribute 'scaled_dot_product_attention'/);
  }, 180_000);

  it('reports CUDA-only APIs it cannot rewrite', async () => {
    const r = await one('import torch\nstart = torch.cuda.Event(enable_timing=True)\nx = torch.zeros(1).cuda()\n');
    expect(r.unconverted.map((u) => `${u.line}:${u.identifier}`)).toEqual(['2:torch.cuda.Event']);
  });

  it('reports a syntax error instead of migrating', async () => {
    const r = await one('def f(:\n  pass\n');
    expect(r.changed).toBe(false);
    expect(r.hazards[0]).toMatchObject({ rule: 'python-syntax', line: 1, severity: 'error' });
  });
});
