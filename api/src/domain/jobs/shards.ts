/**
 * Adaptation by sharding (docs/architecture.md §4 "adaptation"): independent work —
 * a Monte-Carlo estimate with a sample count, a sweep over seeds — split into shards that
 * run the user's program unchanged through its own flags, each with its own deterministic
 * seed, and an explicit merge of their result files. Pure: the plan's spec and its validation,
 * the merge of result fields, the check of a merged result against the unsharded one. The
 * builtin planner's rules that propose a split are agents/builtin/planner/proposeShards.ts and
 * shardShapes.ts; the job side (tasks, records) is shardRun.ts, the merge of files shardMerge.ts.
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
    .describe(
      'sum (counts), mean (plain average), weighted-mean (an estimate weighted by `weight`), combined-stderr (the standard error of a weighted mean: sqrt(Σ w²·se²)/Σ w), concat (lists).',
    ),
  weight: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe("weighted-mean / combined-stderr: the key holding each shard's weight (its sample count)."),
  stderr: z.string().min(1).max(100).optional().describe('within-k-se: the key holding the standard error of this field.'),
  check: z
    .enum(MERGE_CHECKS)
    .describe(
      'How the merged value is compared with the unsharded run: exact (counts, lists), close (equal within a relative 1e-9: a weighted mean of exact per-shard means), within-k-se (Monte-Carlo estimates), none (a random count).',
    ),
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
          command: z
            .string()
            .min(1)
            .max(2000)
            .describe("The shard's command: the program's own flags, its share of the units and its seed."),
          size: z.number().int().positive().describe('Units this shard does.'),
          seed: z.number().int().optional().describe('Its seed, derived deterministically from the plan (recorded).'),
          range: z
            .array(z.number().int().min(0))
            .length(2)
            .optional()
            .describe('Its slice of the inputs or items, [start, end) in sorted order (batches, driver loops, dataset ranges).'),
        }),
      )
      .min(2)
      .max(64),
    check: z
      .object({
        original: z.string().min(1).max(2000).describe('The unsharded bounded workload (fixed seed).'),
        shards: z
          .array(z.string().min(1).max(2000))
          .min(2)
          .max(64)
          .describe('The same bounded workload split like the full run (one command per shard).'),
        timeoutSec: z.number().int().min(10).max(86400).optional(),
      })
      .describe('The adaptation check: merged bounded shards against the unsharded bounded run.'),
    transformation: z
      .enum(SHARD_TRANSFORMATIONS)
      .optional()
      .describe(
        "How shards get their share (default flags): the program's own flags; slice — `python -m chatgpu.shard files DIR a b` / `rows CSV a b` keeps only the shard's inputs in its own copy before the unchanged command; driver — `python -m chatgpu.shard loop FILE LINE a b` runs the file with its top-level loop over items [a, b) only.",
      ),
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
      file: z
        .string()
        .min(1)
        .max(500)
        .describe(
          'What is merged (under outputs/): the JSON or CSV result file, or the folder of per-input result files (kind files); for a script, the file it writes, compared with the same file of the unsharded run.',
        ),
      fields: z.array(MergeField).max(50).describe('kind fields: the merge of each top-level key (empty for other kinds).'),
      k: z
        .number()
        .positive()
        .max(10)
        .optional()
        .describe('within-k-se: how many combined standard errors the estimates may differ (default 4).'),
      script: z
        .object({
          path: z.string().min(1).max(500).describe("The project's merge program (e.g. merge.py)."),
          command: z
            .string()
            .min(1)
            .max(2000)
            .describe(
              "Its command: it reads the shards' results under shards/shard-<i>/ (each shard's outputs at their paths) and writes `file`.",
            ),
        })
        .optional(),
      rtol: z
        .number()
        .min(0)
        .max(1)
        .optional()
        .describe('kind script: numbers of a JSON result may differ by this relative tolerance (default 0: byte-equal).'),
    }),
    required: z
      .boolean()
      .describe(
        'Required: the unsharded run cannot fit one worker (a failed check stops the job). Optional: a failed check runs it unsharded.',
      ),
  })
  .describe('Only for independent work (samples, trials, seeds): shards, their bounded check and the merge.');
export type ShardsSpec = z.infer<typeof ShardsSchema>;

/** What is wrong with a shards spec beyond its shape (submit_plan refuses it), or null. */
export function shardsProblem(
  spec: ShardsSpec,
  plan: { outputs: string[]; smoke?: unknown; preparation?: unknown; before?: unknown[]; service?: unknown },
): string | null {
  if (plan.smoke)
    return 'A sharded plan needs no smoke run: the adaptation check runs the bounded workload, sharded and unsharded, first. Set `smoke` to null.';
  if (plan.preparation) return 'Sharding together with preparation steps (a migration, optimizations) is not supported yet: choose one.';
  if (plan.before?.length) return 'Sharding after pipeline steps (`before`) is not supported yet.';
  if (plan.service) return 'A service cannot be sharded.';
  if (spec.check.shards.length !== spec.shards.length)
    return `The check has ${spec.check.shards.length} shard commands but the run has ${spec.shards.length} shards: split the bounded workload the same way.`;
  const sum = spec.shards.reduce((s, x) => s + x.size, 0);
  if (sum !== spec.total) return `The shards' sizes add up to ${sum}, not the total of ${spec.total} ${spec.unit}s.`;
  const seeds = spec.shards.map((s) => s.seed).filter((s) => s !== undefined && s !== null);
  if (new Set(seeds).size !== seeds.length)
    return 'Two shards have the same seed: their samples would repeat. Derive a distinct seed per shard.';
  if (new Set(spec.shards.map((s) => s.command)).size !== spec.shards.length)
    return 'Two shards run the same command: each needs its own share or seed.';
  if (
    !spec.merge.file.startsWith('outputs/') ||
    !plan.outputs.some((o) => spec.merge.file === o || spec.merge.file.startsWith(`${o.replace(/\/$/, '')}/`))
  )
    return `The merged file ${spec.merge.file} must be one of the outputs (under outputs/).`;
  const kind = spec.merge.kind ?? 'fields';
  const under = (p: string, dir: string) => p === dir.replace(/\/$/, '') || p.startsWith(`${dir.replace(/\/$/, '')}/`);
  if (kind !== 'fields' && spec.merge.fields.length) return `A merge of kind ${kind} has no fields: leave \`fields\` empty.`;
  if (kind === 'fields' && !spec.merge.fields.length) return 'A field-by-field merge needs its fields.';
  if (kind === 'list' && !spec.merge.file.endsWith('.json'))
    return `A list merge concatenates a JSON list: ${spec.merge.file} is not a .json file.`;
  if (kind === 'rows' && !/\.(csv|tsv)$/.test(spec.merge.file))
    return `A rows merge concatenates a CSV: ${spec.merge.file} is not a .csv file.`;
  if (kind === 'script' && !spec.merge.script) return "A script merge needs `script`: the project's merge program and its command.";
  if (kind !== 'script' && spec.merge.script) return `A merge of kind ${kind} runs no script: set kind script, or drop \`script\`.`;
  if (spec.merge.script && !spec.merge.script.command.includes(spec.merge.script.path))
    return `The merge command \`${spec.merge.script.command}\` does not run ${spec.merge.script.path}.`;
  if (spec.inputs) {
    const ranges = spec.shards.map((s) => s.range);
    if (ranges.some((r) => !r)) return 'Shards of a batch of inputs each need their `range` of the inputs.';
    let at = 0;
    for (const [i, r] of (ranges as [number, number][]).entries()) {
      if (r[0] !== at || r[1] <= r[0])
        return `Shard ${i + 1}'s range [${r[0]}, ${r[1]}) does not start where the previous one ended (${at}): the shards must cover the inputs once, in order.`;
      if (r[1] - r[0] !== spec.shards[i]!.size)
        return `Shard ${i + 1}'s range [${r[0]}, ${r[1]}) holds ${r[1] - r[0]} inputs, not its size ${spec.shards[i]!.size}.`;
      at = r[1];
    }
    if (at !== spec.inputs.count)
      return `The shards' ranges end at ${at}, not at the ${spec.inputs.count} ${spec.inputs.kind} of ${spec.inputs.path}.`;
    if (kind === 'files' && under(spec.inputs.path, spec.merge.file))
      return `The merged folder ${spec.merge.file} holds the inputs ${spec.inputs.path}.`;
  }
  const names = spec.merge.fields.map((f) => f.name);
  if (new Set(names).size !== names.length) return 'A merge field is listed twice.';
  for (const f of spec.merge.fields) {
    if ((f.how === 'weighted-mean' || f.how === 'combined-stderr') && !f.weight)
      return `Merge field ${f.name}: ${f.how} needs \`weight\` (the key of each shard's sample count).`;
    if (f.weight && !names.includes(f.weight)) return `Merge field ${f.name}: its weight ${f.weight} is not a merged field.`;
    if (f.check === 'within-k-se' && (!f.stderr || !names.includes(f.stderr)))
      return `Merge field ${f.name}: within-k-se needs \`stderr\`, the merged field that holds its standard error.`;
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
export function checkMerged(
  spec: Pick<ShardsSpec, 'merge'>,
  merged: Json,
  original: Json,
): { ok: boolean; fields: FieldCheck[]; report: string } {
  const k = spec.merge.k ?? 4;
  const fields: FieldCheck[] = spec.merge.fields.map((f) => {
    const m = merged[f.name];
    const o = original[f.name];
    if (f.check === 'none') return { name: f.name, check: f.check, merged: m, original: o, ok: true };
    if (f.check === 'exact') return { name: f.name, check: f.check, merged: m, original: o, ok: JSON.stringify(m) === JSON.stringify(o) };
    if (f.check === 'close')
      return {
        name: f.name,
        check: f.check,
        merged: m,
        original: o,
        ok: typeof m === 'number' && typeof o === 'number' && Math.abs(m - o) <= CLOSE_RTOL * Math.max(Math.abs(m), Math.abs(o)),
      };
    const se = [merged[f.stderr!], original[f.stderr!]];
    if (typeof m !== 'number' || typeof o !== 'number' || se.some((s) => typeof s !== 'number'))
      return { name: f.name, check: f.check, merged: m, original: o, ok: false };
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
  return {
    ok,
    fields,
    report: `${ok ? 'The merged result agrees with the unsharded run' : 'The merged result disagrees with the unsharded run'}: ${words.join('; ')}.`,
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
