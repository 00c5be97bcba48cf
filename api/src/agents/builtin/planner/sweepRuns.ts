/**
 * A sweep the user asked for ("dt over 0.1, 0.05 and 0.01", "seeds 1 2 3"): one run per value of
 * one setting, each through the worker's `python -m chatgpu.sweep run` (the value passed as a flag,
 * a positional, an override or an environment variable — or, for a literal no flag reaches, the
 * literal rewritten for that run and restored), each run's outputs kept apart under
 * outputs/sweep/NAME=VALUE/, and a table (value → the metrics each run printed) in
 * outputs/sweep.csv. With several compatible workers online the values are split into shards
 * (merged by concatenating the tables' rows, checked first on one value per shard against the
 * same values run one after another); with one, they run one after another in one task.
 */
import type { Setting } from '../../planner/contract.js';
import type { ShardsSpec } from '../../../domain/jobs/shards.js';
import { offsetOf } from '../../../preparation/setSettings.js';
import { applySetting, pythonLiteral, type AskContext } from './disposeAsks.js';
import { shellWord } from './flags.js';

export const SWEEP_TABLE = 'outputs/sweep.csv';

export interface SweepInput {
  setting: Setting;
  values: string[];
  runner: string;
  args: string[];
  /** The arguments of the bounded workload (run length cut), for the shards' check. */
  boundedArgs: string[];
  ctx: Pick<AskContext, 'positionals' | 'read' | 'entry'>;
  workers: number;
  /** Whether the plan may split into shards (no preparation, pipeline or checkpoint resume). */
  shardable: boolean;
}

export type SweepPlan =
  | { need: 'read'; path: string }
  | { refused: string }
  | { command: string; shards: ShardsSpec | null; environment: { name: string; value: string }[]; detail: string };

export function sweepRuns(input: SweepInput): SweepPlan {
  const { setting: s, values } = input;
  const env: { name: string; value: string }[] = [];
  let setSpec: ((value: string) => string) | null = null;
  if (s.kind === 'constant' || (s.kind === 'config-key' && !s.override)) {
    if (!s.span || (s.format && s.format !== 'python'))
      return { refused: `${s.name} in ${s.file} is not a literal of a Python file that a run can set` };
    const text = input.ctx.read(s.file);
    if (text === undefined) return { need: 'read', path: s.file };
    const start = offsetOf(text, s.span.line, s.span.col);
    const end = offsetOf(text, s.span.endLine, s.span.endCol);
    if (start === null || end === null) return { refused: `${s.name}'s position in ${s.file} could not be found` };
    const from = Buffer.from(text.slice(start, end)).toString('base64url');
    const span = `${s.file}:${s.span.line}:${s.span.col}:${s.span.endLine}:${s.span.endCol}:${from}`;
    setSpec = () => ` --set ${shellWord(span)}`;
  }
  if (s.kind === 'env')
    return { refused: `${s.name} is an environment variable, which is the same for a whole task; sweeping it is not supported yet` };
  const one = (args: string[], value: string): string => {
    const literal = setSpec ? pythonLiteral(value, s) : value;
    let cmdArgs = args;
    if (!setSpec) {
      const scratch = { args: [...args], edits: [], environment: env };
      const applied = applySetting(input.ctx, scratch, s, value);
      if ('refused' in applied || 'read' in applied)
        throw new Error(`sweep of ${s.name}: ${'refused' in applied ? applied.refused : 'unread file'}`);
      cmdArgs = scratch.args;
    }
    return `python -m chatgpu.sweep run --name ${shellWord(s.name)} --value ${shellWord(literal)}${setSpec ? setSpec(value) : ''} -- ${[input.runner, ...cmdArgs].join(' ')}`;
  };
  const chain = (args: string[], vs: string[]) =>
    [...vs.map((v) => one(args, v)), `python -m chatgpu.sweep table . ${SWEEP_TABLE}`].join(' && ');
  let command: string;
  try {
    command = chain(input.args, values);
  } catch (e) {
    return { refused: (e as Error).message };
  }
  // A plan's command (and each shard's) is at most 2,000 characters.
  if (command.length > 2000)
    return {
      refused: `one run per value of ${s.name} makes a command of ${command.length} characters, more than a plan holds (2,000): sweep fewer values per job`,
    };
  const how = setSpec ? `its literal in ${s.file} line ${s.span!.line} set for each run (and restored)` : `passed as ${s.flag ?? s.name}`;
  const count = Math.min(input.workers, values.length, 64);
  if (!input.shardable || count < 2) {
    return {
      command,
      shards: null,
      environment: env,
      detail: `one run per value of ${s.name} (${values.join(', ')}), ${how}, one after another on ${input.workers < 2 ? 'the one compatible worker online' : 'one worker'}; each run's outputs in outputs/sweep/${s.name}=VALUE/, the table in ${SWEEP_TABLE}`,
    };
  }
  // Contiguous groups of the values in the table's order, so the shards' rows concatenated are
  // the table of one run over all of them (what the check compares).
  const numeric = values.every((v) => Number.isFinite(Number(v)));
  const ordered = [...values].sort((a, b) => (numeric ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0));
  const groups: string[][] = [];
  for (let i = 0, at = 0; i < count; i++) {
    const n = Math.floor(ordered.length / count) + (i < ordered.length % count ? 1 : 0);
    groups.push(ordered.slice(at, at + n));
    at += n;
  }
  const firsts = groups.map((g) => g[0]!);
  const shards: ShardsSpec = {
    why: `A sweep: each value of ${s.name} is its own run, and nothing passes from one run to another.`,
    unit: 'value',
    total: values.length,
    shards: groups.map((g) => ({ command: chain(input.args, g), size: g.length })),
    check: { original: chain(input.boundedArgs, firsts), shards: firsts.map((v) => chain(input.boundedArgs, [v])), timeoutSec: 1800 },
    merge: { kind: 'rows', file: SWEEP_TABLE, fields: [] },
    required: false,
  };
  return {
    command,
    shards,
    environment: env,
    detail: `one run per value of ${s.name} (${values.join(', ')}), ${how}, split into ${count} shards on the compatible workers online; each run's outputs in shards/shard-i/outputs/sweep/${s.name}=VALUE/, the table in ${SWEEP_TABLE}`,
  };
}
