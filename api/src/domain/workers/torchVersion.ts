/**
 * A worker's PyTorch as placement sees it: the torch of the interpreter it runs tasks with
 * (capabilities.python, else its first probed one), compared by major.minor. The claim's SQL
 * (db/sql/claimTasks.ts torchOf and torchFits) reads the same fields the same way.
 */
import { older, parseVersion } from '../../preparation/migratePytorch.js';

interface Capabilities {
  python?: string;
  pythons?: { path: string; version: string; torch?: { version: string } | null; numpy?: string | null; modules?: string[] }[];
}

/** The probed interpreter tasks run with (capabilities.python, else the first). */
export function chosenPython(capabilities: unknown): NonNullable<Capabilities['pythons']>[number] | undefined {
  const caps = (capabilities ?? {}) as Capabilities;
  return caps.pythons?.find((p) => p.path === caps.python) ?? caps.pythons?.[0];
}

/** Does a worker with these capabilities have torch ≥ min ("2.1")? No torch: no. */
export function torchAtLeast(capabilities: unknown, min: string): boolean {
  const have = parseVersion(chosenPython(capabilities)?.torch?.version);
  const need = parseVersion(min);
  return !!have && !!need && !older(have, need);
}
