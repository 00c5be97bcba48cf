/**
 * Thread counts for a task's numerical libraries that match its slot's share of the machine.
 *
 * OpenMP (PyTorch's intra-op pool, libgomp), OpenBLAS, MKL, BLIS, numexpr and Accelerate each start
 * one thread per core of the machine unless told otherwise. A worker that runs one task at a time
 * leaves them alone: the task has the whole machine, as when its owner runs it directly. A worker
 * with several slots runs that many tasks at once, and each would start a thread per core: N slots ×
 * C cores threads on C cores, which spin-wait and preempt each other (an OpenMP program on an
 * oversubscribed machine can run several times slower). Each task then gets cores ÷ slots threads
 * (at least one). A variable the task's own environment sets (the plan's, or the user's) wins.
 * Two NumPy loops at once on 2 cores: 3.59 s with one OpenBLAS thread each, 5.03 s with the default
 * two each (bench/threadsPerSlot.ts, 3 rounds, shared machine at load 5.9).
 */

/** The variables the common numerical libraries read for their thread count. */
export const THREAD_VARS = [
  'OMP_NUM_THREADS',
  'OPENBLAS_NUM_THREADS',
  'MKL_NUM_THREADS',
  'BLIS_NUM_THREADS',
  'NUMEXPR_NUM_THREADS',
  'VECLIB_MAXIMUM_THREADS',
] as const;

/**
 * The thread variables for a task on a worker with `cores` cores and `slots` slots; empty with one
 * slot. `taskEnv`: the task's own variables, which are kept.
 */
export function threadEnv(cores: number, slots: number, taskEnv: Record<string, string> = {}): Record<string, string> {
  if (!(slots > 1) || !(cores > 0)) return {};
  const perSlot = String(Math.max(1, Math.floor(cores / slots)));
  return Object.fromEntries(THREAD_VARS.filter((k) => taskEnv[k] === undefined).map((k) => [k, perSlot]));
}
