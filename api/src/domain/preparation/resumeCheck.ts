/**
 * What the preparation stage does differently for a `checkpoint-resume` step (preparation/
 * checkpointResume.ts): its candidate run is the kill-and-resume check (chatgpu.resume_check) of
 * the bounded workload, three runs' worth of time, whose report is collected beside the outputs
 * and kept in the record and the evidence; its decisions say what a rejection means for the run
 * (no resume: a lost machine restarts it from step 0). Everything else is the stage's usual
 * candidate flow: static checks, the comparison of the uninterrupted run's outputs with the reference.
 */
import type { Task } from '../../generated/prisma/client.js';
import { CHECKPOINT_RESUME, formatTolerance, RESUME_CHECK_REPORT, resumeCheckCommand } from '../../preparation/checkpointResume.js';
import type { Hazard } from '../../preparation/types.js';
import { readBlobBuffer } from '../blobs/blobStore.js';
import type { ManifestEntry } from '../blobs/paths.js';
import type { Resources } from '../resources.js';

/** The check runs the workload once whole and once in two parts (plus the copy and three starts). */
const CHECK_TIMEOUT_FACTOR = 3;

export const WITHOUT_RESUME = 'The job runs without it: if its machine is lost (a drain or a lost lease), the run restarts from step 0.';

export function isResumeStep(step: { transformation: string }): boolean {
  return step.transformation === CHECKPOINT_RESUME;
}

/** The candidate task of a step: the bounded workload, or for checkpoint-resume its kill-and-resume check. */
export function candidateRun(
  step: { transformation: string; tolerance?: { rtol?: number; atol?: number } | null },
  command: string,
): { command: string; role: 'CANDIDATE' | 'RESUME_CHECK'; timeoutFactor?: number; outputs?: string[] } {
  if (!isResumeStep(step)) return { command, role: 'CANDIDATE' };
  return {
    command: resumeCheckCommand(command, step.tolerance),
    role: 'RESUME_CHECK',
    timeoutFactor: CHECK_TIMEOUT_FACTOR,
    outputs: [RESUME_CHECK_REPORT],
  };
}

export interface ResumeCheckReport {
  equal: boolean;
  problem?: string;
  differences?: string[];
  notCompared?: string[];
  uninterrupted?: { exitCode: number; steps?: number };
  killed?: { afterStep: number; signal: string | null };
  resumed?: { atStep: number | null };
  compared?: { stateEntries: number; outputFiles: number; lossLines: number };
  /** bitwise where the run is deterministic (CPU, deterministic algorithms); tolerance where it cannot be (CUDA, ROCm, MPS) or asked. */
  mode?: 'bitwise' | 'tolerance';
  /** Why that mode, e.g. "device cuda: non-deterministic kernels". */
  modeReason?: string;
  /** The tolerance of tolerance mode: the job's (source "job") or torch.testing's (source "default", float32's shown). */
  tolerance?: { rtol: number; atol: number; source?: 'job' | 'default' };
  /** The largest differences seen in tolerance mode, per part compared. */
  largestDifferences?: Partial<Record<'state' | 'outputs' | 'losses', { at: string; absolute: number; relative: number }>>;
}

/** How the runs were compared, in words: "bitwise equal", or "equal within rtol=…, atol=… (why)" and the largest difference. */
export function describeEquality(report: Pick<ResumeCheckReport, 'mode' | 'modeReason' | 'tolerance' | 'largestDifferences'>): string {
  if (report.mode !== 'tolerance' || !report.tolerance) return 'bitwise equal';
  const t = report.tolerance;
  const source = t.source === 'default' ? " torch.testing's defaults," : '';
  const largest = Object.values(report.largestDifferences ?? {}).reduce<{ at: string; absolute: number } | null>(
    (m, d) => (d && (!m || d.absolute > m.absolute) ? d : m),
    null,
  );
  const seen = largest ? `; largest difference ${largest.absolute.toExponential(2)} at ${largest.at}` : '; no difference seen';
  return `equal within${source} rtol=${formatTolerance(t.rtol)}, atol=${formatTolerance(t.atol)} (${report.modeReason ?? 'tolerance mode'}${seen})`;
}

/**
 * The check's report from a candidate task's outputs (a failed task keeps them on its attempt: the
 * worker uploads what exists whatever the exit code), or null when it wrote none.
 */
export async function readResumeCheck(r: Pick<Resources, 'blobs' | 'prisma'>, task: Task): Promise<ResumeCheckReport | null> {
  const fromResult = (task.result as { outputs?: ManifestEntry[] } | null)?.outputs;
  const outputs =
    fromResult ??
    (task.currentAttemptId
      ? ((await r.prisma.attempt.findUnique({ where: { id: task.currentAttemptId }, select: { outputs: true } }))?.outputs as
          ManifestEntry[] | null)
      : null) ??
    [];
  const entry = outputs.find((o) => o.path === RESUME_CHECK_REPORT);
  if (!entry) return null;
  try {
    return JSON.parse((await readBlobBuffer(r.blobs, entry.sha256)).toString('utf8')) as ResumeCheckReport;
  } catch {
    return null;
  }
}

/** The report in words, for a record's reason. */
export function describeResumeCheck(report: ResumeCheckReport | null): string {
  if (!report) return 'the kill-and-resume check wrote no report';
  if (report.equal && report.compared) {
    const c = report.compared;
    const skipped = report.notCompared?.length ? ` (not compared: ${report.notCompared.join('; ')})` : '';
    return `killed with SIGKILL after step ${report.killed?.afterStep} of ${report.uninterrupted?.steps} and resumed in a fresh process at step ${report.resumed?.atStep}, the run ended ${describeEquality(report)} to the uninterrupted one: final state (${c.stateEntries} entries: parameters, optimizer/scheduler/scaler state, carried values, RNG), ${c.outputFiles} output file(s) and ${c.lossLines} logged loss line(s)${skipped}`;
  }
  const compared =
    report.mode === 'tolerance' && report.tolerance
      ? ` (compared within rtol=${formatTolerance(report.tolerance.rtol)}, atol=${formatTolerance(report.tolerance.atol)}: ${report.modeReason ?? 'tolerance mode'})`
      : '';
  return `the kill-and-resume check found the resumed run different${compared}: ${report.problem ?? (report.differences ?? []).slice(0, 5).join('; ')}`;
}

/** Why a program was left unchanged by the rewrite (its error hazards: the refusal's reasons; else its notes). */
export function unchangedReason(hazards: Hazard[]): string {
  const refusals = hazards.filter((h) => h.severity === 'error');
  if (refusals.length)
    return `Not made resumable: ${refusals.map((h) => `${h.file ? `${h.file}${h.line ? `:${h.line}` : ''}: ` : ''}${h.what.replace(/^not made resumable: /, '')}`).join('; ')}. ${WITHOUT_RESUME}`;
  const notes = hazards.map((h) => h.what).join('; ');
  return `No change: ${notes || 'the rewrite finds nothing to change'}.`;
}
