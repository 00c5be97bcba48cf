/**
 * TypeScript front of the output comparison helper shipped with the worker
 * (worker/python/chatgpu/compare.py): runs it on two runs' outputs and types its JSON report.
 * The helper needs numpy (and torch for .pt/.pth files); pick the interpreter with findPython.
 */
import { runProcess } from './pythonAst.js';
import { inRepo } from '../paths.js';

export const COMPARE_HELPER = inRepo('worker/python/chatgpu/compare.py');

export interface Tolerance {
  rtol?: number;
  atol?: number;
}

/** The job's acceptance criteria for outputs (all optional; defaults are assert_close's). */
export interface ComparisonCriteria {
  /** Per dtype ("float32", "float16", "bfloat16", …). */
  tolerances?: Record<string, Tolerance>;
  /** Per tensor name (dotted, as in the report). */
  tensors?: Record<string, Tolerance>;
  /** Per metric name in metrics JSON files; "default" for the rest; a list's name covers its elements. */
  metrics?: Record<string, Tolerance>;
  /** Per relative path: "ignore" or "text". */
  files?: Record<string, 'ignore' | 'text'>;
  equal_nan?: boolean;
  /** Files only the candidate wrote pass (default true). */
  allow_extra_files?: boolean;
}

export interface TensorComparison {
  name: string;
  ok: boolean;
  problem: string | null;
  dtype_reference?: string;
  dtype_candidate?: string;
  dtype_match?: boolean;
  shape_reference?: number[];
  shape_candidate?: number[];
  shape_match?: boolean;
  numel?: number;
  max_abs_error?: number | 'nan' | 'inf' | null;
  max_rel_error?: number | 'nan' | 'inf' | null;
  /** Share of elements outside tolerance, 0…1. */
  mismatched_fraction?: number | null;
  rtol?: number | null;
  atol?: number | null;
  suspicious?: string[];
  reference?: unknown;
  candidate?: unknown;
}

export interface MetricComparison {
  name: string;
  ok: boolean;
  problem: string | null;
  reference?: unknown;
  candidate?: unknown;
  abs_error?: number | 'nan' | 'inf';
  rtol?: number;
  atol?: number;
}

export interface FileComparison {
  path: string;
  kind: 'tensors' | 'metrics' | 'text' | 'binary' | 'missing' | 'extra' | 'ignored' | 'error';
  ok: boolean;
  problem?: string | null;
  tensors?: TensorComparison[];
  metrics?: MetricComparison[];
  line?: number;
  reference?: string | null;
  candidate?: string | null;
}

export interface ComparisonReport {
  ok: boolean;
  files: FileComparison[];
  /** Anti-cheating flags ("out.pt: logits: candidate is (nearly) constant while the reference varies"). */
  suspicious: string[];
  summary: { files: number; failed: number; tensors: number; tensors_failed: number };
}

export class ComparisonError extends Error {
  readonly code = 'COMPARISON_FAILED';
}

export async function compareOutputs(opts: {
  reference: string;
  candidate: string;
  python: string;
  criteria?: ComparisonCriteria;
  allowPickle?: boolean;
  helper?: string;
  timeoutMs?: number;
}): Promise<ComparisonReport> {
  const args = [opts.helper ?? COMPARE_HELPER, '--reference', opts.reference, '--candidate', opts.candidate];
  if (opts.criteria) args.push('--criteria-json', JSON.stringify(opts.criteria));
  if (opts.allowPickle) args.push('--allow-pickle');
  const r = await runProcess(opts.python, args, null, opts.timeoutMs ?? 300_000);
  let parsed: unknown;
  try {
    parsed = JSON.parse(r.stdout);
  } catch {
    throw new ComparisonError(`compare helper exited ${r.code} without a report: ${r.stderr.slice(-2000)}`);
  }
  if (r.code === 2 || (parsed as { error?: string }).error) {
    throw new ComparisonError(`compare helper could not compare: ${(parsed as { error?: string }).error ?? r.stderr.slice(-2000)}`);
  }
  return parsed as ComparisonReport;
}
