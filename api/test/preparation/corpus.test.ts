/**
 * The bar, on the corpus under ./corpus (projects in the style of real ones):
 * - every PyTorch script migrates, runs on this CPU worker (Debian's PyTorch 1.13, CHATGPU_DEVICE=cpu)
 *   and its outputs match a hand-ported CPU reference within tolerance (compare helper);
 * - every CUDA program migrates and compiles with hipcc for gfx1030; the originals that need only the
 *   CUDA runtime compile with nvcc (this machine's CUDA 13 has no cuBLAS/cuRAND/cuFFT headers);
 * - every planted wave64 hazard (`// planted: wave64`) is reported at its line, and no other;
 * - migration is deterministic and idempotent; code without CUDA-isms comes back unchanged.
 */
import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareOutputs } from '../../src/preparation/compareOutputs.js';
import { migrateTree } from '../../src/preparation/migrateTree.js';
import { runProcess } from '../../src/preparation/pythonAst.js';
import { runStaticChecks } from '../../src/preparation/runStaticChecks.js';
import { tokenizeCpp } from '../../src/preparation/tokenizeCpp.js';
import type { CodeTree, TransformContext } from '../../src/preparation/types.js';
import { PARSER_PYTHON, requireTool, torchPython } from './toolchain.js';

const here = dirname(fileURLToPath(import.meta.url));
const CORPUS = join(here, 'corpus');
const STUBS = join(here, 'hip-stubs');
const CPU: TransformContext = { target: 'cpu', runtime: { torch: '1.13' } };
const ROCM: TransformContext = { target: 'rocm', hipArch: 'gfx1030' };

async function readTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== '__pycache__') await walk(full);
      } else out[full.slice(root.length + 1)] = await readFile(full, 'utf8');
    }
  };
  await walk(root);
  return out;
}

async function writeTree(root: string, tree: CodeTree): Promise<void> {
  for (const [p, c] of Object.entries(tree)) {
    await mkdir(dirname(join(root, p)), { recursive: true });
    await writeFile(join(root, p), c);
  }
}

let python = '';
let work = '';
beforeAll(async () => {
  python = (await torchPython()).path;
  work = await mkdtemp(join(tmpdir(), 'chatgpu-corpus-'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const TORCH_PROJECTS: Array<{ name: string; entry: string; args: (out: string) => string[] }> = [
  { name: 'mnist_cnn', entry: 'main.py', args: (out) => ['--out', out] },
  { name: 'regression_amp', entry: 'train.py', args: (out) => [out] },
  { name: 'char_rnn', entry: 'train.py', args: (out) => ['--cuda', '--out', out] },
];

describe('PyTorch corpus → device-agnostic, run on CPU, compared with a CPU reference', () => {
  for (const project of TORCH_PROJECTS) {
    it(`${project.name}: migrates, runs with CHATGPU_DEVICE=cpu and matches the reference`, async () => {
      const tree = await readTree(join(CORPUS, 'pytorch', project.name));
      const result = await migrateTree(tree, CPU, { python });
      expect(result.changed).toBe(true);
      expect(result.unconverted).toEqual([]);
      const migrated = join(work, 'migrated', project.name);
      await writeTree(migrated, result.tree);
      const checks = await runStaticChecks(result.tree, { target: 'cpu', python });
      expect(checks.feedback).toEqual([]);
      expect(checks.ok).toBe(true);

      const candOut = join(work, 'out', `${project.name}-candidate`);
      const refOut = join(work, 'out', `${project.name}-reference`);
      const env = { ...process.env, CHATGPU_DEVICE: 'cpu', PYTHONDONTWRITEBYTECODE: '1', OMP_NUM_THREADS: '1' };
      const [cand, ref] = await Promise.all([
        runProcess(python, [project.entry, ...project.args(candOut)], null, 120_000, env, migrated),
        runProcess(python, [project.entry, ...project.args(refOut)], null, 120_000, env, join(CORPUS, 'pytorch-cpu-reference', project.name)),
      ]);
      expect(cand.code, cand.stderr).toBe(0);
      expect(ref.code, ref.stderr).toBe(0);
      const report = await compareOutputs({ reference: refOut, candidate: candOut, python });
      expect(report.files.filter((f) => !f.ok)).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.summary.files).toBeGreaterThan(0);
    });
  }

  it('leaves a script without CUDA-isms byte-identical ("no change")', async () => {
    const tree = await readTree(join(CORPUS, 'pytorch', 'cpu_only'));
    for (const target of ['cpu', 'mps', 'cuda', 'rocm'] as const) {
      const result = await migrateTree(tree, { target, runtime: { torch: '1.13' } }, { python });
      expect(result.changed).toBe(false);
      expect(result.tree).toEqual(tree);
      expect(result.edits).toEqual([]);
    }
  });

  it('is idempotent and deterministic on every PyTorch project', async () => {
    for (const project of TORCH_PROJECTS) {
      const tree = await readTree(join(CORPUS, 'pytorch', project.name));
      const once = await migrateTree(tree, CPU, { python });
      const again = await migrateTree(tree, CPU, { python });
      expect(JSON.stringify(again)).toBe(JSON.stringify(once));
      const twice = await migrateTree(once.tree, CPU, { python });
      expect(twice.changed).toBe(false);
      expect(twice.tree).toEqual(once.tree);
      expect(twice.edits).toEqual([]);
    }
  });
});

describe('CUDA corpus → HIP', () => {
  it('reports every planted wave64 hazard at its line, and no other', async () => {
    const tree = await readTree(join(CORPUS, 'cuda'));
    const result = await migrateTree(tree, ROCM, { python: PARSER_PYTHON });
    const planted = new Set<string>();
    for (const [file, content] of Object.entries(tree)) {
      content.split('\n').forEach((line, i) => {
        if (line.includes('planted: wave64')) planted.add(`${file}:${i + 1}`);
      });
    }
    const reported = new Set(result.hazards.filter((h) => h.rule === 'wave64').map((h) => `${h.file}:${h.line}`));
    expect(planted.size).toBeGreaterThanOrEqual(20);
    expect([...reported].sort()).toEqual([...planted].sort());
  });

  it('translates every program so that hipcc compiles it for gfx1030 (one batched compile)', async () => {
    requireTool('hipcc', 'apt-get install -y hipcc libhiprand-dev librocrand-dev');
    const tree = await readTree(join(CORPUS, 'cuda'));
    const result = await migrateTree(tree, ROCM, { python: PARSER_PYTHON });
    // nothing CUDA-specific left in code other than build settings with no HIP counterpart
    expect(result.unconverted.filter((u) => !/Makefile|CMakeLists/.test(u.file))).toEqual([]);
    for (const [p, c] of Object.entries(result.tree)) {
      if (!/\.(cu|cuh)$/.test(p)) continue;
      // identifiers only: comments and string literals keep their words (e.g. "cufftPlan1d failed")
      const defined = new Set([...c.matchAll(/#define\s+(\w+)/g)].map((m) => m[1])); // the program's own macros
      const idents = tokenizeCpp(c).filter((t) => t.kind === 'ident' && !defined.has(t.text)).map((t) => t.text);
      expect(idents.filter((t) => /^(cuda[A-Z]|cublas|CUBLAS_|curand|CURAND_|cufft|CUFFT_|__shfl_\w+_sync$|__syncwarp$)/.test(t)), p).toEqual([]);
    }
    const checks = await runStaticChecks(result.tree, { target: 'rocm', hipArch: 'gfx1030', includeDirs: [STUBS] });
    expect(checks.unavailable).toEqual([]);
    expect(checks.feedback.filter((f) => f.severity === 'error')).toEqual([]);
    expect(checks.ok).toBe(true);
    expect(checks.runs.length).toBe(1);
  }, 180_000);

  it('the originals that need only the CUDA runtime compile with nvcc', async () => {
    requireTool('nvcc', 'install the CUDA toolkit (nvcc)');
    const tree = await readTree(join(CORPUS, 'cuda'));
    const runtimeOnly = Object.fromEntries(Object.entries(tree).filter(([p]) => p.startsWith('vector_add/') || p.startsWith('reduction/')));
    const checks = await runStaticChecks(runtimeOnly, { target: 'cuda' });
    expect(checks.feedback.filter((f) => f.severity === 'error')).toEqual([]);
    expect(checks.ok).toBe(true);
  }, 180_000);

  it('is idempotent: migrating migrated code changes nothing', async () => {
    const tree = await readTree(join(CORPUS, 'cuda'));
    const once = await migrateTree(tree, ROCM, { python: PARSER_PYTHON });
    const twice = await migrateTree(once.tree, ROCM, { python: PARSER_PYTHON });
    expect(twice.changed).toBe(false);
    expect(twice.edits).toEqual([]);
  });
});
