/**
 * The builtin planner's rules for splitting a run into shards (domain/jobs/shards.ts holds the spec
 * the plan carries, its validation and the merge; shardShapes.ts beside this file the other shapes):
 * a Monte-Carlo program's sample count (proposeShards) and a list flag's items (proposeSweep), each
 * with the checks that the work is independent and that a split pays for its adaptation check.
 * Pure: each proposal is a spec or why not, in words.
 */
import type { MergeField, ShardsSpec } from '../../../domain/jobs/shards.js';

/** The seed of shard i (0-based) of a run whose seed is `base`: distinct, reproducible, recorded in the plan. */
export function shardSeed(base: number, i: number): number {
  return base * 1000 + i + 1;
}

/** Splits `total` units into `n` near-equal sizes (the first ones one larger). */
export function splitSizes(total: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.floor(total / n) + (i < total % n ? 1 : 0));
}

/** Why a program's iterations are not independent (state carried between them), or null. Read from its source. */
export function carriedState(source: string): string | null {
  if (/\.backward\(|\boptim(izer)?\b|\.step\(\)/.test(source))
    return 'it is a training loop: each step updates the model the next step uses, so its iterations cannot run apart';
  // Inside a loop body (an indented line), a variable recomputed from its own previous value
  // other than by accumulating (`x = x + …` of a term without x, `hits += …`): the chain's state.
  for (const line of source.split('\n')) {
    const m = /^\s+([A-Za-z_]\w*)\s*(=|\*=|\/=|-=)\s*(.+)$/.exec(line);
    if (!m) continue;
    const [, name, op, rhs] = m;
    if (/,\s*$/.test(rhs!)) continue; // a keyword argument of a call spread over lines (`n=n,`)
    if (op === '-=' && !new RegExp(`\\b${name}\\b`).test(rhs!)) continue; // a running difference of fresh terms
    if (op !== '=')
      return `the variable \`${name}\` is carried from one iteration to the next (\`${line.trim()}\`), so later samples depend on earlier ones`;
    if (!new RegExp(`\\b${name}\\b`).test(rhs!)) continue;
    const rest = rhs!.replace(new RegExp(`^\\s*${name}\\s*\\+`), '');
    if (rest !== rhs && !new RegExp(`\\b${name}\\b`).test(rest)) continue; // x = x + term: a sum
    return `the variable \`${name}\` is carried from one iteration to the next (\`${line.trim()}\`), so later samples depend on earlier ones`;
  }
  return null;
}

/** The keys of the JSON object literal the program dumps (json.dump({...})), in order. */
export function dumpedKeys(source: string): string[] {
  // json.dump({...}) / json.dump(dict(...)), or json.dump(result, …) of a `result = {...}` built before.
  const named = /json\.dumps?\(\s*([A-Za-z_]\w*)\s*[,)]/.exec(source)?.[1];
  const re = named
    ? new RegExp(`\\b${named}\\s*=\\s*(?:dict\\(([^)]*)\\)|\\{([^}]*)\\})`)
    : /json\.dumps?\(\s*(?:dict\(([^)]*)\)|\{([^}]*)\})/;
  const m = re.exec(source);
  if (!m) return [];
  if (m[1] !== undefined) return [...m[1].matchAll(/([A-Za-z_]\w*)\s*=/g)].map((x) => x[1]!);
  return [...m[2]!.matchAll(/['"]([A-Za-z_]\w*)['"]\s*:/g)].map((x) => x[1]!);
}

/** Seconds one round of tasks costs beyond its work (lease, code download, interpreter start, output upload): an assumption, stated where it is used. */
export const ROUND_OVERHEAD_SEC = 10;

/**
 * Whether sharding pays for itself. The wall time of the work is `total` units unsharded; in
 * shards it is the adaptation check — the bounded workload unsharded, with its shards beside it
 * (one of them after it when no worker is left over) — then `total / shards`. The overhead of
 * each round of tasks counts only when the time of a unit is known (`unitSec`, e.g. from the
 * request); without it, work is compared with work. Sharding is refused when the check and the
 * overhead outweigh the time saved.
 */
export function costGain(o: {
  total: number;
  bounded: number;
  shards: number;
  workers: number;
  unit: string;
  unitSec?: number | null;
  rounds?: number;
}): { ok: boolean; words: string } {
  const n = o.shards;
  const check = o.bounded + (o.workers > n ? 0 : o.bounded / n);
  const saved = o.total - o.total / n;
  const r = (x: number) => Number(x.toPrecision(3));
  const rounds = o.rounds ?? 2;
  if (o.unitSec && o.unitSec > 0) {
    const cost = check * o.unitSec + rounds * ROUND_OVERHEAD_SEC;
    const gain = saved * o.unitSec;
    const words = `the check (${r(check)} ${o.unit}s of wall time, ~${r(check * o.unitSec)} s) and ${rounds} rounds of task overhead (~${ROUND_OVERHEAD_SEC} s each) cost ~${r(cost)} s; ${n} shards save ~${r(gain)} s of the ~${r(o.total * o.unitSec)} s unsharded run`;
    return { ok: gain >= cost, words };
  }
  const words = `the check costs about ${r(check)} ${o.unit}s of wall time (${o.bounded} unsharded, the same in ${n} shards beside it) and ${n} shards save about ${r(saved)} of the ${o.total} (the time of one ${o.unit} is not known, so the ~${ROUND_OVERHEAD_SEC} s overhead of each round of tasks is not weighed)`;
  return { ok: saved >= check, words };
}

export interface ShardProposal {
  spec: ShardsSpec | null;
  /** Why it is (or is not) split, in words, for the plan's summary. */
  reason: string;
}

/**
 * The builtin planner's rule for a Monte-Carlo program: a sample-count flag and a seed flag,
 * a JSON result whose keys say how to merge them (an estimate with its standard error and the
 * sample count), no state carried between iterations; the shard count from the compatible
 * workers online and the work size (at least `minPerShard` units each).
 */
export function proposeShards(input: {
  source: string;
  runner: string;
  args: string[];
  countFlag: string;
  seedFlag: string | null;
  total: number;
  baseSeed: number;
  resultFile: string | null;
  workers: number;
  minPerShard?: number;
  /** The count is the first positional argument (`python pi.py 1000000`), not a flag. */
  positional?: boolean;
  /** Seconds per sample, when the request says how long the run takes (costGain). */
  unitSec?: number | null;
}): ShardProposal {
  const no = (reason: string): ShardProposal => ({ spec: null, reason });
  const carried = carriedState(input.source);
  if (carried) return no(`Not split into shards: ${carried}.`);
  if (!input.seedFlag)
    return no(`Not split into shards: the program has no seed flag, so shards could not be given distinct, reproducible random streams.`);
  if (!input.resultFile) return no('Not split into shards: the program writes no JSON result file under outputs/ to merge.');
  const keys = dumpedKeys(input.source);
  const countKey = keys.find((k) => /^(n|samples|n_samples|num_samples|trials|n_trials|paths|n_paths|count)$/.test(k));
  const seKey = keys.find((k) => /^(stderr|se|std_err|standard_error|sem)$|_(stderr|se)$/.test(k));
  const fields: MergeField[] = [];
  for (const key of keys) {
    if (key === countKey) fields.push({ name: key, how: 'sum', check: 'exact' });
    else if (key === seKey) fields.push({ name: key, how: 'combined-stderr', weight: countKey, check: 'none' });
    else if (/^(hits|inside|successes|accepted|events|n_\w+|\w+_count)$/.test(key)) fields.push({ name: key, how: 'sum', check: 'none' });
    else if (/(estimate|mean|price|value|pi|prob|probability|expectation)$/.test(key))
      fields.push({ name: key, how: 'weighted-mean', weight: countKey, stderr: seKey, check: 'within-k-se' });
    else if (key === 'seed')
      continue; // each shard has its own; the merged result has none
    else return no(`Not split into shards: no merge rule is known for the result field \`${key}\` of ${input.resultFile}.`);
  }
  if (!countKey || !seKey || !fields.some((f) => f.check === 'within-k-se'))
    return no(
      `Not split into shards: ${input.resultFile} must report the sample count and an estimate with its standard error for the merged estimate to be checked (found ${keys.join(', ') || 'no keys'}).`,
    );
  const per = input.minPerShard ?? 1000;
  const count = Math.min(input.workers, Math.floor(input.total / per), 64);
  if (count < 2)
    return no(
      input.workers < 2
        ? `Not split into shards: ${input.workers} compatible worker online, so one run is as fast.`
        : `Not split into shards: ${input.total} ${input.countFlag.replace(/^-+/, '')} is too little work to split (under ${per} each).`,
    );
  const command = (samples: number, seed: number) => {
    const out = [...input.args];
    const set = (flag: string, value: string) => {
      if (flag === input.countFlag && input.positional) return void (out[0] = value);
      const i = out.indexOf(flag);
      if (i >= 0) out[i + 1] = value;
      else out.push(flag, value);
    };
    set(input.countFlag, String(samples));
    set(input.seedFlag!, String(seed));
    return [input.runner, ...out].join(' ');
  };
  const seeds = Array.from({ length: count }, (_, i) => shardSeed(input.baseSeed, i));
  const sizes = splitSizes(input.total, count);
  const bounded = Math.min(input.total, Math.max(2000 * count, 4000));
  const pays = costGain({ total: input.total, bounded, shards: count, workers: input.workers, unit: 'sample', unitSec: input.unitSec });
  if (!pays.ok) return no(`Not split into shards: it does not pay: ${pays.words}.`);
  const bSizes = splitSizes(bounded, count);
  return {
    reason: `Split into ${count} shards of about ${sizes[0]} ${input.countFlag.replace(/^-+/, '')} (one per compatible worker online), each with its own seed (${seeds.join(', ')}): the samples are independent, so the merged estimate is the sample-weighted mean of the shards' estimates and its standard error combines theirs. Checked first on ${bounded} samples against the unsharded program (the estimate within 4 standard errors, the sample count exact).`,
    spec: {
      why: `Independent samples: ${input.countFlag} counts draws that do not depend on each other (no state carried between iterations); the seed flag ${input.seedFlag} gives each shard its own stream.`,
      unit: 'sample',
      total: input.total,
      shards: sizes.map((size, i) => ({ command: command(size, seeds[i]!), size, seed: seeds[i]! })),
      check: { original: command(bounded, input.baseSeed), shards: bSizes.map((s, i) => command(s, seeds[i]!)), timeoutSec: 900 },
      merge: { file: input.resultFile, fields, k: 4 },
      required: false,
    },
  };
}

/** A flag that takes a list (`nargs='+'`/`'*'`) with a literal default list: what a sweep loops over. */
export function sweepFlag(source: string): { flag: string; values: string[] } | null {
  for (const m of source.matchAll(/add_argument\(\s*["'](--[\w-]+)["']([^)]*)\)/g)) {
    if (!/nargs\s*=\s*["'][+*]["']/.test(m[2]!)) continue;
    const d = /default\s*=\s*\[([^\]]*)\]/.exec(m[2]!);
    const values = d
      ? d[1]!
          .split(',')
          .map((v) => v.trim().replace(/^(['"])(.*)\1$/, '$2'))
          .filter(Boolean)
      : [];
    if (values.length && values.every((v) => /^[\w.+-]+$/.test(v))) return { flag: m[1]!, values };
  }
  return null;
}

/**
 * The builtin planner's rule for a sweep: a list flag (seeds, configs) whose items run
 * independently, and a JSON result with the list of per-item results (concatenated) and
 * optionally a count (summed); both checked exactly. Each shard gets a contiguous slice of
 * the list; the check runs the first item per shard unsharded and sharded.
 */
export function proposeSweep(input: {
  source: string;
  runner: string;
  args: string[];
  flag: string;
  values: string[];
  resultFile: string | null;
  workers: number;
  unitSec?: number | null;
}): ShardProposal {
  const no = (reason: string): ShardProposal => ({ spec: null, reason });
  const carried = carriedState(input.source);
  if (carried) return no(`Not split into shards: ${carried}.`);
  if (!input.resultFile) return no('Not split into shards: the program writes no JSON result file under outputs/ to merge.');
  const fields: MergeField[] = [];
  for (const key of dumpedKeys(input.source)) {
    if (/^(results|runs|rows|records|items)$/.test(key)) fields.push({ name: key, how: 'concat', check: 'exact' });
    else if (/^(n|count|n_runs|n_items)$/.test(key)) fields.push({ name: key, how: 'sum', check: 'exact' });
    else return no(`Not split into shards: no merge rule is known for the result field \`${key}\` of ${input.resultFile}.`);
  }
  if (!fields.some((f) => f.how === 'concat'))
    return no(`Not split into shards: ${input.resultFile} has no list of per-item results to concatenate.`);
  const count = Math.min(input.workers, input.values.length, 64);
  if (count < 2)
    return no(
      input.workers < 2
        ? `Not split into shards: ${input.workers} compatible worker online, so one run is as fast.`
        : `Not split into shards: ${input.flag} has one value.`,
    );
  const pays = costGain({
    total: input.values.length,
    bounded: count,
    shards: count,
    workers: input.workers,
    unit: 'item',
    unitSec: input.unitSec,
  });
  if (!pays.ok) return no(`Not split into shards: it does not pay: ${pays.words}.`);
  const command = (values: string[]) => [input.runner, ...input.args, input.flag, ...values].join(' ');
  const sizes = splitSizes(input.values.length, count);
  const slices = sizes.map((n, i) =>
    input.values.slice(
      sizes.slice(0, i).reduce((a, b) => a + b, 0),
      sizes.slice(0, i).reduce((a, b) => a + b, 0) + n,
    ),
  );
  const firsts = slices.map((s) => s[0]!);
  return {
    reason: `Split the sweep over ${input.flag} (${input.values.join(', ')}) into ${count} shards (one per compatible worker online): each item runs on its own, so the merged result is the shards' lists concatenated in order. Checked first on ${firsts.join(', ')}: one run against one shard each, exactly equal.`,
    spec: {
      why: `A sweep: the items of ${input.flag} run independently of each other (no state carried between them).`,
      unit: 'item',
      total: input.values.length,
      shards: slices.map((s) => ({ command: command(s), size: s.length })),
      check: { original: command(firsts), shards: firsts.map((v) => command([v])), timeoutSec: 900 },
      merge: { file: input.resultFile, fields },
      required: false,
    },
  };
}
