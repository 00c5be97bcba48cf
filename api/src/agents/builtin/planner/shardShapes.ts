/**
 * More shapes of divisible work for the builtin planner (the Monte-Carlo count and
 * the list flag are in proposeShards.ts): a batch of independent inputs (files of a folder, rows of a
 * CSV), an evaluation over index ranges (`--start/--end`), a top-level loop over a literal list
 * or range run through the generated driver, the user's own merge script — and the rule that
 * weighs the check's cost against what sharding saves. Pure: each returns a spec or why not.
 */
import type { MergeField, ShardsSpec } from '../../../domain/jobs/shards.js';
import { carriedState, costGain, dumpedKeys, splitSizes, type ShardProposal } from './proposeShards.js';

/** "each file takes about 3 seconds" → seconds per unit; "takes about 2 hours" → the whole run's seconds / total. */
export function unitSeconds(request: string, total: number): number | null {
  const m =
    /\b(each|per|every)\b[^.]*?\b(?:takes?|needs?|runs?(?: for)?)\s+(?:about|around|~)?\s*(\d+(?:\.\d+)?)\s*(s|secs?|seconds?|min|mins?|minutes?|h|hours?)\b/i.exec(
      request,
    ) ??
    /\b(?:takes?|needs?|runs? for)\s+(?:about|around|~)?\s*(\d+(?:\.\d+)?)\s*(s|secs?|seconds?|min|mins?|minutes?|h|hours?)\b/i.exec(
      request,
    );
  if (!m) return null;
  const per = m.length === 4;
  const n = Number(per ? m[2] : m[1]);
  const u = (per ? m[3] : m[2])!.toLowerCase();
  const sec = u.startsWith('h') ? n * 3600 : u.startsWith('m') ? n * 60 : n;
  return per ? sec : sec / total;
}

const no = (reason: string): ShardProposal => ({ spec: null, reason: `Not split into shards: ${reason}` });
const ranges = (total: number, n: number): [number, number][] => {
  let at = 0;
  return splitSizes(total, n).map((s) => [at, (at += s)] as [number, number]);
};

/** A merge program the project ships (merge*.py, or the one the request names) and how to call it. */
export interface MergeScript {
  path: string;
  /** Its command for a list of result files (each shard's, in order) and the file it writes. */
  command: (files: string[], out: string) => string;
}

/**
 * The project's merge program, read from its source: a positional list of input files
 * (`nargs='+'`/`'*'`) and an output flag (`--out`, `-o`, `--output`). Null with why when it does
 * not take them that way.
 */
export function readMergeScript(path: string, source: string): { script: MergeScript | null; why: string | null } {
  const positional = [...source.matchAll(/add_argument\(\s*["']([A-Za-z_]\w*)["']([^)]*)\)/g)].find((m) =>
    /nargs\s*=\s*["'][+*]["']/.test(m[2]!),
  );
  const out = [...source.matchAll(/add_argument\(\s*((?:["']-{1,2}[\w-]+["']\s*,?\s*)+)/g)]
    .map((m) => [...m[1]!.matchAll(/["'](-{1,2}[\w-]+)["']/g)].map((x) => x[1]!))
    .find((fs) => fs.some((f) => /^(--out|--output|-o|--out-file|--output-file)$/.test(f)));
  if (!positional || !out)
    return {
      script: null,
      why: `${path} does not take a list of result files (a positional argument with nargs='+') and an output flag (--out / -o), so it cannot be given the shards' results`,
    };
  const flag = out.find((f) => f.startsWith('--')) ?? out[0]!;
  return { script: { path, command: (files, o) => `python ${path} ${flag} ${o} ${files.join(' ')}` }, why: null };
}

/** The merge of a result the program writes, by its shape; or why no merge is known. */
function mergeOf(
  source: string,
  result: { kind: 'files' | 'rows' | 'json'; file: string },
  script: MergeScript | null,
  shards: number,
): { merge: ShardsSpec['merge'] } | { why: string } {
  if (script) {
    const files = Array.from({ length: shards }, (_, i) => `shards/shard-${i + 1}/${result.file}`);
    return {
      merge: { kind: 'script', file: result.file, fields: [], script: { path: script.path, command: script.command(files, result.file) } },
    };
  }
  if (result.kind === 'files') return { merge: { kind: 'files', file: result.file, fields: [] } };
  if (result.kind === 'rows') return { merge: { kind: 'rows', file: result.file, fields: [] } };
  const named = /json\.dumps?\(\s*([A-Za-z_]\w*)\s*[,)]/.exec(source)?.[1];
  if (named && new RegExp(`^\\s*${named}\\s*=\\s*\\[`, 'm').test(source)) return { merge: { kind: 'list', file: result.file, fields: [] } };
  const fields: MergeField[] = [];
  const keys = dumpedKeys(source);
  for (const key of keys) {
    if (/^(results|runs|rows|records|items|per_file|files)$/.test(key)) fields.push({ name: key, how: 'concat', check: 'exact' });
    else if (/^(n|count|n_\w+|num_\w+|\w+_count|total|correct|errors|words|lines|hits)$/.test(key))
      fields.push({ name: key, how: 'sum', check: 'exact' });
    else
      return {
        why: `no merge rule is known for the result field \`${key}\` of ${result.file} (ship a merge script, e.g. merge.py, or say how to merge it)`,
      };
  }
  if (!fields.length) return { why: `the keys of ${result.file} could not be read from the source, so no merge is known` };
  return { merge: { kind: 'fields', file: result.file, fields } };
}

/**
 * A batch of independent inputs: the files of a folder, or the rows of a CSV, that the program
 * handles one by one. Each shard keeps only its slice in its own copy (`python -m chatgpu.shard
 * files|rows …`) and runs the unchanged command; the bounded check runs one input per shard,
 * unsharded and sharded. The merge follows what the program writes: files under a folder →
 * their union, a CSV → its rows concatenated, a JSON list → concatenated, a JSON object → field
 * by field, or the project's merge script.
 */
export function proposeBatch(input: {
  source: string;
  command: string;
  inputs: { kind: 'files' | 'rows'; path: string; count: number };
  result: { kind: 'files' | 'rows' | 'json'; file: string } | null;
  mergeScript: MergeScript | null;
  workers: number;
  unitSec?: number | null;
}): ShardProposal {
  const what = input.inputs.kind === 'files' ? `files of ${input.inputs.path}` : `rows of ${input.inputs.path}`;
  const unit = input.inputs.kind === 'files' ? 'file' : 'row';
  // A value carried from input to input (a running max) is what a merge script combines; the
  // check tells whether it does. Without one, or for a training loop, it is not split.
  const carried = carriedState(input.source);
  if (carried && (!input.mergeScript || /training loop/.test(carried))) return no(`${carried}.`);
  if (!input.result) return no('the program writes no result under outputs/ to merge.');
  const n = Math.min(input.workers, input.inputs.count, 64);
  if (n < 2)
    return no(
      input.workers < 2 ? `${input.workers} compatible worker online, so one run is as fast.` : `${input.inputs.path} holds one input.`,
    );
  const bounded = Math.min(
    input.inputs.count,
    input.inputs.kind === 'files' ? n : Math.max(n, Math.min(2 * n, Math.ceil(input.inputs.count / 20))),
  );
  const pays = costGain({
    total: input.inputs.count,
    bounded,
    shards: n,
    workers: input.workers,
    unit,
    unitSec: input.unitSec,
    rounds: input.mergeScript ? 3 : 2,
  });
  if (!pays.ok) return no(`it does not pay: ${pays.words}.`);
  const merge = mergeOf(input.source, input.result, input.mergeScript, n);
  if ('why' in merge) return no(`${merge.why}.`);
  const slice = (a: number, b: number) => `python -m chatgpu.shard ${input.inputs.kind} ${input.inputs.path} ${a} ${b} && ${input.command}`;
  const full = ranges(input.inputs.count, n);
  const check = ranges(bounded, n);
  const how =
    merge.merge.kind === 'script'
      ? `merged by ${merge.merge.script!.path}`
      : merge.merge.kind === 'files'
        ? `merged as the union of the files under ${merge.merge.file}`
        : merge.merge.kind === 'rows'
          ? `merged by concatenating the rows of ${merge.merge.file} in order`
          : `merged by concatenating ${merge.merge.file} in order`;
  return {
    reason: `Split the ${input.inputs.count} ${what} into ${n} shards (one per compatible worker online): each input is handled on its own, so each shard keeps only its slice (python -m chatgpu.shard) and runs the command unchanged; ${how}. Checked first on ${bounded} ${unit}s, unsharded against ${n} shards, exactly. It pays: ${pays.words}.`,
    spec: {
      why: `A batch of independent inputs: the program handles the ${what} one by one, with no state carried between them.`,
      unit,
      total: input.inputs.count,
      transformation: 'slice',
      inputs: input.inputs,
      shards: full.map(([a, b]) => ({ command: slice(a, b), size: b - a, range: [a, b] as [number, number] })),
      check: { original: slice(0, bounded), shards: check.map(([a, b]) => slice(a, b)), timeoutSec: 900 },
      merge: merge.merge,
      required: false,
    },
  };
}

/**
 * An evaluation over index ranges: the program takes `--start`/`--end` (or `--begin`/`--stop`)
 * and reports a count with per-example means (accuracy, loss). Each shard evaluates its range
 * through those flags; counts are summed and means weighted by the count (checked equal within
 * a relative 1e-9: the same sum, added in another order).
 */
export function proposeRanges(input: {
  source: string;
  runner: string;
  args: string[];
  startFlag: string;
  endFlag: string;
  total: number;
  resultFile: string | null;
  mergeScript: MergeScript | null;
  workers: number;
  unitSec?: number | null;
}): ShardProposal {
  const carried = carriedState(input.source);
  if (carried) return no(`${carried}.`);
  if (!input.resultFile) return no('the program writes no JSON result file under outputs/ to merge.');
  const n = Math.min(input.workers, input.total, 64);
  if (n < 2)
    return no(
      input.workers < 2
        ? `${input.workers} compatible worker online, so one run is as fast.`
        : `${input.total} example is too little to split.`,
    );
  const bounded = Math.min(input.total, Math.max(2 * n, Math.ceil(input.total / 20)));
  const pays = costGain({ total: input.total, bounded, shards: n, workers: input.workers, unit: 'example', unitSec: input.unitSec });
  if (!pays.ok) return no(`it does not pay: ${pays.words}.`);
  let merge: ShardsSpec['merge'];
  if (input.mergeScript)
    merge = (mergeOf(input.source, { kind: 'json', file: input.resultFile }, input.mergeScript, n) as { merge: ShardsSpec['merge'] }).merge;
  else {
    const keys = dumpedKeys(input.source);
    const countKey = keys.find((k) => /^(n|count|examples|n_examples|num_examples|samples|n_samples|total)$/.test(k));
    if (!countKey)
      return no(
        `${input.resultFile} reports no example count (found ${keys.join(', ') || 'no keys'}), so the shards' means cannot be weighted.`,
      );
    const fields: MergeField[] = [];
    for (const key of keys) {
      if (key === countKey || /^(correct|errors|hits|\w+_count|n_\w+)$/.test(key)) fields.push({ name: key, how: 'sum', check: 'exact' });
      else if (/(accuracy|acc|loss|mean|error_rate|score|f1|mse|mae|rmse_sq)$/.test(key))
        fields.push({ name: key, how: 'weighted-mean', weight: countKey, check: 'close' });
      else if (key === 'start' || key === 'end')
        continue; // each shard's own range
      else return no(`no merge rule is known for the result field \`${key}\` of ${input.resultFile}.`);
    }
    merge = { kind: 'fields', file: input.resultFile, fields };
  }
  const command = (a: number, b: number) => {
    const out = [...input.args];
    for (const [flag, v] of [
      [input.startFlag, a],
      [input.endFlag, b],
    ] as const) {
      const i = out.indexOf(flag);
      if (i >= 0) out[i + 1] = String(v);
      else out.push(flag, String(v));
    }
    return [input.runner, ...out].join(' ');
  };
  const full = ranges(input.total, n);
  return {
    reason: `Split the evaluation of ${input.total} examples into ${n} index ranges (${full.map(([a, b]) => `${a}–${b}`).join(', ')}) through ${input.startFlag}/${input.endFlag}: each example is evaluated on its own, so counts add up and means are weighted by each range's count. Checked first on examples 0–${bounded}, unsharded against ${n} ranges. It pays: ${pays.words}.`,
    spec: {
      why: `An evaluation over a dataset: every example is scored independently (no state carried between them), so index ranges evaluate apart.`,
      unit: 'example',
      total: input.total,
      transformation: 'flags',
      shards: full.map(([a, b]) => ({ command: command(a, b), size: b - a, range: [a, b] as [number, number] })),
      check: { original: command(0, bounded), shards: ranges(bounded, n).map(([a, b]) => command(a, b)), timeoutSec: 900 },
      merge,
      required: false,
    },
  };
}

/** The items of a Python literal list or range expression, or null when it is not one. */
export function literalCount(expr: string): number | null {
  const range = /^range\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$/.exec(expr.trim());
  if (range) return range[2] !== undefined ? Math.max(0, Number(range[2]) - Number(range[1])) : Number(range[1]);
  const t = expr.trim();
  if (!/^[[(]/.test(t) || !/[\])]$/.test(t)) return null;
  let depth = 0;
  let items = 0;
  let inItem = false;
  let quote: string | null = null;
  for (let i = 1; i < t.length - 1; i++) {
    const c = t[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    if (c === '#') {
      while (i < t.length - 1 && t[i] !== '\n') i++;
      continue;
    }
    if ('[({'.includes(c)) depth++;
    if ('])}'.includes(c)) depth--;
    if (c === ',' && depth === 0) {
      if (inItem) items++;
      inItem = false;
    } else if (!/\s/.test(c)) inItem = true;
  }
  if (inItem) items++;
  return depth === 0 ? items : null;
}

export interface TopLoop {
  /** 1-based line of the `for`. */
  line: number;
  target: string;
  iter: string;
  count: number;
  body: string[];
  /** Top-level statements before the loop. */
  before: string[];
}

/**
 * The script's top-level `for` loop over a literal list, a list assigned as a literal at the
 * top level, or `range(N)` (at the module's top level, or in its `if __name__ == "__main__":`
 * block); null when there is none.
 */
export function topLevelLoop(source: string): TopLoop | null {
  const lines = source.split('\n');
  const guard = lines.findIndex((l) => /^if\s+__name__\s*==\s*["']__main__["']\s*:/.test(l));
  for (let i = 0; i < lines.length; i++) {
    const m = /^( {0,4})for\s+([\w, ()]+?)\s+in\s+(.+?):\s*(#.*)?$/.exec(lines[i]!);
    if (!m || (m[1]!.length === 4 && (guard < 0 || guard > i))) continue;
    const indent = m[1]!.length;
    let iter = m[3]!.trim();
    let end = i;
    const name = /^[A-Za-z_]\w*$/.test(iter) ? iter : null;
    if (name) {
      const text = lines.slice(0, i).join('\n');
      const start = text.search(new RegExp(`^${name}\\s*=\\s*[\\[(]`, 'm'));
      if (start < 0) continue;
      // the literal: from its bracket to the matching one
      const from = text.indexOf('=', start) + 1;
      let depth = 0;
      let j = from;
      for (; j < text.length; j++) {
        if ('[('.includes(text[j]!)) depth++;
        if ('])'.includes(text[j]!) && --depth === 0) break;
      }
      iter = text.slice(from, j + 1).trim();
    }
    const count = literalCount(iter);
    if (count === null) continue;
    const body: string[] = [];
    for (end = i + 1; end < lines.length; end++) {
      const l = lines[end]!;
      if (l.trim() === '' || l.trim().startsWith('#')) {
        body.push(l);
        continue;
      }
      if (l.length - l.trimStart().length <= indent) break;
      body.push(l);
    }
    const before = lines
      .slice(0, i)
      .filter(
        (l) =>
          (l.length - l.trimStart().length === indent || l.length - l.trimStart().length === 0) && l.trim() && !l.trim().startsWith('#'),
      );
    return { line: i + 1, target: m[2]!.trim(), iter, count, body, before };
  }
  return null;
}

/**
 * Why the loop's iterations are not independent, or null: a name the body assigns (or
 * augments) that was already set before the loop — a running best, a total, a state updated
 * from item to item — other than a list the body only appends to; a function that declares
 * `global`; or a training step.
 */
export function loopCarriesState(source: string, loop: TopLoop): string | null {
  const text = loop.body.join('\n');
  const training = carriedState(text.replace(/^/gm, ' '));
  if (training && /training loop/.test(training)) return training;
  if (/^\s*global\s+\w+/m.test(source))
    return `a function declares \`${/^\s*global\s+([\w, ]+)/m.exec(source)![1]!.trim()}\` global, so calls share state from one item to the next`;
  const setBefore = new Set(loop.before.flatMap((l) => [...l.trim().matchAll(/^([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)/g)].map((m) => m[1]!)));
  for (const l of loop.body) {
    const m = /^\s+([A-Za-z_]\w*)\s*(\+=|-=|\*=|\/=|=(?!=))/.exec(l);
    if (m && setBefore.has(m[1]!))
      return `the variable \`${m[1]}\` is set before the loop and updated in it (\`${l.trim()}\`), so each item depends on the ones before`;
    const mut = /^\s+([A-Za-z_]\w*)\s*\[[^\]]*\]\s*(\+=|-=|\*=|=(?!=))/.exec(l);
    if (mut && setBefore.has(mut[1]!) && mut[2] !== '=') return `\`${mut[1]}\` is updated in place from item to item (\`${l.trim()}\`)`;
  }
  return null;
}

/**
 * A script with no suitable flags whose top-level loop runs an independent function over a
 * literal list or range (a sweep over configs): the generated driver (`python -m chatgpu.shard
 * loop FILE LINE a b`) runs the file unchanged but for that loop, which goes over items [a, b)
 * only; what the script writes after the loop holds that slice's results, concatenated in order.
 */
export function proposeDriver(input: {
  path: string;
  source: string;
  args: string[];
  resultFile: string | null;
  mergeScript: MergeScript | null;
  workers: number;
  unitSec?: number | null;
}): ShardProposal {
  const loop = topLevelLoop(input.source);
  if (!loop) return no(`${input.path} has no top-level loop over a literal list or range to split.`);
  const carried = loopCarriesState(input.source, loop);
  if (carried) return no(`${carried} (the loop on line ${loop.line} of ${input.path}).`);
  if (!input.resultFile) return no(`${input.path} writes no result file under outputs/ to merge.`);
  const n = Math.min(input.workers, loop.count, 64);
  if (n < 2)
    return no(
      input.workers < 2
        ? `${input.workers} compatible worker online, so one run is as fast.`
        : `the loop on line ${loop.line} has one item.`,
    );
  const pays = costGain({
    total: loop.count,
    bounded: n,
    shards: n,
    workers: input.workers,
    unit: 'item',
    unitSec: input.unitSec,
    rounds: input.mergeScript ? 3 : 2,
  });
  if (!pays.ok) return no(`it does not pay: ${pays.words}.`);
  const merge = mergeOf(
    input.source,
    { kind: input.resultFile.endsWith('.csv') ? 'rows' : 'json', file: input.resultFile },
    input.mergeScript,
    n,
  );
  if ('why' in merge) return no(`${merge.why}.`);
  const command = (a: number, b: number) => ['python -m chatgpu.shard loop', input.path, loop.line, a, b, ...input.args].join(' ');
  const full = ranges(loop.count, n);
  return {
    reason: `Split the loop on line ${loop.line} of ${input.path} (\`for ${loop.target} in …\`, ${loop.count} items) into ${n} shards with a generated driver: python -m chatgpu.shard loop runs ${input.path} unchanged except that this loop goes over the shard's slice of items, and the slices' results are concatenated in order. Checked first on one item per shard, exactly. It pays: ${pays.words}.`,
    spec: {
      why: `A sweep: each item of the loop on line ${loop.line} runs the same function independently (nothing set before the loop is updated in it).`,
      unit: 'item',
      total: loop.count,
      transformation: 'driver',
      shards: full.map(([a, b]) => ({ command: command(a, b), size: b - a, range: [a, b] as [number, number] })),
      check: { original: command(0, n), shards: ranges(n, n).map(([a, b]) => command(a, b)), timeoutSec: 900 },
      merge: merge.merge,
      required: false,
    },
  };
}
