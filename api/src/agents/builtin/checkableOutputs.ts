/**
 * The builtin planner's rule for marking a run's outputs checkable (domain/trust): a result that
 * is the same on any honest worker, so another owner's worker can re-run it and compare.
 *
 *   CPU numerics only (python, torch-cpu): GPU kernels need not be bitwise reproducible
 *   no preparation (its own checks compare runs) and no hosted service (no result to compare)
 *   randomness, if any, seeded: a seed flag in the command, a seed call or a generator made with a
 *   seed (random.Random(seed), default_rng(seed)) in the entry's source
 *   no clock in the results: time.time / datetime.now / perf_counter written out would differ
 *
 * Tolerances: pure Python repeats its arithmetic exactly (relative 1e-9 leaves room for a
 * different libm); PyTorch on CPU may sum in another order on another core count (1e-4).
 * A request that says the results are not reproducible wins: no mark.
 */
import type { PlanInput } from '../../domain/jobs/planSchema.js';

const RANDOM =
  /\b(import random|from random import|np\.random|numpy\.random|torch\.rand|torch\.randn|torch\.randint|random\.\w+\(|default_rng)/;
const SEEDED =
  /\b(random\.seed|np\.random\.seed|numpy\.random\.seed|manual_seed|default_rng\(\s*\w|random\.Random\(\s*\w|RandomState\(\s*\w)/;
const CLOCK = /\b(time\.time|time\.perf_counter|datetime\.now|datetime\.utcnow|time\.monotonic)\s*\(/;

export function checkableOutputs(o: {
  source: string;
  command: string;
  workload: string;
  request: string;
  preparation: boolean;
  service: boolean;
}): PlanInput['checkable'] | null {
  if (o.workload !== 'python' && o.workload !== 'torch-cpu') return null;
  if (o.preparation || o.service) return null;
  if (/\b(not|non)[ -]?(reproducible|deterministic)\b/i.test(o.request)) return null;
  if (RANDOM.test(o.source) && !SEEDED.test(o.source) && !/--seed\b/.test(o.command)) return null;
  // A clock read is fine for logs and metrics streamed while running; not in what is written out.
  if (CLOCK.test(o.source) && /json\.dump|\.write\(|np\.save|torch\.save/.test(o.source)) return null;
  return { compare: ['outputs'], tolerance: o.workload === 'python' ? { rtol: 1e-9, atol: 1e-12 } : { rtol: 1e-4, atol: 1e-6 } };
}
