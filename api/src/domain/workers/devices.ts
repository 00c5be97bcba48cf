/**
 * How many devices one task of a class may use on a worker — the process count of a distributed
 * launch (docs/launchers.md) and what placement checks against a task's `devices`:
 * - an accelerator class (nvidia, amd, apple): the worker's accelerators of that vendor (its
 *   capabilities' list, one entry per device, as worker/src/probe reports them);
 * - the CPU (no vendor): the cores of one slot (the worker's cores divided among its slots), each
 *   process a gloo rank.
 * The claim (db/sql/claimTasks.ts) computes the same in SQL.
 */
export function devicesOf(w: { capabilities: unknown; cpuCores: number; slots: number }, vendor: string | null | undefined): number {
  if (!vendor || vendor === 'none') return slotCores(w);
  const list = (w.capabilities as { accelerators?: unknown } | null)?.accelerators;
  return Array.isArray(list) ? list.filter((a) => (a as { vendor?: unknown } | null)?.vendor === vendor).length : 0;
}

/** The cores of one slot (at least 1). */
export function slotCores(w: { cpuCores: number; slots: number }): number {
  return Math.max(1, Math.floor(w.cpuCores / Math.max(1, w.slots)));
}

/** A task's device count (requirements.devices), 1 when it states none. */
export function devicesNeeded(requirements: unknown): number {
  const d = (requirements as { devices?: unknown } | null)?.devices;
  return typeof d === 'number' && Number.isInteger(d) && d > 0 ? d : 1;
}
