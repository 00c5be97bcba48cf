/**
 * Adaptation by sharding (issue 14; docs/architecture.md §4 "adaptation"): independent work —
 * a Monte-Carlo estimate with a sample count, a sweep over seeds — split into shards that
 * run the user's program unchanged through its own flags, each with its own deterministic
 * seed, and an explicit merge of their result files. Pure: the plan's spec, the merge, the
 * check of a merged result against the unsharded one, the planner's rule that proposes a
 * split (or says why not). The job side (tasks, records) is shardRun.ts.
 */
import { z } from 'zod';

export const MERGE_RULES = ['sum', 'mean', 'weighted-mean', 'combined-stderr', 'concat'] as const;
export const MERGE_CHECKS = ['exact', 'close', 'within-k-se', 'none'] as const;
/**
 * How the shards' results become one: `fields` a JSON object merged field by field; `list` a
 * JSON list concatenated in shard order; `rows` a CSV whose header is kept once and whose rows
 * are concatenated in shard order; `files` the union of the files under a folder (per-input
 * results); `script` the user's own merge program, run on a worker after the shards (a MERGE task).
 */
export const MERGE_KINDS = ['fields', 'list', 'rows', 'files', 'script'] as const;
export type MergeKind = (typeof MERGE_KINDS)[number];
/** How each shard gets its share: the program's own flags, a slice of the inputs kept in the shard's copy (chatgpu.shard files/rows), or the generated driver that runs a loop on a slice (chatgpu.shard loop). */
export const SHARD_TRANSFORMATIONS = ['flags', 'slice', 'driver'] as const;

const MergeField = z.object({
  name: z.string().min(1).max(100).describe('A top-level key of the result file.'),
  how: z
    .enum(MERGE_RULES)
    .describe('sum (counts), mean (plain average), weighted-mean (an estimate weighted by `weight`), combined-stderr (the standard error of a weighted mean: sqrt(Σ w²·se²)/Σ w), concat (lists).'),
  weight: z.string().min(1).max(100).optional().describe('weighted-mean / combined-stderr: the key holding each shard\'s weight (its sample count).'),
  stderr: z.string().min(1).max(100).optional().describe('within-k-se: the key holding the standard error of this field.'),
  check: z.enum(MERGE_CHECKS).describe('How the merged value is compared with the unsharded run: exact (counts, lists), close (equal within a relative 1e-9: a weighted mean of exact per-shard means), within-k-se (Monte-Carlo estimates), none (a random count).'),
});
export type MergeField = z.infer<typeof MergeField>;

export const ShardsSchema = z
  .object({
    why: z.string().min(1).max(1000).describe('Why the work is independent (what is split, why no state crosses shards).'),
    unit: z.string().min(1).max(40).describe('What is split: sample, trial, seed, config, …'),
    total: z.number().int().positive().describe('How many units the full run does.'),
    shards: z
      .array(
        z.object({
          command: z.string().min(1).max(2000).describe("The shard's command: the program's own flags, its share of the units and its seed."),
          size: z.number().int().positive().describe('Units this shard does.'),
          seed: z.number().int().optional().describe('Its seed, derived deterministically from the plan (recorded).'),
          range: z.array(z.number().int().min(0)).length(2).optional().describe('Its slice of the inputs or items, [start, end) in sorted order (batches, driver loops, dataset ranges).'),
        }),
      )
      .min(2)
      .max(64),
    check: z
      .object({
        original: z.string().min(1).max(2000).describe('The unsharded bounded workload (fixed seed).'),
        shards: z.array(z.string().min(1).max(2000)).min(2).max(64).describe('The same bounded workload split like the full run (one command per shard).'),
        timeoutSec: z.number().int().min(10).max(86400).optional(),
      })
      .describe('The adaptation check: merged bounded shards against the unsharded bounded run.'),
    transformation: z.enum(SHARD_TRANSFORMATIONS).optional().describe('How shards get their share (default flags): the program\'s own flags; slice — `python -m chatgpu.shard files DIR a b` / `rows CSV a b` keeps only the shard\'s inputs in its own copy before the unchanged command; driver — `python -m chatgpu.shard loop FILE LINE a b` runs the file with its top-level loop over items [a, b) only.'),
    inputs: z
      .object({
        kind: z.enum(['files', 'rows']),
        path: z.string().min(1).max(500).describe('The folder of input files, or the CSV whose rows are the inputs.'),
        count: z.number().int().positive().describe('Files or rows in the full run.'),
      })
      .optional()
      .describe('A batch of independent inputs (files in a folder, rows of a CSV) split across the shards.'),
    merge: z.object({
      kind: z.enum(MERGE_KINDS).optional().describe('fields (default), list, rows, files or script (see MERGE_KINDS).'),
      file: z.string().min(1).max(500).describe('What is merged (under outputs/): the JSON or CSV result file, or the folder of per-input result files (kind files); for a script, the file it writes, compared with the same file of the unsharded run.'),
      fields: z.array(MergeField).max(50).describe('kind fields: the merge of each top-level key (empty for other kinds).'),
      k: z.number().positive().max(10).optional().describe('within-k-se: how many combined standard errors the estimates may differ (default 4).'),
      script: z
        .object({
          path: z.string().min(1).max(500).describe("The project's merge program (e.g. merge.py)."),
          command: z.string().min(1).max(2000).describe("Its command: it reads the shards' results under shards/shard-<i>/ (each shard's outputs at their paths) and writes `file`."),
        })
        .optional(),
      rtol: z.number().min(0).max(1).optional().describe('kind script: numbers of a JSON result may differ by this relative tolerance (default 0: byte-equal).'),
    }),
    required: z.boolean().describe('Required: the unsharded run cannot fit one worker (a failed check stops the job). Optional: a failed check runs it unsharded.'),
  })
  .describe('Only for independent work (samples, trials, seeds): shards, their bounded check and the merge.');
export type ShardsSpec = z.infer<typeof ShardsSchema>;

/** What is wrong with a shards spec beyond its shape (submit_plan refuses it), or null. */
export function shardsProblem(spec: ShardsSpec, plan: { outputs: string[]; smoke?: unknown; preparation?: unknown; before?: unknown[]; service?: unknown }): string | null {
  if (plan.smoke) return 'A sharded plan needs no smoke run: the adaptation check runs the bounded workload, sharded and unsharded, first. Set `smoke` to null.';
  if (plan.preparation) return 'Sharding together with preparation steps (a migration, optimizations) is not supported yet: choose one.';
  if (plan.before?.length) return 'Sharding after pipeline steps (`before`) is not supported yet.';
  if (plan.service) return 'A service cannot be sharded.';
  if (spec.check.shards.length !== spec.shards.length) return `The check has ${spec.check.shards.length} shard commands but the run has ${spec.shards.length} shards: split the bounded workload the same way.`;
  const sum = spec.shards.reduce((s, x) => s + x.size, 0);
  if (sum !== spec.total) return `The shards' sizes add up to ${sum}, not the total of ${spec.total} ${spec.unit}s.`;
  const seeds = spec.shards.map((s) => s.seed).filter((s) => s !== undefined && s !== null);
  if (new Set(seeds).size !== seeds.length) return 'Two shards have the same seed: their samples would repeat. Derive a distinct seed per shard.';
  if (new Set(spec.shards.map((s) => s.command)).size !== spec.shards.length) return 'Two shards run the same command: each needs its own share or seed.';
  if (!spec.merge.file.startsWith('outputs/') || !plan.outputs.some((o) => spec.merge.file === o || spec.merge.file.startsWith(`${o.replace(/\/$/, '')}/`)))
    return `The merged file ${spec.merge.file} must be one of the outputs (under outputs/).`;
  const kind = spec.merge.kind ?? 'fields';
  const under = (p: string, dir: string) => p === dir.replace(/\/$/, '') || p.startsWith(`${dir.replace(/\/$/, '')}/`);
  if (kind !== 'fields' && spec.merge.fields.length) return `A merge of kind ${kind} has no fields: leave \`fields\` empty.`;
  if (kind === 'fields' && !spec.merge.fields.length) return 'A field-by-field merge needs its fields.';
  if (kind === 'list' && !spec.merge.file.endsWith('.json')) return `A list merge concatenates a JSON list: ${spec.merge.file} is not a .json file.`;
  if (kind === 'rows' && !/\.(csv|tsv)$/.test(spec.merge.file)) return `A rows merge concatenates a CSV: ${spec.merge.file} is not a .csv file.`;
  if (kind === 'script' && !spec.merge.script) return 'A script merge needs `script`: the project\'s merge program and its command.';
  if (kind !== 'script' && spec.merge.script) return `A merge of kind ${kind} runs no script: set kind script, or drop \`script\`.`;
  if (spec.merge.script && !spec.merge.script.command.includes(spec.merge.script.path)) return `The merge command \`${spec.merge.script.command}\` does not run ${spec.merge.script.path}.`;
  if (spec.inputs) {
    const ranges = spec.shards.map((s) => s.range);
    if (ranges.some((r) => !r)) return 'Shards of a batch of inputs each need their `range` of the inputs.';
    let at = 0;
    for (const [i, r] of (ranges as [number, number][]).entries()) {
      if (r[0] !== at || r[1] <= r[0]) return `Shard ${i + 1}'s range [${r[0]}, ${r[1]}) does not start where the previous one ended (${at}): the shards must cover the inputs once, in order.`;
      if (r[1] - r[0] !== spec.shards[i]!.size) return `Shard ${i + 1}'s range [${r[0]}, ${r[1]}) holds ${r[1] - r[0]} inputs, not its size ${spec.shards[i]!.size}.`;
      at = r[1];
    }
    if (at !== spec.inputs.count) return `The shards' ranges end at ${at}, not at the ${spec.inputs.count} ${spec.inputs.kind} of ${spec.inputs.path}.`;
    if (kind === 'files' && under(spec.inputs.path, spec.merge.file)) return `The merged folder ${spec.merge.file} holds the inputs ${spec.inputs.path}.`;
  }
  const names = spec.merge.fields.map((f) => f.name);
  if (new Set(names).size !== names.length) return 'A merge field is listed twice.';
  for (const f of spec.merge.fields) {
    if ((f.how === 'weighted-mean' || f.how === 'combined-stderr') && !f.weight) return `Merge field ${f.name}: ${f.how} needs \`weight\` (the key of each shard's sample count).`;
    if (f.weight && !names.includes(f.weight)) return `Merge field ${f.name}: its weight ${f.weight} is not a merged field.`;
    if (f.check === 'within-k-se' && (!f.stderr || !names.includes(f.stderr))) return `Merge field ${f.name}: within-k-se needs \`stderr\`, the merged field that holds its standard error.`;
  }
  return null;
}

type Json = Record<string, unknown>;

/** check `close`: a weighted mean of per-shard means equals the whole mean up to rounding. */
export const CLOSE_RTOL = 1e-9;

/** Merges the shards' result objects field by field; throws (in words) on a missing or mistyped field. */
export function mergeResults(fields: MergeField[], parts: Json[]): Json {
  const out: Json = {};
  const nums = (key: string) =>
    parts.map((p, i) => {
      const v = p[key];
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`shard ${i + 1}'s result has no number ${key}`);
      return v;
    });
  for (const f of fields) {
    if (f.how === 'concat') {
      out[f.name] = parts.flatMap((p, i) => {
        const v = p[f.name];
        if (!Array.isArray(v)) throw new Error(`shard ${i + 1}'s result has no list ${f.name}`);
        return v;
      });
      continue;
    }
    const xs = nums(f.name);
    if (f.how === 'sum') out[f.name] = xs.reduce((a, b) => a + b, 0);
    else if (f.how === 'mean') out[f.name] = xs.reduce((a, b) => a + b, 0) / xs.length;
    else {
      const ws = nums(f.weight!);
      const W = ws.reduce((a, b) => a + b, 0);
      if (!(W > 0)) throw new Error(`the weights ${f.weight} add up to ${W}`);
      out[f.name] =
        f.how === 'weighted-mean'
          ? xs.reduce((a, x, i) => a + x * ws[i]!, 0) / W
          : Math.sqrt(xs.reduce((a, se, i) => a + ws[i]! ** 2 * se ** 2, 0)) / W;
    }
  }
  return out;
}

export interface FieldCheck {
  name: string;
  check: MergeField['check'];
  merged: unknown;
  original: unknown;
  /** within-k-se: |merged − original| and k·sqrt(se_merged² + se_original²). */
  diff?: number;
  limit?: number;
  ok: boolean;
}

/** The merged bounded result against the unsharded bounded run, field by field, with a report in words. */
export function checkMerged(spec: Pick<ShardsSpec, 'merge'>, merged: Json, original: Json): { ok: boolean; fields: FieldCheck[]; report: string } {
  const k = spec.merge.k ?? 4;
  const fields: FieldCheck[] = spec.merge.fields.map((f) => {
    const m = merged[f.name];
    const o = original[f.name];
    if (f.check === 'none') return { name: f.name, check: f.check, merged: m, original: o, ok: true };
    if (f.check === 'exact') return { name: f.name, check: f.check, merged: m, original: o, ok: JSON.stringify(m) === JSON.stringify(o) };
    if (f.check === 'close') return { name: f.name, check: f.check, merged: m, original: o, ok: typeof m === 'number' && typeof o === 'number' && Math.abs(m - o) <= CLOSE_RTOL * Math.max(Math.abs(m), Math.abs(o)) };
    const se = [merged[f.stderr!], original[f.stderr!]];
    if (typeof m !== 'number' || typeof o !== 'number' || se.some((s) => typeof s !== 'number')) return { name: f.name, check: f.check, merged: m, original: o, ok: false };
    const diff = Math.abs(m - o);
    const limit = k * Math.sqrt((se[0] as number) ** 2 + (se[1] as number) ** 2);
    return { name: f.name, check: f.check, merged: m, original: o, diff, limit, ok: diff <= limit };
  });
  const show = (v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(6)).toString() : JSON.stringify(v)?.slice(0, 80));
  const words = fields
    .filter((f) => f.check !== 'none')
    .map((f) =>
      f.check === 'exact' || f.check === 'close'
        ? `${f.name}: merged ${show(f.merged)} ${f.ok ? '=' : '≠'} unsharded ${show(f.original)} (${f.check === 'exact' ? 'exact' : `within a relative ${CLOSE_RTOL}`})`
        : `${f.name}: merged ${show(f.merged)} vs unsharded ${show(f.original)}, |Δ| ${f.diff === undefined ? 'n/a' : show(f.diff)} ${f.ok ? '≤' : '>'} ${k} combined standard errors (${f.limit === undefined ? 'n/a' : show(f.limit)})`,
    );
  const ok = fields.every((f) => f.ok);
  return { ok, fields, report: `${ok ? 'The merged result agrees with the unsharded run' : 'The merged result disagrees with the unsharded run'}: ${words.join('; ')}.` };
}

// ── The planner's rule ──

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
  if (/\.backward\(|\boptim(izer)?\b|\.step\(\)/.test(source)) return 'it is a training loop: each step updates the model the next step uses, so its iterations cannot run apart';
  // Inside a loop body (an indented line), a variable recomputed from its own previous value
  // other than by accumulating (`x = x + …` of a term without x, `hits += …`): the chain's state.
  for (const line of source.split('\n')) {
    const m = /^\s+([A-Za-z_]\w*)\s*(=|\*=|\/=|-=)\s*(.+)$/.exec(line);
    if (!m) continue;
    const [, name, op, rhs] = m;
    if (/,\s*$/.test(rhs!)) continue; // a keyword argument of a call spread over lines (`n=n,`)
    if (op === '-=' && !new RegExp(`\\b${name}\\b`).test(rhs!)) continue; // a running difference of fresh terms
    if (op !== '=') return `the variable \`${name}\` is carried from one iteration to the next (\`${line.trim()}\`), so later samples depend on earlier ones`;
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
  const re = named ? new RegExp(`\\b${named}\\s*=\\s*(?:dict\\(([^)]*)\\)|\\{([^}]*)\\})`) : /json\.dumps?\(\s*(?:dict\(([^)]*)\)|\{([^}]*)\})/;
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
export function costGain(o: { total: number; bounded: number; shards: number; workers: number; unit: string; unitSec?: number | null; rounds?: number }): { ok: boolean; words: string } {
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
  if (!input.seedFlag) return no(`Not split into shards: the program has no seed flag, so shards could not be given distinct, reproducible random streams.`);
  if (!input.resultFile) return no('Not split into shards: the program writes no JSON result file under outputs/ to merge.');
  const keys = dumpedKeys(input.source);
  const countKey = keys.find((k) => /^(n|samples|n_samples|num_samples|trials|n_trials|paths|n_paths|count)$/.test(k));
  const seKey = keys.find((k) => /^(stderr|se|std_err|standard_error|sem)$|_(stderr|se)$/.test(k));
  const fields: MergeField[] = [];
  for (const key of keys) {
    if (key === countKey) fields.push({ name: key, how: 'sum', check: 'exact' });
    else if (key === seKey) fields.push({ name: key, how: 'combined-stderr', weight: countKey, check: 'none' });
    else if (/^(hits|inside|successes|accepted|events|n_\w+|\w+_count)$/.test(key)) fields.push({ name: key, how: 'sum', check: 'none' });
    else if (/(estimate|mean|price|value|pi|prob|probability|expectation)$/.test(key)) fields.push({ name: key, how: 'weighted-mean', weight: countKey, stderr: seKey, check: 'within-k-se' });
    else if (key === 'seed') continue; // each shard has its own; the merged result has none
    else return no(`Not split into shards: no merge rule is known for the result field \`${key}\` of ${input.resultFile}.`);
  }
  if (!countKey || !seKey || !fields.some((f) => f.check === 'within-k-se'))
    return no(`Not split into shards: ${input.resultFile} must report the sample count and an estimate with its standard error for the merged estimate to be checked (found ${keys.join(', ') || 'no keys'}).`);
  const per = input.minPerShard ?? 1000;
  const count = Math.min(input.workers, Math.floor(input.total / per), 64);
  if (count < 2) return no(input.workers < 2 ? `Not split into shards: ${input.workers} compatible worker online, so one run is as fast.` : `Not split into shards: ${input.total} ${input.countFlag.replace(/^-+/, '')} is too little work to split (under ${per} each).`);
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
    const values = d ? d[1]!.split(',').map((v) => v.trim().replace(/^(['"])(.*)\1$/, '$2')).filter(Boolean) : [];
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
export function proposeSweep(input: { source: string; runner: string; args: string[]; flag: string; values: string[]; resultFile: string | null; workers: number; unitSec?: number | null }): ShardProposal {
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
  if (!fields.some((f) => f.how === 'concat')) return no(`Not split into shards: ${input.resultFile} has no list of per-item results to concatenate.`);
  const count = Math.min(input.workers, input.values.length, 64);
  if (count < 2) return no(input.workers < 2 ? `Not split into shards: ${input.workers} compatible worker online, so one run is as fast.` : `Not split into shards: ${input.flag} has one value.`);
  const pays = costGain({ total: input.values.length, bounded: count, shards: count, workers: input.workers, unit: 'item', unitSec: input.unitSec });
  if (!pays.ok) return no(`Not split into shards: it does not pay: ${pays.words}.`);
  const command = (values: string[]) => [input.runner, ...input.args, input.flag, ...values].join(' ');
  const sizes = splitSizes(input.values.length, count);
  const slices = sizes.map((n, i) => input.values.slice(sizes.slice(0, i).reduce((a, b) => a + b, 0), sizes.slice(0, i).reduce((a, b) => a + b, 0) + n));
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

/** The merge in words, for the plan's steps and the job page. */
export function mergeWords(merge: ShardsSpec['merge']): string {
  switch (merge.kind ?? 'fields') {
    case 'script':
      return `\`${merge.script?.command ?? merge.script?.path ?? 'the merge script'}\` (a MERGE task on a worker) writes ${merge.file}`;
    case 'files':
      return `the union of the files under ${merge.file}`;
    case 'rows':
      return `the rows of ${merge.file} concatenated in shard order (one header)`;
    case 'list':
      return `the list in ${merge.file} concatenated in shard order`;
    default:
      return `${merge.file}: ${merge.fields.map((f) => `${f.name}: ${f.how}`).join(', ')}`;
  }
}
