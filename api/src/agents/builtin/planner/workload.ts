/**
 * How long a run is and its bounded form, for the rules that need a shorter run of the same command:
 * the smoke run, the preparation's reference workload, a sweep's and a shard split's checks.
 */
import type { ArgFlag, EntryPoint } from '../../planner/analyzeProject.js';
import { flagName, flagValue, setFlag } from './flags.js';

/** Flags that set a run's length (epochs, steps, iterations), by their normalized name. */
export const RUN_LENGTH_RE = /^(num-|max-)?(epochs?|steps|iters|iterations)$/;

export interface RunScale {
  unit: string;
  bounded: number;
  full: number;
}

/**
 * The entry point's run-length flag (epochs, steps/iterations, samples/trials) and the full
 * run's value of it: what the command passes (`--epochs 20`, `--max_iters=200`), else the
 * config file's setting, else the flag's default. Null when there is none or its value is unknown.
 */
export function runLength(
  entry: EntryPoint,
  args: string[],
  settings: Record<string, string>,
): { flag: ArgFlag; unit: string; full: number } | null {
  for (const f of entry.flags) {
    const m = /^(?:num-|max-|n-)?(epochs?|steps|iters|iterations|samples|trials|paths)$/.exec(flagName(f));
    if (!m) continue;
    const raw = flagValue(args, f.flag) ?? settings[f.flag.replace(/^--/, '')] ?? f.default;
    const full = Number(raw);
    if (!Number.isInteger(full) || full <= 0) continue;
    return {
      flag: f,
      unit: /^epoch/.test(m[1]!) ? 'epoch' : /^(steps|iters|iterations)$/.test(m[1]!) ? 'step' : m[1]!.replace(/s$/, ''),
      full,
    };
  }
  return null;
}

/** The scale of boundedCommand's workload (1 epoch, 20 steps, 1000 samples) against the full run. */
export function boundedScale(entry: EntryPoint, args: string[], settings: Record<string, string>): RunScale | undefined {
  const rl = runLength(entry, args, settings);
  if (!rl) return undefined;
  return { unit: rl.unit, bounded: rl.unit === 'epoch' ? 1 : rl.unit === 'step' ? 20 : 1000, full: rl.full };
}

/**
 * The bounded workload of a preparation run: the same command with the smallest sensible
 * workload flags (one epoch, a few steps, few samples) and a fixed seed. Flags the entry
 * point does not have are not invented: without any, the bounded workload is the full command.
 */
export function boundedCommand(entry: EntryPoint, args: string[], runner: string): string {
  return [runner, ...boundedArgs(entry, args)].join(' ');
}

/** The arguments of the bounded workload (see boundedCommand). */
export function boundedArgs(entry: EntryPoint, args: string[]): string[] {
  let out = args;
  const set = (flag: string, value: string) => (out = setFlag(out, [flag], value, entry.cli === 'configurator'));
  for (const f of entry.flags) {
    const name = f.flag.replace(/^--/, '').replace(/_/g, '-');
    if (/^(num-)?epochs?$/.test(name)) set(f.flag, '1');
    else if (/^(num-|max-)?(steps|iters|iterations)$/.test(name)) set(f.flag, '20');
    else if (/^(num-|n-)?(samples|trials|paths)$/.test(name)) set(f.flag, '1000');
    else if (name === 'seed') set(f.flag, '0');
  }
  return out;
}

/** Smoke runs do about this share of the full run (at least the minimum of their unit). */
const SMOKE_SHARE = 1 / 20;

/**
 * The smoke run (docs/architecture.md §4, "Smoke run"): the full command with its run length
 * cut to a small share — 2 epochs (two, so progress metrics give a time per epoch), 1/20 of
 * the steps or samples with a floor — and the scale that turns its timing into an estimate of
 * the full run. None when the entry point has no run-length flag with a known value, or when
 * the cut would not be smaller than the run itself (a tiny job needs no smoke run).
 */
export function smokeWorkload(
  entry: EntryPoint,
  args: string[],
  runner: string,
  settings: Record<string, string>,
): { command: string; timeoutSec: number; scale: RunScale } | null {
  const rl = runLength(entry, args, settings);
  if (!rl) return null;
  const floor = rl.unit === 'epoch' ? 2 : rl.unit === 'step' ? 20 : 1000;
  const bounded = rl.unit === 'epoch' ? 2 : Math.max(floor, Math.ceil(rl.full * SMOKE_SHARE));
  if (bounded >= rl.full) return null;
  const out = setFlag(args, [rl.flag.flag], String(bounded), entry.cli === 'configurator');
  return { command: [runner, ...out].join(' '), timeoutSec: 1800, scale: { unit: rl.unit, bounded, full: rl.full } };
}
