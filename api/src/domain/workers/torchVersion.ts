/**
 * A worker's PyTorch as placement sees it: the torch of the interpreter it runs tasks with
 * (capabilities.python, else its first probed one), compared by major.minor. The claim's SQL
 * (db/sql/claimTasks.ts, TORCH_OF_WORKER and TORCH_AT_LEAST) reads the same fields the same way.
 */
interface Capabilities {
  python?: string;
  pythons?: { path: string; version: string; torch?: { version: string } | null; numpy?: string | null; modules?: string[] }[];
}

/** The probed interpreter tasks run with (capabilities.python, else the first). */
export function chosenPython(capabilities: unknown): NonNullable<Capabilities['pythons']>[number] | undefined {
  const caps = (capabilities ?? {}) as Capabilities;
  return caps.pythons?.find((p) => p.path === caps.python) ?? caps.pythons?.[0];
}

export function majorMinor(version: string | null | undefined): [number, number] | null {
  const m = version ? /^(\d+)\.(\d+)/.exec(version) : null;
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** Does a worker with these capabilities have torch ≥ min ("2.1")? No torch: no. */
export function torchAtLeast(capabilities: unknown, min: string): boolean {
  const have = majorMinor(chosenPython(capabilities)?.torch?.version);
  const need = majorMinor(min);
  if (!have || !need) return false;
  return have[0] > need[0] || (have[0] === need[0] && have[1] >= need[1]);
}
