/**
 * Rule: adaptation by sharding. Work made of independent units — a Monte-Carlo sample count (a
 * flag or the first positional), a list flag's items, a batch of inputs (a folder's files, a
 * CSV's rows), an index range, a top-level loop over a literal — splits into shards across the
 * compatible workers online (proposeShards.ts, shardShapes.ts), or the plan says why not. Not for
 * a run that migrates, keeps a checkpoint or has steps before it; a split's adaptation check
 * replaces the smoke run. "One run" / "without sharding" in the request: not a question here.
 */
import type { EntryPoint } from '../../planner/analyzeProject.js';
import type { WorkerClass } from '../../../domain/workers/networkCapacity.js';
import { splitCsv } from '../../../domain/jobs/shardMerge.js';
import { flagName, flagValue } from './flags.js';
import { call, type PlannerRule } from './planning.js';
import { proposeShards, proposeSweep, sweepFlag } from './proposeShards.js';
import { MERGE_SCRIPT_RE } from './scriptRoles.js';
import { proposeBatch, proposeDriver, proposeRanges, readMergeScript, topLevelLoop, unitSeconds, type MergeScript } from './shardShapes.js';
import { runLength } from './workload.js';

export const sharding: PlannerRule = (p) => {
  const { entry, args, runner, uploaded, request, readCall, readOf } = p;
  const shardable = !(p.migrate || p.versionMigrate || p.toAmd || p.checkpoint || p.before.length);
  const shapes = shardable ? divisibleInputs(entry, args, uploaded, request) : null;
  for (const x of shapes?.reads ?? []) if (readCall(x)) return call('read_file', readCall(x)!);
  p.sharding = shardable
    ? shardingOf(
        entry,
        args,
        runner,
        p.configSettings,
        p.source,
        p.resultFiles,
        p.cap.classes,
        p.hardware.workload,
        request,
        shapes && { ...shapes, readOf },
      )
    : null;
  if (p.sharding?.spec) p.smoke = null;
  return undefined;
};

/** What a run might be split over, read from its flags and the upload; `reads` must be read first. */
interface Divisible {
  inputs: { kind: 'files' | 'rows'; path: string; count: number | null } | null;
  range: { start: string; end: string; total: number } | null;
  mergeScript: string | null;
  reads: string[];
}

/**
 * The inputs a run could be split over: an input flag (`--input-dir data/`, `--input rows.csv`)
 * naming a folder of the upload (its files) or a CSV (its rows); `--start/--end` flags with a
 * known end (an evaluation over index ranges); and the merge program the project ships or the
 * request names ("merge with merge.py").
 */
function divisibleInputs(entry: EntryPoint, args: string[], uploaded: Set<string>, request: string): Divisible {
  const named = /\bmerge (?:it |them |the results |results )?(?:with|using|by) ([\w./-]+\.py)\b/i.exec(request)?.[1];
  const scripts = [...uploaded].filter((x) => MERGE_SCRIPT_RE.test(x) && x !== entry.path);
  const mergeScript = named && uploaded.has(named) ? named : scripts.length === 1 ? scripts[0]! : null;
  let inputs: Divisible['inputs'] = null;
  for (const f of entry.flags) {
    if (
      !/^(input|inputs|in|input-dir|in-dir|inputs-dir|data-dir|data|images|image-dir|src-dir|csv|input-csv|input-file|rows)$/.test(
        flagName(f),
      )
    )
      continue;
    const value = (flagValue(args, f.flag) ?? f.default ?? '').replace(/^\.\//, '').replace(/\/$/, '');
    if (!value) continue;
    const files = [...uploaded].filter((x) => x.startsWith(`${value}/`));
    if (files.length) inputs = { kind: 'files', path: value, count: files.length };
    else if (/\.(csv|tsv)$/i.test(value) && uploaded.has(value)) inputs = { kind: 'rows', path: value, count: null };
    if (inputs) break;
  }
  const start = entry.flags.find((f) => /^(start|begin|start-index|from)$/.test(flagName(f)));
  const end = entry.flags.find((f) => /^(end|stop|end-index|to)$/.test(flagName(f)));
  const total = end ? Number(flagValue(args, end.flag) ?? end.default) : NaN;
  const range = start && end && Number.isInteger(total) && total > 0 ? { start: start.flag, end: end.flag, total } : null;
  return { inputs, range, mergeScript, reads: [...(inputs?.kind === 'rows' ? [inputs.path] : []), ...(mergeScript ? [mergeScript] : [])] };
}

/**
 * Whether the run splits into shards (proposeShards.ts): only a sample/trial count with a known
 * value, a list flag's default list, or another shape; the shard count from the compatible workers
 * online. Null: not a question here (no sample count, or the user asked for one run).
 */
function shardingOf(
  entry: EntryPoint,
  args: string[],
  runner: string,
  settings: Record<string, string>,
  source: string,
  resultFiles: string[],
  classes: WorkerClass[],
  workload: string,
  request: string,
  shapes: (Divisible & { readOf: (p: string) => string | undefined }) | null,
) {
  if (/\b(no|without|don'?t|do not)\s+(shard|split)|\bunsharded\b|\bone (run|worker)\b/i.test(request)) return null;
  const resultFile = resultFiles.find((f) => f.startsWith('outputs/') && f.endsWith('.json')) ?? null;
  const workers = classes.filter((c) => c.workloads.includes(workload)).reduce((n, c) => n + c.count, 0);
  const rl = runLength(entry, args, settings);
  const countArg = (entry.positionals ?? []).find((x) =>
    /^(n[-_]?)?(samples|trials|paths|points|draws|iterations)$|^(n|number)$/.test(x.name),
  );
  if (!rl && countArg && entry.positionals?.[0] === countArg && /^\d+$/.test(args[0] ?? '')) {
    // A sample count given as the first positional argument (`python pi.py 1000000`).
    const seed = entry.flags.find((f) => flagName(f) === 'seed');
    return proposeShards({
      source,
      runner,
      args,
      countFlag: countArg.name,
      seedFlag: seed?.flag ?? null,
      total: Number(args[0]),
      baseSeed: Number(seed?.default ?? 0) || 0,
      resultFile,
      workers,
      positional: true,
      unitSec: unitSeconds(request, Number(args[0])),
    });
  }
  if (!rl || !['sample', 'trial', 'path'].includes(rl.unit)) {
    // A sweep: a list flag (seeds, configs) the user did not set, its default list split.
    const sweep = sweepFlag(source);
    if (sweep && !args.includes(sweep.flag))
      return proposeSweep({
        source,
        runner,
        args,
        flag: sweep.flag,
        values: sweep.values,
        resultFile,
        workers,
        unitSec: unitSeconds(request, sweep.values.length),
      });
    return shapes ? otherShapes(entry, args, runner, source, resultFiles, workers, request, shapes) : null;
  }
  const seed = entry.flags.find((f) => flagName(f) === 'seed');
  const i = seed ? args.indexOf(seed.flag) : -1;
  const baseSeed = Number(i >= 0 ? args[i + 1] : (seed?.default ?? 0));
  return proposeShards({
    source,
    runner,
    args,
    countFlag: rl.flag.flag,
    seedFlag: seed?.flag ?? null,
    total: rl.full,
    baseSeed: Number.isInteger(baseSeed) ? baseSeed : 0,
    resultFile,
    workers,
    unitSec: unitSeconds(request, rl.full),
  });
}

/** The batch, range and loop shapes (shardShapes.ts), in that order; null when none fits. */
function otherShapes(
  entry: EntryPoint,
  args: string[],
  runner: string,
  source: string,
  resultFiles: string[],
  workers: number,
  request: string,
  shapes: Divisible & { readOf: (p: string) => string | undefined },
) {
  let script: MergeScript | null = null;
  if (shapes.mergeScript) {
    const read = readMergeScript(shapes.mergeScript, shapes.readOf(shapes.mergeScript) ?? '');
    if (!read.script) return { spec: null, reason: `Not split into shards: ${read.why}.` };
    script = read.script;
  }
  const command = [runner, ...args].join(' ');
  const outDir = args.some((a, i) => a === 'outputs' && /^--?(out|output|out-dir|output-dir|outdir|save-dir)$/.test(args[i - 1] ?? ''));
  const file = resultFiles.find((f) => f.startsWith('outputs/') && /\.(json|csv|tsv)$/.test(f)) ?? literalResult(source);
  const result = file
    ? { kind: /\.(csv|tsv)$/.test(file) ? ('rows' as const) : ('json' as const), file }
    : outDir
      ? { kind: 'files' as const, file: 'outputs/' }
      : null;
  if (shapes.inputs) {
    let count = shapes.inputs.count;
    if (count === null) {
      const text = shapes.readOf(shapes.inputs.path) ?? '';
      if (text.length >= 20_000)
        return {
          spec: null,
          reason: `Not split into shards: ${shapes.inputs.path} is larger than the planner reads, so its rows could not be counted.`,
        };
      count = splitCsv(text, shapes.inputs.path).rows;
    }
    return proposeBatch({
      source,
      command,
      inputs: { ...shapes.inputs, count },
      result,
      mergeScript: script,
      workers,
      unitSec: unitSeconds(request, count),
    });
  }
  if (shapes.range && file?.endsWith('.json'))
    return proposeRanges({
      source,
      runner,
      args,
      startFlag: shapes.range.start,
      endFlag: shapes.range.end,
      total: shapes.range.total,
      resultFile: file,
      mergeScript: script,
      workers,
      unitSec: unitSeconds(request, shapes.range.total),
    });
  // No suitable flags: a top-level loop over a literal list or range, run through the driver.
  if (!entry.flags.length && topLevelLoop(source))
    return proposeDriver({ path: entry.path, source, args, resultFile: file ?? null, mergeScript: script, workers, unitSec: null });
  return null;
}

/** A result file the script writes at a literal path under outputs/ (`open("outputs/sweep.json", "w")`). */
function literalResult(source: string): string | null {
  const m =
    /open\(\s*(?:os\.path\.join\(\s*["']outputs["']\s*,\s*["']([^"']+)["']\s*\)|["'](?:\.\/)?(outputs\/[^"']+\.(?:json|csv|tsv))["'])\s*,\s*["']w/.exec(
      source,
    );
  return m ? (m[1] ? `outputs/${m[1]}` : m[2]!) : null;
}
