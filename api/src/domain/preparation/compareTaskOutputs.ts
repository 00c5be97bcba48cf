/**
 * The numerical comparison of two runs' outputs (compare.py through preparation/compareOutputs.ts),
 * from their stored manifests: the files under the compared paths are fetched from the blob store
 * into a scratch folder, one side each, and compared with the given tolerances. The preparation
 * stage compares a candidate with the reference this way; the trust check (domain/trust) compares
 * a replica with the original the same way.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { compareOutputs, type ComparisonCriteria, type ComparisonReport } from '../../preparation/compareOutputs.js';
import { findPython } from '../../preparation/findPython.js';
import type { ManifestEntry } from '../blobs/paths.js';
import type { Resources } from '../resources.js';

export interface Tolerance {
  rtol?: number;
  atol?: number;
}

/** A plan's tolerance as compare.py's criteria: every float dtype and every metric; none → its defaults. */
export function toleranceCriteria(t: Tolerance | null | undefined): ComparisonCriteria | undefined {
  if (!t || (t.rtol === undefined && t.atol === undefined)) return undefined;
  const tol = { ...(t.rtol !== undefined ? { rtol: t.rtol } : {}), ...(t.atol !== undefined ? { atol: t.atol } : {}) };
  return { tolerances: { float16: tol, bfloat16: tol, float32: tol, float64: tol }, metrics: { default: tol } };
}

/** The outputs under the compared paths (default: outputs/). */
export function comparedOutputs(outputs: ManifestEntry[], compare: string[] = ['outputs']): ManifestEntry[] {
  return outputs.filter((o) => compare.some((c) => o.path === c || o.path.startsWith(`${c.replace(/\/$/, '')}/`)));
}

export async function compareTaskOutputs(
  r: Pick<Resources, 'blobs'>,
  reference: ManifestEntry[],
  candidate: ManifestEntry[],
  opts: { compare?: string[]; criteria?: ComparisonCriteria } = {},
): Promise<ComparisonReport> {
  const dir = await mkdtemp(path.join(tmpdir(), 'chatgpu-compare-'));
  try {
    for (const [side, outputs] of [
      ['reference', reference],
      ['candidate', candidate],
    ] as const) {
      await mkdir(path.join(dir, side), { recursive: true });
      for (const o of comparedOutputs(outputs, opts.compare)) {
        const dest = path.join(dir, side, o.path);
        await mkdir(path.dirname(dest), { recursive: true });
        await pipeline(await r.blobs.read(o.sha256), createWriteStream(dest));
      }
    }
    const py = await apiPython(['numpy']);
    return await compareOutputs({
      reference: path.join(dir, 'reference'),
      candidate: path.join(dir, 'candidate'),
      python: py,
      ...(opts.criteria ? { criteria: opts.criteria } : {}),
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const pythonFor = new Map<string, Promise<string>>();
/** The API machine's Python for the toolkit (AST rewrites, byte-compiles, compare.py). */
export async function apiPython(modules: string[] = []): Promise<string> {
  const key = modules.join(',');
  if (!pythonFor.has(key)) {
    const p = (async () => {
      // Prefer one that also has torch: compare.py needs it for .pt outputs.
      const found = (modules.length ? await findPython({ modules: [...modules, 'torch'] }) : null) ?? (await findPython({ modules }));
      if (!found)
        throw new Error(
          `No Python 3${modules.length ? ` with ${modules.join(', ')}` : ''} on the API machine: the preparation toolkit needs one (Debian: apt-get install python3 python3-numpy).`,
        );
      return found.path;
    })();
    p.catch(() => pythonFor.delete(key));
    pythonFor.set(key, p);
  }
  return pythonFor.get(key)!;
}
