/**
 * Reads a project's Python files with the interpreter's own `ast` (python/entrypoints.py):
 * entry points (a `__main__` block or a top-level script), and argparse / click / typer flags
 * with their types, defaults, actions and choices — help texts with parentheses, defaults that
 * are expressions and store_true flags included, which patterns get wrong. Nothing is imported
 * or run. Without a Python on the API's machine it answers null and the planner falls back to
 * the patterns in analyzeProject.ts.
 */
import { findPython } from '../../preparation/findPython.js';
import { runProcess } from '../../preparation/pythonAst.js';
import type { PyFileFacts } from './analyzeProject.js';
import { inRepo } from '../../paths.js';

const HELPER = inRepo('api/src/agents/planner/python/entrypoints.py');
let python: Promise<string | null> | undefined;

export async function readPythonFacts(
  files: ReadonlyMap<string, string>,
  opts: { python?: string; timeoutMs?: number } = {},
): Promise<Record<string, PyFileFacts> | null> {
  const py = Object.fromEntries([...files].filter(([p]) => p.endsWith('.py')));
  if (Object.keys(py).length === 0) return {};
  const interpreter = opts.python ?? (await (python ??= findPython().then((f) => f?.path ?? null)));
  if (!interpreter) return null;
  try {
    const r = await runProcess(interpreter, [HELPER], JSON.stringify({ files: py }), opts.timeoutMs ?? 30_000);
    if (r.code !== 0) return null;
    return JSON.parse(r.stdout) as Record<string, PyFileFacts>;
  } catch {
    return null;
  }
}
