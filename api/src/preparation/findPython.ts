/**
 * Finds a Python interpreter that has the modules a step needs. On Debian hosts the `python3` on
 * PATH may be a pyenv build without PyTorch while /usr/bin/python3 has it (STACK.md), so each
 * candidate is probed rather than trusted.
 */
import { runProcess } from './pythonAst.js';

// /usr/bin/python3 first: a pyenv shim named python3 costs ~1.2 s per start (measured here) and may lack torch
export const DEFAULT_PYTHON_CANDIDATES = ['/usr/bin/python3', 'python3', '/usr/local/bin/python3', 'python'];

export interface FoundPython {
  path: string;
  version: string;
  /** Versions of the probed modules that have `__version__` (e.g. torch, numpy). */
  modules: Record<string, string>;
}

export async function findPython(opts: { candidates?: readonly string[]; modules?: readonly string[] } = {}): Promise<FoundPython | null> {
  const modules = opts.modules ?? [];
  const probe = [
    'import sys, json, importlib',
    `mods = ${JSON.stringify(modules)}`,
    'out = {}',
    'for m in mods:',
    '    out[m] = str(getattr(importlib.import_module(m), "__version__", "?"))',
    'print(json.dumps({"version": "%d.%d.%d" % sys.version_info[:3], "modules": out}))',
  ].join('\n');
  for (const path of opts.candidates ?? DEFAULT_PYTHON_CANDIDATES) {
    try {
      const r = await runProcess(path, ['-c', probe], null, 60_000);
      if (r.code !== 0) continue;
      const parsed = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { version: string; modules: Record<string, string> };
      return { path, version: parsed.version, modules: parsed.modules };
    } catch {
      // not installed under this name: try the next one
    }
  }
  return null;
}
