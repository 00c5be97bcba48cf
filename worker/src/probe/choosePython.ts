import type { PythonRuntime } from './types.js';

/**
 * Ranks an interpreter: torch that can reach an accelerator > torch > plain Python. Ties keep the
 * candidates' order (PATH first). Returns the chosen path, or null when there is no Python at all.
 */
export function choosePython(pythons: PythonRuntime[]): string | null {
  let best: PythonRuntime | null = null;
  let bestScore = -1;
  for (const p of pythons) {
    const s = pythonScore(p);
    if (s > bestScore) {
      best = p;
      bestScore = s;
    }
  }
  return best?.path ?? null;
}

export function pythonScore(p: PythonRuntime): number {
  if (!p.torch) return 1;
  return p.torch.cudaAvailable || p.torch.mpsAvailable ? 3 : 2;
}
