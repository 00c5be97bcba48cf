/**
 * The migration transformation over a whole code tree: routes each file to its migrator for the
 * target and assembles one TransformResult. Deterministic: files are visited in sorted path order
 * and every list in the result is sorted by file and line.
 *
 * What each target means:
 * - Python (PyTorch): made device-agnostic for every target (the worker names the device), since a
 *   script hard-wired to CUDA is only right on one kind of worker; code with no CUDA-isms is untouched.
 * - CUDA C/C++ and its build files: translated to HIP for `rocm`; left as they are for `cuda`; for
 *   `cpu` and `mps` reported as a blocking hazard (there is no automatic port of a kernel to a CPU).
 */
import { buildFileKind, migrateBuildFile } from './migrateBuildFile.js';
import { migrateCudaToHip } from './migrateCudaToHip.js';
import { migratePytorch } from './migratePytorch.js';
import { parsePython } from './pythonAst.js';
import { tokenizeCpp } from './tokenizeCpp.js';
import { CUDA_IDENT_PATTERN } from './cudaToHipTable.js';
import { byFileLine, type CodeTree, type FileTransform, type TransformContext, type TransformResult } from './types.js';

export const CUDA_SOURCE = /\.(?:cu|cuh)$/;
export const CPP_SOURCE = /\.(?:cu|cuh|c|cc|cpp|cxx|h|hh|hpp|hxx|inl)$/;

export interface MigrateOptions {
  /** Python interpreter used to parse .py files (any Python ≥ 3.8). */
  python: string;
}

export async function migrateTree(tree: CodeTree, ctx: TransformContext, opts: MigrateOptions): Promise<TransformResult> {
  const paths = Object.keys(tree).sort();
  const pyFiles: Record<string, string> = {};
  for (const p of paths) if (p.endsWith('.py')) pyFiles[p] = tree[p]!;
  const parsed = await parsePython(pyFiles, { python: opts.python });

  const out: Record<string, string> = {};
  const results: FileTransform[] = [];
  for (const path of paths) {
    const content = tree[path]!;
    let r: FileTransform | null = null;
    if (path.endsWith('.py')) {
      const p = parsed[path];
      if (p && p.ok) r = migratePytorch(path, content, p.tree, ctx);
      else if (p && !p.ok) {
        r = {
          content,
          edits: [],
          unconverted: [],
          numericsNotes: [],
          hazards: [
            {
              file: path,
              line: p.error.line,
              severity: 'error',
              rule: 'python-syntax',
              what: `does not parse: ${p.error.message}`,
              why: 'A file that does not parse cannot be migrated or run.',
              fix: 'Fix the syntax error.',
            },
          ],
        };
      }
    } else if (CPP_SOURCE.test(path)) {
      if (ctx.target === 'rocm') r = migrateCudaToHip(path, content, { treeFiles: paths });
      else if (ctx.target !== 'cuda') r = cudaOnCpu(path, content, ctx.target);
    } else if (buildFileKind(path) && ctx.target === 'rocm') {
      r = migrateBuildFile(path, content, ctx.hipArch ?? 'gfx1030');
    }
    out[path] = r ? r.content : content;
    if (r) results.push(r);
  }
  const changed = paths.some((p) => out[p] !== tree[p]);
  const notes = [...new Set(results.flatMap((r) => r.numericsNotes))].sort();
  return {
    changed,
    tree: out,
    edits: results.flatMap((r) => r.edits).sort(byFileLine),
    hazards: results.flatMap((r) => r.hazards).sort(byFileLine),
    unconverted: results.flatMap((r) => r.unconverted).sort(byFileLine),
    numericsMayChange: notes.length > 0,
    numericsNotes: notes,
  };
}

/** CUDA C++ on a CPU or MPS target: nothing to translate to, so say so once per file. */
function cudaOnCpu(path: string, content: string, target: string): FileTransform {
  const tokens = tokenizeCpp(content);
  const kernel = tokens.find((t) => t.kind === 'ident' && (t.text === '__global__' || CUDA_IDENT_PATTERN.test(t.text)));
  const r: FileTransform = { content, edits: [], hazards: [], unconverted: [], numericsNotes: [] };
  if (kernel) {
    r.hazards.push({
      file: path,
      line: kernel.line,
      severity: 'error',
      rule: 'cuda-on-cpu',
      what: `CUDA C++ cannot run on a ${target} worker`,
      why: 'Kernels and the CUDA runtime need an NVIDIA (or, translated to HIP, an AMD) GPU; there is no automatic translation to CPU or Metal code.',
      fix: 'Target cuda or rocm for this code, or port the kernels by hand (e.g. to PyTorch or OpenMP).',
    });
  }
  return r;
}
