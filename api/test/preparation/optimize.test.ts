/**
 * Optimization candidates on the corpus script (corpus/pytorch-optimize): the candidates valid on a
 * CPU worker with Debian's PyTorch 1.13 — loader workers (+ persistent workers) and bf16 autocast —
 * RUN, and the comparison helper finds their outputs within each candidate's declared tolerance
 * against the unoptimized script. The GPU-only candidates (cudnn.benchmark, TF32, channels-last,
 * pin_memory, fp16 + GradScaler) are applied for a CUDA target, byte-compile, and the result still
 * runs on this CPU machine (where they are no-ops or disable themselves) with the same outputs.
 * And `chatgpu migrate --optimize/--apply` lists and writes them.
 */
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareOutputs } from '../../src/preparation/compareOutputs.js';
import { applyOptimizations, proposeOptimizations } from '../../src/preparation/optimize.js';
import { runProcess } from '../../src/preparation/pythonAst.js';
import { runStaticChecks } from '../../src/preparation/runStaticChecks.js';
import type { CodeTree, TransformContext } from '../../src/preparation/types.js';
import { torchPython } from './toolchain.js';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = join(here, '..', '..', '..');
const PROJECT = join(here, 'corpus', 'pytorch-optimize', 'conv_classifier');
const CPU: TransformContext = { target: 'cpu', runtime: { torch: '1.13' } };
const CUDA: TransformContext = { target: 'cuda', runtime: { torch: '2.1', gpuArch: 'sm_86' } };

let python = '';
let work = '';
let tree: CodeTree = {};
beforeAll(async () => {
  python = (await torchPython()).path;
  work = await mkdtemp(join(tmpdir(), 'chatgpu-optimize-'));
  tree = { 'train.py': await readFile(join(PROJECT, 'train.py'), 'utf8') };
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

async function run(name: string, t: CodeTree): Promise<string> {
  const dir = join(work, name);
  for (const [p, c] of Object.entries(t)) {
    await mkdir(dirname(join(dir, p)), { recursive: true });
    await writeFile(join(dir, p), c);
  }
  const out = join(work, `${name}-out`);
  const env = { ...process.env, CHATGPU_DEVICE: 'cpu', PYTHONDONTWRITEBYTECODE: '1', OMP_NUM_THREADS: '1' };
  const r = await runProcess(python, ['train.py', '--out', out], null, 120_000, env, dir);
  expect(r.code, `${name}: ${r.stderr}`).toBe(0);
  return out;
}

const CUDA_STACK = ['cudnn-benchmark', 'matmul-precision-high', 'autocast-fp16', 'pin-memory', 'channels-last'];

describe('optimization candidates on the corpus, run on this CPU worker (PyTorch 1.13)', () => {
  it('proposes exactly the CPU-valid candidates, and every GPU candidate for an Ampere CUDA worker', async () => {
    const cpu = await proposeOptimizations(tree, CPU, { python });
    expect(cpu.map((c) => `${c.name}:${c.risk}`)).toEqual(['autocast-bf16:high', 'dataloader-workers:none']);
    expect(cpu[0]!.numericsMayChange).toBe(true);
    expect(cpu[0]!.criteria?.tolerances?.float32).toBeDefined();
    const cuda = (await proposeOptimizations(tree, CUDA, { python })).map((c) => c.name);
    expect(cuda).toEqual([
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

  it("the candidates run; outputs match the unoptimized script within each one's declared tolerance", async () => {
    const [bf16] = await proposeOptimizations(tree, CPU, { python });
    // loader workers, then persistent workers on top (proposed once num_workers > 0, for the unshuffled loader only:
    // a persistent shuffled loader draws its seeds differently and visits other permutations in later epochs)
    const loaders = await applyOptimizations(tree, ['dataloader-workers', 'persistent-workers'], CPU, { python });
    expect(loaders.applied.map((c) => c.name)).toEqual(['dataloader-workers', 'persistent-workers']);
    expect(loaders.tree['train.py']).toContain('generator=torch.Generator().manual_seed(1), num_workers=2)\n');
    expect(loaders.tree['train.py']).toContain(
      'test_loader = DataLoader(synthetic(32, 1), batch_size=32, num_workers=2, persistent_workers=True)\n',
    );
    // the GPU candidates that exist in PyTorch 1.13 (torch.compile does not), stacked into one tree
    const stack = await applyOptimizations(tree, CUDA_STACK, CUDA, { python });
    expect(stack.skipped).toEqual([]);
    const src = stack.tree['train.py']!;
    expect(src).toContain(
      'from torch.utils.data import DataLoader, TensorDataset\n\ntorch.set_float32_matmul_precision("high")\n\ntorch.backends.cudnn.benchmark = True\n\n\nclass ConvNet',
    );
    expect(src).toContain('    scaler = torch.cuda.amp.GradScaler()\n    for epoch in range(args.epochs):\n');
    expect(src).toContain('    model = model.to(memory_format=torch.channels_last)\n');
    // applying the stack again changes nothing
    const again = await applyOptimizations(stack.tree, CUDA_STACK, CUDA, { python });
    expect(again.applied).toEqual([]);
    expect(again.tree).toEqual(stack.tree);

    const checks = await runStaticChecks(
      { 'workers/train.py': loaders.tree['train.py']!, 'bf16/train.py': bf16!.result.tree['train.py']!, 'cuda/train.py': src },
      { target: 'cpu', python },
    );
    expect(checks.feedback).toEqual([]);

    const [ref, workers, half, gpu] = await Promise.all([
      run('reference', tree),
      run('workers', loaders.tree),
      run('bf16', bf16!.result.tree),
      run('cuda-stack', stack.tree),
    ]);
    const LOW = { tolerances: { float32: { rtol: 1e-4, atol: 1e-5 } }, metrics: { default: { rtol: 1e-4, atol: 1e-5 } } };
    const [w, h, g] = await Promise.all([
      // no numerical risk declared: the comparison defaults (assert_close's float32 tolerances)
      compareOutputs({ reference: ref, candidate: workers, python }),
      // bf16: the candidate's own, looser tolerance
      compareOutputs({ reference: ref, candidate: half, python, criteria: bf16!.criteria ?? undefined }),
      // without a GPU, autocast("cuda") and the GradScaler disable themselves and the flags are no-ops; channels-last
      // convolutions run other CPU kernels: within the low-risk tolerance those candidates declare
      compareOutputs({ reference: ref, candidate: gpu, python, criteria: LOW }),
    ]);
    expect(w.files.filter((f) => !f.ok)).toEqual([]);
    expect(w.ok).toBe(true);
    expect(h.files.filter((f) => !f.ok)).toEqual([]);
    expect(h.ok).toBe(true);
    // … and the loose tolerance is needed: bf16 outputs differ beyond float32's
    const errors = h.files.flatMap((f) => f.tensors ?? []).map((t) => (typeof t.max_abs_error === 'number' ? t.max_abs_error : 0));
    expect(Math.max(...errors)).toBeGreaterThan(1e-4);
    expect(g.files.filter((f) => !f.ok)).toEqual([]);
  }, 180_000);
});

describe('chatgpu migrate --optimize', () => {
  it('lists the candidates with their risk (JSON) and writes the ones named by --apply', async () => {
    const out = join(work, 'cmd');
    const BIN = join(ROOT, 'api', 'bin', 'chatgpu.mjs');
    const r = await runProcess(
      process.execPath,
      [
        BIN,
        'migrate',
        PROJECT,
        '--to',
        'cuda',
        '--torch',
        '2.4',
        '--gpu-arch',
        'sm_75',
        '--optimize',
        '--apply',
        'cudnn-benchmark,pin-memory',
        '--out',
        out,
        '--json',
        '--python',
        python,
      ],
      null,
      60_000,
      process.env,
      ROOT,
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    const listed = report.optimizations.candidates.map((c: { name: string; risk: string }) => `${c.name}:${c.risk}`);
    expect(listed).toEqual([
      'cudnn-benchmark:low',
      'autocast-fp16:high',
      'dataloader-workers:none',
      'pin-memory:none',
      'torch-compile:low',
      'channels-last:low',
    ]);
    const notProposed = Object.fromEntries(
      report.optimizations.notProposed.map((s: { name: string; reason: string }) => [s.name, s.reason]),
    );
    expect(notProposed['matmul-precision-high']).toMatch(/sm_75/);
    expect(notProposed['autocast-bf16']).toMatch(/sm_75/);
    expect(report.optimizations.applied.map((c: { name: string }) => c.name)).toEqual(['cudnn-benchmark', 'pin-memory']);
    const written = await readFile(join(out, 'train.py'), 'utf8');
    expect(written).toContain('torch.backends.cudnn.benchmark = True');
    expect(written).toContain('pin_memory=_CHATGPU_DEVICE_TYPE == "cuda"'); // migrated first, so the pin follows the worker's device

    const text = await runProcess(
      process.execPath,
      [BIN, 'migrate', PROJECT, '--to', 'cpu', '--torch', '1.13', '--optimize', '--out', join(work, 'cmd-cpu'), '--python', python],
      null,
      60_000,
      process.env,
      ROOT,
    );
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Optimization candidates \(2\):\n {2}autocast-bf16 +risk high/);
    expect(text.stdout).toMatch(/Not proposed:\n {2}cudnn-benchmark/);
    const bad = await runProcess(
      process.execPath,
      [BIN, 'migrate', PROJECT, '--to', 'cpu', '--apply', 'warp-drive'],
      null,
      60_000,
      process.env,
      ROOT,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown optimization(s): warp-drive');
  }, 120_000);
});
