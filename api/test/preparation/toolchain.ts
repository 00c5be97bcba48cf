/**
 * Finds the tools the preparation scenario tests need and fails with a clear message when one is
 * missing (the project's `npm test` installs them: python3-torch, python3-numpy, hipcc,
 * libhiprand-dev, librocrand-dev). Never skips silently.
 */
import { existsSync } from 'node:fs';
import { findPython, type FoundPython } from '../../src/preparation/findPython.js';

export async function torchPython(): Promise<FoundPython> {
  const found = await findPython({ candidates: ['/usr/bin/python3', 'python3'], modules: ['torch', 'numpy'] });
  if (!found)
    throw new Error(
      'no Python with torch and numpy found (tried /usr/bin/python3, python3): apt-get install -y python3-torch python3-numpy',
    );
  return found;
}

export function requireTool(path: string, install: string): string {
  const dirs = (process.env.PATH ?? '').split(':');
  const hit = path.startsWith('/') ? (existsSync(path) ? path : null) : dirs.map((d) => `${d}/${path}`).find((p) => existsSync(p));
  if (!hit) throw new Error(`${path} not found: ${install}`);
  return hit;
}

/** Any Python ≥ 3.8 to parse with; Debian's starts in ~0.1 s where a pyenv shim takes ~1.2 s. */
export const PARSER_PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
