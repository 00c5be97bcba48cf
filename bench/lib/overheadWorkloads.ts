/**
 * The workloads of bench/overhead.ts: each a small project folder (written fresh for the run),
 * the request a user would type for it, and the same program's direct command. Every program
 * takes `--seed` so that no two jobs of a run upload the same bytes (blobs are content-addressed:
 * a repeated output would be a cheap re-upload and flatter the job).
 */
import { cp, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from './api.js';

export interface Workload {
  name: string;
  /** What it is, in a few words (the table's first column). */
  label: string;
  /** Writes the project into `dir`. */
  write(dir: string): Promise<void>;
  /** The request for `chatgpu submit -m`. */
  request(seed: number): string;
  /** The direct run(s), one after another, in the project folder (argv; `python` is replaced by the interpreter). */
  direct(seed: number): string[][];
}

export interface WorkloadSizes {
  /** torch-classifier epochs (≈ 20–30 s directly on 2 EPYC cores at 1,000) */
  epochs: number;
  /** iterations of the NumPy loop */
  numpyIters: number;
  /** seconds of 10,000 lines a second */
  lineSeconds: number;
  /** MiB of output */
  outputMiB: number;
  /** iterations of each of the sweep's 10 runs */
  sweepIters: number;
  /** MiB of the checkpoint the evaluation reloads (the `checkpoint` workload) */
  checkpointMiB: number;
}

const NUMPY_PY = `"""A NumPy-bound loop: repeated 400x400 matrix products (BLAS), one number out."""
import argparse, json, os
import numpy as np

p = argparse.ArgumentParser()
p.add_argument("--iters", type=int, default=200, help="iterations of the loop")
p.add_argument("--seed", type=int, default=0)
a = p.parse_args()
rng = np.random.default_rng(a.seed)
m = rng.standard_normal((400, 400))
acc = 0.0
for i in range(a.iters):
    m = np.tanh(m @ m.T / 400.0)
    acc += float(m.sum())
print(f"checksum={acc:.6f}")
os.makedirs("outputs", exist_ok=True)
with open("outputs/result.json", "w") as f:
    json.dump({"checksum": acc, "iters": a.iters, "seed": a.seed}, f)
`;

const LINES_PY = `"""Prints 10,000 lines a second (1,000 every 0.1 s) for --seconds seconds."""
import argparse, sys, time

p = argparse.ArgumentParser()
p.add_argument("--seconds", type=int, default=20, help="how long it prints")
p.add_argument("--seed", type=int, default=0)
a = p.parse_args()
out = sys.stdout
t0 = time.monotonic()
n = 0
for tick in range(a.seconds * 10):
    for _ in range(1000):
        out.write(f"line {n} seed {a.seed} the quick brown fox jumps over the lazy dog\\n")
        n += 1
    out.flush()
    wait = t0 + (tick + 1) * 0.1 - time.monotonic()
    if wait > 0:
        time.sleep(wait)
print(f"printed {n} lines in {time.monotonic() - t0:.2f}s")
`;

const OUTPUT_PY = `"""Writes --mib MiB into outputs/data.bin (8 MiB chunks; the bytes depend on --seed)."""
import argparse, os
import numpy as np

p = argparse.ArgumentParser()
p.add_argument("--mib", type=int, default=1024, help="size of the output in MiB")
p.add_argument("--seed", type=int, default=0)
a = p.parse_args()
chunk = bytearray(np.random.default_rng(a.seed).bytes(8 << 20))
os.makedirs("outputs", exist_ok=True)
with open("outputs/data.bin", "wb") as f:
    for i in range(a.mib // 8):
        chunk[0:8] = i.to_bytes(8, "little")
        f.write(chunk)
print(f"wrote {a.mib} MiB")
`;

const CHECKPOINT_PY = `"""Keeps a --mib MiB checkpoint (float32 weights from --seed) that the job's evaluation reloads."""
import argparse, os
import torch

p = argparse.ArgumentParser()
p.add_argument("--mib", type=int, default=256, help="size of the checkpoint in MiB")
p.add_argument("--seed", type=int, default=0)
a = p.parse_args()
w = torch.rand(a.mib * 262144, generator=torch.Generator().manual_seed(a.seed))
os.makedirs("outputs", exist_ok=True)
torch.save({"w": w}, "outputs/model.pt")
print(f"kept {a.mib} MiB")
`;

export function workloads(s: WorkloadSizes): Workload[] {
  const py = (name: string, text: string) => async (dir: string) => {
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, name), text);
  };
  return [
    {
      name: 'torch',
      label: `CPU PyTorch training (torch-classifier, ${s.epochs} epochs)`,
      write: (dir) => cp(path.join(repoRoot, 'examples/torch-classifier'), dir, { recursive: true }),
      request: (seed) => `train it for ${s.epochs} epochs with seed ${seed} and give me the model`,
      direct: (seed) => [['python', 'train.py', '--epochs', String(s.epochs), '--seed', String(seed), '--save', 'model.pt']],
    },
    {
      name: 'numpy',
      label: `NumPy-bound loop (${s.numpyIters} iterations of 400×400 products)`,
      write: py('main.py', NUMPY_PY),
      request: (seed) => `run main.py for ${s.numpyIters} iterations with seed ${seed}`,
      direct: (seed) => [['python', 'main.py', '--iters', String(s.numpyIters), '--seed', String(seed)]],
    },
    {
      name: 'lines',
      label: `10,000 printed lines a second for ${s.lineSeconds} s`,
      write: py('main.py', LINES_PY),
      request: (seed) => `run main.py for ${s.lineSeconds} seconds with seed ${seed}`,
      direct: (seed) => [['python', 'main.py', '--seconds', String(s.lineSeconds), '--seed', String(seed)]],
    },
    {
      name: 'output',
      label: `${s.outputMiB} MiB of outputs`,
      write: py('main.py', OUTPUT_PY),
      request: (seed) => `run main.py with mib ${s.outputMiB} and seed ${seed} and give me outputs/data.bin`,
      direct: (seed) => [['python', 'main.py', '--mib', String(s.outputMiB), '--seed', String(seed)]],
    },
    {
      // Not in the default set: the case the CLI's download overlap is for (outputs that take long to fetch, an evaluation to overlap).
      name: 'checkpoint',
      label: `a ${s.checkpointMiB} MiB checkpoint the evaluation reloads`,
      write: py('train.py', CHECKPOINT_PY),
      request: (seed) => `run train.py with mib ${s.checkpointMiB} and seed ${seed} and give me the model`,
      direct: (seed) => [['python', 'train.py', '--mib', String(s.checkpointMiB), '--seed', String(seed)]],
    },
    {
      name: 'sweep',
      label: `10-value sweep of the NumPy loop (${s.sweepIters} iterations each)`,
      write: py('main.py', NUMPY_PY),
      request: (seed) =>
        `run main.py for ${s.sweepIters} iterations for seeds ${Array.from({ length: 10 }, (_, i) => seed * 10 + i).join(' ')}`,
      direct: (seed) =>
        Array.from({ length: 10 }, (_, i) => ['python', 'main.py', '--iters', String(s.sweepIters), '--seed', String(seed * 10 + i)]),
    },
  ];
}
