/**
 * Python parsing through the interpreter's own `ast` module (python/pyast.py).
 *
 * Why not tree-sitter: the grammar that decides what a Python file means is CPython's; `ast` has it
 * exactly (match statements, f-string rules, soft keywords) for the version the worker runs, gives
 * exact start/end positions of every node (end_lineno/end_col_offset, Python ≥ 3.8) to splice edits
 * into the untouched source, and adds no npm dependency or wasm ABI to keep in step with
 * web-tree-sitter. A Python interpreter is needed anyway for the static check (py_compile) and for
 * every run of the code. The price is a child process per batch (~50 ms), paid once per tree.
 */
import { spawn } from 'node:child_process';
import { inRepo } from '../paths.js';

export interface PyNode {
  _t: string;
  /** Start/end offsets in the source (JavaScript string indices) and 1-based start line. */
  s?: number;
  e?: number;
  l?: number;
  [field: string]: unknown;
}

export type PyParse = { ok: true; tree: PyNode } | { ok: false; error: { line: number; col: number; message: string } };

const HELPER = inRepo('api/src/preparation/python/pyast.py');

export class PythonUnavailableError extends Error {
  readonly code = 'PYTHON_UNAVAILABLE';
}

/** Parses (and with `compile`, byte-compiles) every file in one Python process. */
export async function parsePython(
  files: Readonly<Record<string, string>>,
  opts: { python: string; compile?: boolean; timeoutMs?: number },
): Promise<Record<string, PyParse>> {
  if (Object.keys(files).length === 0) return {};
  const input = JSON.stringify({ files, compile: opts.compile ?? false });
  const { code, stdout, stderr } = await runProcess(opts.python, [HELPER], input, opts.timeoutMs ?? 60_000);
  if (code !== 0) throw new PythonUnavailableError(`${opts.python} ${HELPER} exited ${code}: ${stderr.slice(-2000)}`);
  return JSON.parse(stdout) as Record<string, PyParse>;
}

export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion with stdin, collecting output; rejects only when it cannot start. */
export function runProcess(
  cmd: string,
  args: readonly string[],
  stdin: string | null,
  timeoutMs: number,
  env?: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env, cwd });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new PythonUnavailableError(`cannot run ${cmd}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? (signal ? 128 + 9 : 1),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8') + (signal ? `\n(killed by ${signal})` : ''),
      });
    });
    child.stdin.on('error', () => {}); // the child may exit before reading everything
    child.stdin.end(stdin ?? '');
  });
}

/** Child nodes of a node, in source order of their fields. */
export function pyChildren(node: PyNode): PyNode[] {
  const out: PyNode[] = [];
  for (const [k, v] of Object.entries(node)) {
    if (k === '_t' || k === 's' || k === 'e' || k === 'l') continue;
    if (Array.isArray(v)) {
      for (const x of v) if (isNode(x)) out.push(x);
    } else if (isNode(v)) out.push(v);
  }
  return out;
}

export function isNode(v: unknown): v is PyNode {
  return typeof v === 'object' && v !== null && typeof (v as { _t?: unknown })._t === 'string';
}
