/**
 * Optimization candidates for PyTorch training code (docs/architecture.md §4, issue 6 item 4).
 *
 * Each candidate is a transformation with the toolkit's interface (types.ts): a code tree and the
 * worker's context in, a TransformResult out — unchanged ("no change") when the candidate does not
 * fit the target/runtime or the code, or when the code already has it. On top of the result, a
 * candidate declares its numerical risk and the tolerances its outputs are to be compared with
 * (compareOutputs criteria), so the pipeline can accept it only when timings say "faster"
 * (compareTimings) and outputs match within what the candidate declared.
 *
 * `proposeOptimizations` returns only the candidates that apply; `surveyOptimizations` also says
 * why each other one was not proposed. Deterministic (files in sorted order, rules in a fixed order)
 * and idempotent (a candidate applied twice changes nothing).
 */
import type { ComparisonCriteria } from './compareOutputs.js';
import { analyzePyFile, applySplices, type PyFile } from './pySource.js';
import { parsePython } from './pythonAst.js';
import {
  OPTIMIZATION_NAMES,
  OPTIMIZATION_RULES,
  type NumericalRisk,
  type OptimizationName,
  type OptimizationRule,
} from './optimizeRules.js';
import { byFileLine, type CodeTree, type TransformContext, type TransformResult } from './types.js';

export { OPTIMIZATION_NAMES, type NumericalRisk, type OptimizationName } from './optimizeRules.js';

export interface OptimizeOptions {
  /** Python interpreter used to parse .py files (any Python ≥ 3.8). */
  python: string;
}

export interface OptimizationCandidate {
  name: OptimizationName;
  title: string;
  benefit: string;
  risk: NumericalRisk;
  /** True unless the risk is "none". */
  numericsMayChange: boolean;
  /** Tolerances to compare the candidate's outputs with the accepted code's; null = compareOutputs' defaults. */
  criteria: ComparisonCriteria | null;
  /** The candidate tree with its edits, hazards and numerics notes (always `changed`). */
  result: TransformResult;
}

export interface SkippedOptimization {
  name: OptimizationName;
  reason: string;
}

export interface OptimizationSurvey {
  candidates: OptimizationCandidate[];
  skipped: SkippedOptimization[];
}

/** A transformation: the tree with one candidate applied, or the tree unchanged when it does not apply. */
export type Optimization = (tree: CodeTree, ctx: TransformContext, opts: OptimizeOptions) => Promise<TransformResult>;

/**
 * Parsed files by interpreter, path and content. Surveying several targets, or applying candidates
 * one after another, parses the same unchanged files again; a Python start costs 0.1–1 s. The
 * analysed files are never mutated, so sharing them keeps every function pure.
 */
const PARSED = new Map<string, PyFile | null>();
const PARSED_MAX = 256;

async function parseTree(tree: CodeTree, python: string): Promise<PyFile[]> {
  const paths = Object.keys(tree)
    .filter((p) => p.endsWith('.py'))
    .sort();
  const key = (p: string): string => `${python}\0${p}\0${tree[p]}`;
  const missing: Record<string, string> = {};
  for (const p of paths) if (!PARSED.has(key(p))) missing[p] = tree[p]!;
  if (Object.keys(missing).length > 0) {
    const parsed = await parsePython(missing, { python });
    for (const p of Object.keys(missing)) {
      const r = parsed[p];
      if (PARSED.size >= PARSED_MAX) PARSED.delete(PARSED.keys().next().value!);
      PARSED.set(key(p), r?.ok ? analyzePyFile(p, missing[p]!, r.tree) : null);
    }
  }
  return paths.map((p) => PARSED.get(key(p))).filter((f): f is PyFile => !!f);
}

function sortedTree(tree: CodeTree): Record<string, string> {
  return Object.fromEntries(
    Object.keys(tree)
      .sort()
      .map((p) => [p, tree[p]!]),
  );
}

function unchanged(tree: CodeTree): TransformResult {
  return { changed: false, tree: sortedTree(tree), edits: [], hazards: [], unconverted: [], numericsMayChange: false, numericsNotes: [] };
}

function evaluate(
  rule: OptimizationRule,
  tree: CodeTree,
  files: readonly PyFile[],
  ctx: TransformContext,
): OptimizationCandidate | SkippedOptimization {
  const unfit = rule.fits(ctx);
  if (unfit) return { name: rule.name, reason: unfit };
  if (files.length === 0) return { name: rule.name, reason: 'no Python files that parse' };
  const plan = rule.plan(files, ctx);
  if ('skip' in plan) return { name: rule.name, reason: plan.skip };
  const out: Record<string, string> = sortedTree(tree);
  const result: TransformResult = { ...unchanged(tree), tree: out };
  for (const f of files) {
    const fp = plan.files[f.path];
    if (!fp) continue;
    const { content, edits } = applySplices(f.path, f.src, fp.splices);
    out[f.path] = content;
    result.edits.push(...edits);
    result.hazards.push(...fp.hazards);
  }
  result.changed = Object.keys(tree).some((p) => out[p] !== tree[p]);
  if (!result.changed) return { name: rule.name, reason: 'the code already has it' };
  result.edits.sort(byFileLine);
  result.hazards.sort(byFileLine);
  result.numericsNotes = rule.risk === 'none' ? [] : [...new Set(plan.notes)].sort();
  result.numericsMayChange = rule.risk !== 'none';
  return {
    name: rule.name,
    title: rule.title,
    benefit: rule.benefit,
    risk: rule.risk,
    numericsMayChange: rule.risk !== 'none',
    criteria: rule.criteria,
    result,
  };
}

const isCandidate = (x: OptimizationCandidate | SkippedOptimization): x is OptimizationCandidate => 'result' in x;

/** Every candidate, applied or with the reason it was not proposed (rules in a fixed order). */
export async function surveyOptimizations(tree: CodeTree, ctx: TransformContext, opts: OptimizeOptions): Promise<OptimizationSurvey> {
  const files = await parseTree(tree, opts.python);
  const survey: OptimizationSurvey = { candidates: [], skipped: [] };
  for (const rule of OPTIMIZATION_RULES) {
    const r = evaluate(rule, tree, files, ctx);
    if (isCandidate(r)) survey.candidates.push(r);
    else survey.skipped.push(r);
  }
  return survey;
}

/** The candidates that apply to this code on this target and runtime, each with its candidate tree. */
export async function proposeOptimizations(tree: CodeTree, ctx: TransformContext, opts: OptimizeOptions): Promise<OptimizationCandidate[]> {
  return (await surveyOptimizations(tree, ctx, opts)).candidates;
}

export function optimizationRule(name: string): OptimizationRule | undefined {
  return OPTIMIZATION_RULES.find((r) => r.name === name);
}

/** One candidate as a transformation (unchanged tree when it does not apply). */
export function optimization(name: OptimizationName): Optimization {
  const rule = optimizationRule(name);
  if (!rule) throw new Error(`unknown optimization ${name}`);
  return async (tree, ctx, opts) => {
    const r = evaluate(rule, tree, await parseTree(tree, opts.python), ctx);
    return isCandidate(r) ? r.result : unchanged(tree);
  };
}

export const cudnnBenchmark = optimization('cudnn-benchmark');
export const matmulPrecisionHigh = optimization('matmul-precision-high');
export const autocastBf16 = optimization('autocast-bf16');
export const autocastFp16 = optimization('autocast-fp16');
export const dataloaderWorkers = optimization('dataloader-workers');
export const pinMemory = optimization('pin-memory');
export const persistentWorkers = optimization('persistent-workers');
export const torchCompile = optimization('torch-compile');
export const channelsLast = optimization('channels-last');

export interface AppliedOptimizations {
  tree: CodeTree;
  /** The candidates applied, in the order given; each result's edits are relative to the tree it was applied to. */
  applied: OptimizationCandidate[];
  /** Requested candidates that did not apply (at the point they were tried). */
  skipped: SkippedOptimization[];
}

/** Applies the named candidates one after another, each to the previous one's output. */
export async function applyOptimizations(
  tree: CodeTree,
  names: readonly string[],
  ctx: TransformContext,
  opts: OptimizeOptions,
): Promise<AppliedOptimizations> {
  const unknown = names.filter((n) => !(OPTIMIZATION_NAMES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`unknown optimization(s): ${unknown.join(', ')} (known: ${OPTIMIZATION_NAMES.join(', ')})`);
  const out: AppliedOptimizations = { tree, applied: [], skipped: [] };
  for (const name of names) {
    const r = evaluate(optimizationRule(name)!, out.tree, await parseTree(out.tree, opts.python), ctx);
    if (isCandidate(r)) {
      out.applied.push(r);
      out.tree = r.result.tree;
    } else out.skipped.push(r);
  }
  return out;
}
