/**
 * What a project's scripts are for, as the builtin planner's rules tell them apart: data preparation,
 * merge programs, the README's or Makefile's order of runs, and the data files a script writes.
 */
import type { EntryPoint, ProjectFacts } from '../../planner/analyzeProject.js';

/** Scripts that prepare data for a run rather than being the run. */
export const PREPARE_RE = /(^|\/)(prepare|preprocess|prepare_data|make_data(set)?|build_data(set)?|download(_data)?|get_data)\.py$/i;
/** A merge program the project ships: merge.py, merge_results.py, scripts/merge-shards.py. */
export const MERGE_SCRIPT_RE = /(^|\/)merge[\w-]*\.py$/i;

/** How the project's README or Makefile runs `e`, and where in its order. */
export const usageOf = (facts: ProjectFacts, e: EntryPoint) => facts.usage.find((u) => u.script === e.path);
export const usageOrder = (facts: ProjectFacts, e: EntryPoint) => facts.usage.findIndex((u) => u.script === e.path);

/** Data files a preparation script writes, from the literal names in it ("train.bin", "data/x.npy"). */
export function preparedFiles(source: string): string[] {
  const names = new Set<string>();
  for (const m of source.matchAll(/['"]([\w./-]+\.(?:bin|npy|npz|pkl|pt|pth|csv|tsv|json|jsonl|txt|parquet|h5|arrow))['"]/g))
    names.add(m[1]!.replace(/^\.\//, ''));
  return [...names];
}
