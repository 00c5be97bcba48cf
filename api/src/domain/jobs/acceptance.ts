/**
 * The acceptance checks: pure functions of the job's criteria (fixed when the plan was
 * accepted, invariant 6) and what a task reported. They return the problems in plain
 * words; an empty list means the check passed. No I/O here — the job engine's callers
 * (domain/jobs/advanceJob.ts) load the task and act on the answer.
 */

export type MetricOp = '<' | '<=' | '>' | '>=';

export interface MetricThreshold {
  name: string;
  op: MetricOp;
  value: number;
}

export interface EvaluationCriteria {
  /** The checkpoint among the run's outputs that the evaluation reloads. */
  checkpoint: string;
  /** Reloads the checkpoint and evaluates it; runs on a worker (an EVALUATE task). */
  command: string;
  /** Thresholds on what the evaluation reports. */
  metrics?: MetricThreshold[] | null;
  /** Metrics the evaluation must report (with or without a threshold): a missing one fails the job. */
  reports?: string[] | null;
}

export interface Criteria {
  exitCode: number;
  /** Paths that must be among the outputs; one ending in `/` is a folder that must hold at least one file. */
  requiredFiles: string[];
  metrics: MetricThreshold[];
  evaluate?: EvaluationCriteria | null;
}

/** What a finished task reported (its accepted result). */
export interface TaskReport {
  exitCode?: number | null;
  outputs?: { path: string }[] | null;
  /** The last reported value of each metric. */
  metrics?: Record<string, number> | null;
}

/** Problems with a finished run (RUN or merged SHARDs) against the criteria. */
export function checkRun(criteria: Criteria, report: TaskReport): string[] {
  const problems: string[] = [];
  const exitCode = report.exitCode ?? 0;
  if (exitCode !== criteria.exitCode) problems.push(`the exit code was ${exitCode}, not ${criteria.exitCode}`);
  const produced = new Set((report.outputs ?? []).map((o) => o.path));
  for (const f of criteria.requiredFiles) {
    // A folder (`outputs/figures/`) is required to hold at least one file: an output the user asked for.
    if (f.endsWith('/')) {
      if (![...produced].some((p) => p.startsWith(f))) problems.push(`the required folder ${f} holds no file`);
    } else if (!produced.has(f)) problems.push(`the required file ${f} was not produced`);
  }
  if (criteria.evaluate && !produced.has(criteria.evaluate.checkpoint)) {
    problems.push(`the checkpoint ${criteria.evaluate.checkpoint} was not produced, so it cannot be evaluated`);
  }
  problems.push(...checkMetrics(criteria.metrics, report.metrics ?? {}));
  return problems;
}

/** Problems with the evaluation of the checkpoint (an EVALUATE task). */
export function checkEvaluation(criteria: Criteria, report: TaskReport): string[] {
  const evaluation = criteria.evaluate;
  if (!evaluation) return ['the plan has no evaluation step'];
  const problems: string[] = [];
  const exitCode = report.exitCode ?? 0;
  if (exitCode !== 0) problems.push(`the evaluation exited with code ${exitCode}`);
  const metrics = report.metrics ?? {};
  const thresholds = evaluation.metrics ?? [];
  for (const name of evaluation.reports ?? []) {
    if (metrics[name] === undefined && !thresholds.some((t) => t.name === name)) problems.push(`the evaluation never reported ${name}`);
  }
  problems.push(...checkMetrics(thresholds, metrics));
  return problems;
}

export function checkMetrics(thresholds: readonly MetricThreshold[], metrics: Record<string, number>): string[] {
  const problems: string[] = [];
  for (const t of thresholds) {
    const v = metrics[t.name];
    if (v === undefined || !Number.isFinite(v)) {
      problems.push(v === undefined ? `the metric ${t.name} was never reported` : `the metric ${t.name} was ${v}`);
      continue;
    }
    if (!meets(v, t)) problems.push(`${t.name} was ${round(v)}, the criterion is ${t.op} ${t.value}`);
  }
  return problems;
}

function meets(v: number, t: MetricThreshold): boolean {
  switch (t.op) {
    case '<':
      return v < t.value;
    case '<=':
      return v <= t.value;
    case '>':
      return v > t.value;
    case '>=':
      return v >= t.value;
  }
}

/** "accuracy 0.9312, loss 0.2" — the first few metrics, for a status line. */
export function summarizeMetrics(metrics: Record<string, number>, max = 6): string {
  return Object.entries(metrics)
    .slice(0, max)
    .map(([k, v]) => `${k} ${round(v)}`)
    .join(', ');
}

function round(v: number): number {
  return Number(v.toPrecision(4));
}
