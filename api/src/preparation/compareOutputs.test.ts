/**
 * The comparison helper on planted differences: one element off beyond tolerance, a wrong dtype, a
 * missing tensor, a near-constant candidate — and equal outputs pass. Fixtures are written by a
 * Python script (torch/numpy) and, for .safetensors, byte by byte from TypeScript, so the helper's
 * own safetensors parser is checked against the format rather than against itself.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { torchPython } from '../../test/preparation/toolchain.js';
import { compareOutputs } from './compareOutputs.js';
import { runProcess } from './pythonAst.js';

let python = '';
let dir = '';

function safetensors(tensors: Record<string, { dtype: string; shape: number[]; data: Buffer }>): Buffer {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  const bufs: Buffer[] = [];
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.length] };
    offset += t.data.length;
    bufs.push(t.data);
  }
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8) json += ' ';
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, Buffer.from(json), ...bufs]);
}
const f32 = (xs: number[]): Buffer => Buffer.from(new Float32Array(xs).buffer);
const bf16 = (xs: number[]): Buffer => {
  const u = new Uint32Array(new Float32Array(xs).buffer);
  return Buffer.from(new Uint16Array(Array.from(u, (v) => v >>> 16)).buffer);
};

beforeAll(async () => {
  python = (await torchPython()).path;
  dir = await mkdtemp(join(tmpdir(), 'chatgpu-compare-'));
  const script = `
import json, os, sys, numpy as np, torch
d = sys.argv[1]
def mk(name): p = os.path.join(d, name); os.makedirs(p, exist_ok=True); return p
torch.manual_seed(0)
sd = {"fc.weight": torch.randn(8, 4), "fc.bias": torch.randn(8), "steps": torch.tensor(3), "half": torch.randn(16).half()}
ref = mk("ref")
torch.save(sd, os.path.join(ref, "model.pt"))
np.save(os.path.join(ref, "pred.npy"), np.linspace(0, 1, 64, dtype=np.float32))
np.savez(os.path.join(ref, "arrays.npz"), a=np.arange(10), b=np.ones((2, 3), dtype=np.float64))
json.dump({"loss": 0.5, "acc": 0.9, "history": [1.0, 0.7, 0.5], "name": "run"}, open(os.path.join(ref, "metrics.json"), "w"))
open(os.path.join(ref, "log.txt"), "w").write("epoch 1\\nepoch 2\\n")

same = mk("same")
sd2 = {k: v.clone() for k, v in sd.items()}
sd2["fc.weight"][0, 0] += 1e-7  # inside fp32 tolerance
torch.save(sd2, os.path.join(same, "model.pt"))
np.save(os.path.join(same, "pred.npy"), np.linspace(0, 1, 64, dtype=np.float32))
np.savez(os.path.join(same, "arrays.npz"), a=np.arange(10), b=np.ones((2, 3), dtype=np.float64))
json.dump({"loss": 0.5 + 1e-9, "acc": 0.9, "history": [1.0, 0.7, 0.5], "name": "run"}, open(os.path.join(same, "metrics.json"), "w"))
open(os.path.join(same, "log.txt"), "w").write("epoch 1\\nepoch 2\\n")

off = mk("off_by_one_element")
sd3 = {k: v.clone() for k, v in sd.items()}
sd3["fc.weight"][3, 2] += 1e-3
torch.save(sd3, os.path.join(off, "model.pt"))

dt = mk("wrong_dtype")
sd4 = dict(sd); sd4["fc.bias"] = sd["fc.bias"].double()
torch.save(sd4, os.path.join(dt, "model.pt"))

miss = mk("missing_tensor")
sd5 = dict(sd); del sd5["fc.bias"]
torch.save(sd5, os.path.join(miss, "model.pt"))

const = mk("constant")
np.save(os.path.join(const, "pred.npy"), np.full(64, 0.5, dtype=np.float32))
`;
  const r = await runProcess(python, ['-c', script, dir], null, 120_000);
  expect(r.code, r.stderr).toBe(0);
  await mkdir(join(dir, 'st_ref'));
  await mkdir(join(dir, 'st_cand'));
  await writeFile(
    join(dir, 'st_ref', 'w.safetensors'),
    safetensors({
      w: { dtype: 'F32', shape: [2, 2], data: f32([1, 2, 3, 4]) },
      h: { dtype: 'BF16', shape: [3], data: bf16([1, 0.5, -2]) },
    }),
  );
  await writeFile(
    join(dir, 'st_cand', 'w.safetensors'),
    safetensors({
      w: { dtype: 'F32', shape: [2, 2], data: f32([1, 2, 3, 4.01]) },
      h: { dtype: 'BF16', shape: [3], data: bf16([1, 0.5, -2]) },
    }),
  );
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const cmp = (ref: string, cand: string, extra = {}) =>
  compareOutputs({ reference: join(dir, ref), candidate: join(dir, cand), python, ...extra });

describe('compareOutputs', () => {
  it('passes equal outputs (tensors, npy/npz, metrics, text)', async () => {
    const r = await cmp('ref', 'same');
    expect(r.files.filter((f) => !f.ok)).toEqual([]);
    expect(r.ok).toBe(true);
    const model = r.files.find((f) => f.path === 'model.pt')!;
    const w = model.tensors!.find((t) => t.name === 'fc.weight')!;
    expect(w).toMatchObject({ ok: true, dtype_match: true, shape_match: true, mismatched_fraction: 0, rtol: 1.3e-6, atol: 1e-5 });
    expect(w.max_abs_error).toBeGreaterThan(0);
    expect(model.tensors!.find((t) => t.name === 'half')).toMatchObject({ rtol: 1e-3, atol: 1e-5, dtype_reference: 'float16' });
    expect(model.tensors!.find((t) => t.name === 'steps')).toMatchObject({ rtol: 0, atol: 0, dtype_reference: 'int64' });
  });

  it('catches one element off beyond tolerance, with the share of elements outside', async () => {
    const r = await cmp('ref/model.pt', 'off_by_one_element/model.pt');
    expect(r.ok).toBe(false);
    const w = r.files[0]!.tensors!.find((t) => t.name === 'fc.weight')!;
    expect(w.ok).toBe(false);
    expect(w.mismatched_fraction).toBeCloseTo(1 / 32, 10);
    expect(w.max_abs_error as number).toBeCloseTo(1e-3, 6);
    expect(w.problem).toBe('1 of 32 elements outside tolerance');
    expect(r.files[0]!.tensors!.filter((t) => !t.ok).map((t) => t.name)).toEqual(['fc.weight']);
  });

  it('catches a wrong dtype', async () => {
    const r = await cmp('ref/model.pt', 'wrong_dtype/model.pt');
    const b = r.files[0]!.tensors!.find((t) => t.name === 'fc.bias')!;
    expect(b).toMatchObject({
      ok: false,
      dtype_match: false,
      dtype_reference: 'float32',
      dtype_candidate: 'float64',
      problem: 'dtype differs',
    });
  });

  it('catches a missing tensor and a missing file', async () => {
    const r = await cmp('ref/model.pt', 'missing_tensor/model.pt');
    expect(r.files[0]!.tensors!.find((t) => t.name === 'fc.bias')).toMatchObject({ ok: false, problem: 'missing in candidate' });
    const dirs = await cmp('ref', 'missing_tensor');
    expect(dirs.files.find((f) => f.path === 'pred.npy')).toMatchObject({ kind: 'missing', ok: false });
  });

  it('flags a candidate that is (nearly) constant while the reference varies', async () => {
    const r = await cmp('ref/pred.npy', 'constant/pred.npy');
    expect(r.ok).toBe(false);
    expect(r.suspicious).toHaveLength(1);
    expect(r.suspicious[0]).toMatch(/constant/);
  });

  it('reads .safetensors (F32 and BF16) and applies per-dtype and per-tensor tolerances', async () => {
    const strict = await cmp('st_ref', 'st_cand');
    expect(strict.ok).toBe(false);
    expect(strict.files[0]!.tensors!.find((t) => t.name === 'h')).toMatchObject({ ok: true, dtype_reference: 'bfloat16', rtol: 1.6e-2 });
    const loose = await cmp('st_ref', 'st_cand', { criteria: { tensors: { w: { rtol: 0.01, atol: 0 } } } });
    expect(loose.ok).toBe(true);
  });

  it('compares metrics with stated tolerances', async () => {
    await writeFile(join(dir, 'm_ref.json'), JSON.stringify({ loss: 0.5, history: [1, 0.7] }));
    await writeFile(join(dir, 'm_cand.json'), JSON.stringify({ loss: 0.51, history: [1, 0.71] }));
    const strict = await cmp('m_ref.json', 'm_cand.json');
    expect(strict.ok).toBe(false);
    const loose = await cmp('m_ref.json', 'm_cand.json', { criteria: { metrics: { loss: { rtol: 0.05 }, history: { atol: 0.02 } } } });
    expect(loose.ok).toBe(true);
  });

  it('compares text exactly and says where it differs', async () => {
    await writeFile(join(dir, 't_ref.txt'), 'a\nb\n');
    await writeFile(join(dir, 't_cand.txt'), 'a\nc\n');
    const r = await cmp('t_ref.txt', 't_cand.txt');
    expect(r.files[0]).toMatchObject({ kind: 'text', ok: false, line: 2, reference: 'b', candidate: 'c' });
  });
});
