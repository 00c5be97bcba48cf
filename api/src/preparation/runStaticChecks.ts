/**
 * Static checks before anything runs (docs/architecture.md §4: "Candidates pass static checks (parse,
 * compile) before any worker runs them"): Python files byte-compile, C++/CUDA/HIP sources compile
 * with the target's compiler (hipcc for rocm, nvcc for cuda). Failures come back as structured
 * feedback (file, line, column, message) fit to hand to an agent for the next revision.
 *
 * Compiles are batched: one compiler process over all sources (each hipcc start costs ~1 s of the
 * ~2.5 s a small file takes). Clang's driver stops at the first file that fails, so after a failure
 * the files not yet reached are compiled again in a new batch.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parsePython, runProcess } from './pythonAst.js';
import type { CodeTree, Target } from './types.js';

export interface StaticFeedback {
  file: string;
  line: number;
  col: number;
  severity: 'error' | 'warning';
  tool: 'python' | 'hipcc' | 'nvcc';
  message: string;
}

export interface CompileRun {
  tool: 'hipcc' | 'nvcc';
  files: string[];
  ok: boolean;
  durationMs: number;
}

export interface StaticCheckResult {
  ok: boolean;
  feedback: StaticFeedback[];
  runs: CompileRun[];
  /** Checks that could not run (a compiler or interpreter missing), with why. */
  unavailable: string[];
}

export interface StaticCheckOptions {
  target: Target;
  /** Python interpreter for the byte-compile check; omitted → Python files are not checked. */
  python?: string;
  hipcc?: string;
  nvcc?: string;
  hipArch?: string;
  /** Extra -I directories (absolute). */
  includeDirs?: readonly string[];
  /** -I directories inside the tree (relative paths, e.g. `Common` for cuda-samples' helper headers). */
  treeIncludeDirs?: readonly string[];
  timeoutMs?: number;
}

export const COMPILED_SOURCE = /\.(?:cu|hip|cpp|cc|cxx)$/;

export async function runStaticChecks(tree: CodeTree, opts: StaticCheckOptions): Promise<StaticCheckResult> {
  const result: StaticCheckResult = { ok: true, feedback: [], runs: [], unavailable: [] };
  for (const d of opts.treeIncludeDirs ?? []) {
    if (d.startsWith('/') || d.split('/').includes('..')) throw new Error(`treeIncludeDirs: ${d} is not a relative path inside the tree`);
  }
  const paths = Object.keys(tree).sort();
  const py = paths.filter((p) => p.endsWith('.py'));
  if (py.length > 0) {
    if (!opts.python) result.unavailable.push('python: no interpreter given; Python files not compiled');
    else {
      try {
        const parsed = await parsePython(Object.fromEntries(py.map((p) => [p, tree[p]!])), { python: opts.python, compile: true });
        for (const p of py) {
          const r = parsed[p];
          if (r && !r.ok)
            result.feedback.push({
              file: p,
              line: r.error.line,
              col: r.error.col,
              severity: 'error',
              tool: 'python',
              message: r.error.message,
            });
        }
      } catch (e) {
        result.unavailable.push(`python: ${(e as Error).message}`);
      }
    }
  }
  const sources = paths.filter((p) => COMPILED_SOURCE.test(p) && (opts.target === 'rocm' || opts.target === 'cuda'));
  if (sources.length > 0) {
    const tool = opts.target === 'rocm' ? 'hipcc' : 'nvcc';
    const dir = await mkdtemp(join(tmpdir(), 'chatgpu-check-'));
    try {
      for (const p of paths) {
        await mkdir(dirname(join(dir, 'src', p)), { recursive: true });
        await writeFile(join(dir, 'src', p), tree[p]!);
      }
      await mkdir(join(dir, 'obj'), { recursive: true });
      let pending = sources;
      while (pending.length > 0) {
        const started = Date.now();
        const includeFlags = [...(opts.treeIncludeDirs ?? []).map((d) => join(dir, 'src', d)), ...(opts.includeDirs ?? [])].map(
          (d) => `-I${d}`,
        );
        const args =
          tool === 'hipcc'
            ? [`--offload-arch=${opts.hipArch ?? 'gfx1030'}`, '-w', ...includeFlags, '-c', ...pending.map((p) => join(dir, 'src', p))]
            : ['-c', '-w', ...includeFlags, ...pending.map((p) => join(dir, 'src', p))];
        let run;
        try {
          run = await runProcess(
            tool === 'hipcc' ? (opts.hipcc ?? 'hipcc') : (opts.nvcc ?? 'nvcc'),
            args,
            null,
            opts.timeoutMs ?? 300_000,
            { ...process.env, HIP_PLATFORM: tool === 'hipcc' ? 'amd' : (process.env.HIP_PLATFORM ?? '') },
            join(dir, 'obj'),
          );
        } catch (e) {
          result.unavailable.push(`${tool}: ${(e as Error).message}`);
          break;
        }
        const diags = parseDiagnostics(`${run.stdout}\n${run.stderr}`, join(dir, 'src'), tool);
        result.feedback.push(...diags);
        result.runs.push({ tool, files: pending, ok: run.code === 0, durationMs: Date.now() - started });
        if (run.code === 0) break;
        const failed = new Set(diags.filter((d) => d.severity === 'error').map((d) => d.file));
        if (failed.size === 0) {
          result.feedback.push({
            file: pending[0]!,
            line: 1,
            col: 0,
            severity: 'error',
            tool,
            message: `${tool} failed: ${(run.stderr || run.stdout).trim().slice(-1500)}`,
          });
          break;
        }
        // continue after the last failing source the driver reached
        const lastFailed = Math.max(...pending.map((p, i) => (failed.has(p) ? i : -1)));
        pending = pending.slice(lastFailed + 1);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  result.feedback.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.col - b.col));
  result.ok = result.unavailable.length === 0 && !result.feedback.some((f) => f.severity === 'error');
  return result;
}

const CLANG_DIAG = /^(.+?):(\d+):(\d+): (error|fatal error|warning): (.*)$/;
const NVCC_DIAG = /^(.+?)\((\d+)\): (error|warning)(?: #[\w-]+)?: (.*)$/;

export function parseDiagnostics(output: string, root: string, tool: 'hipcc' | 'nvcc'): StaticFeedback[] {
  const out: StaticFeedback[] = [];
  for (const raw of output.split('\n')) {
    const line = raw.trimEnd();
    let m = CLANG_DIAG.exec(line);
    let file: string, ln: number, col: number, sev: string, msg: string;
    if (m) [, file, ln, col, sev, msg] = [m[0], m[1]!, Number(m[2]), Number(m[3]), m[4]!, m[5]!];
    else if ((m = NVCC_DIAG.exec(line))) [, file, ln, col, sev, msg] = [m[0], m[1]!, Number(m[2]), 0, m[3]!, m[4]!];
    else continue;
    const rel = file.startsWith(root) ? relative(root, file) : file;
    const severity = sev === 'warning' ? 'warning' : 'error';
    if (!out.some((f) => f.file === rel && f.line === ln && f.message === msg))
      out.push({ file: rel, line: ln, col, severity, tool, message: msg });
  }
  return out;
}
