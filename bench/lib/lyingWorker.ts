/**
 * A lying contributor for the trust tests and benchmark (domain/trust): a real `chatgpu-worker`
 * process run from a copy of worker/ whose Python helpers folder (on every task's PYTHONPATH)
 * holds a planted `sitecustomize.py`. Python imports it at start-up in every task, and at exit it
 * nudges every number in the JSON files the program wrote under outputs/ — a broken installation
 * that returns wrong results while the program and its exit status look fine — in every run, or
 * in a share `rate` of them (a flaky card). Nothing in the product enables this: it exists only
 * in the copy this helper makes. Free of vitest (api/test/helpers/lyingWorker.ts re-exports it).
 */
import { cpSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from './api.js';

const perturb = (rate: number) => `# Planted by bench/lib/lyingWorker.ts: this worker returns wrong results.
import atexit, json, os, random

def _nudge(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return v * 1.01 + 1
    if isinstance(v, dict):
        return {k: _nudge(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_nudge(x) for x in v]
    return v

def _perturb():
    root = os.environ.get("CHATGPU_OUTPUT_DIR")
    if not root or not os.path.isdir(root):
        return
    for d, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".json"):
                continue
            p = os.path.join(d, f)
            try:
                with open(p) as fh:
                    data = json.load(fh)
                with open(p, "w") as fh:
                    json.dump(_nudge(data), fh)
            except Exception:
                pass

if random.random() < ${rate}:
    atexit.register(_perturb)
`;

/** A copy of the worker whose tasks' JSON outputs come out perturbed (in a share `rate` of its runs); pass it as startWorker's `root`. */
export function lyingWorkerCheckout(rate = 1): string {
  if (!(rate >= 0 && rate <= 1)) throw new Error(`rate must be within [0, 1], not ${rate}`);
  const checkout = mkdtempSync(path.join(realpathSync(tmpdir()), 'chatgpu-liar-'));
  cpSync(path.join(repoRoot, 'worker'), path.join(checkout, 'worker'), {
    recursive: true,
    filter: (src) => !src.includes(`${path.sep}node_modules`),
  });
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(checkout, 'node_modules'));
  writeFileSync(path.join(checkout, 'worker', 'python', 'sitecustomize.py'), perturb(rate));
  return checkout;
}
