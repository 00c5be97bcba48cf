/**
 * Rule: a PyTorch training run that may outlive its machine gets the optional `checkpoint-resume`
 * preparation step (preparation/checkpointResume.ts): proposed when the user asks for it ("make it
 * resumable", "survive a lost machine") or when the run's estimate is longer than a threshold
 * (default 10 minutes), and the project trains with PyTorch (a `.backward()` call in a file that
 * imports torch: the rewriter itself decides, at the stage, whether it can make the loop resumable,
 * and records why not when it cannot). Not proposed when the script already checkpoints into the
 * worker's folder (commandArgs' `resumable`) or has no PyTorch training loop; an ask it cannot
 * honour is refused with why. The step is optional: a candidate the kill-and-resume check rejects
 * leaves the job running without it, and the record says a lost machine then restarts it from step 0.
 *
 * The estimate: the builtin planner has none before the smoke run, so a smoke run whose estimate is over
 * the threshold hands the job back to it (domain/preparation/resumeReplan.ts), with the estimate and the
 * threshold in the replan's evidence, which this rule reads back.
 *
 * `decideCheckpointResume` is pure; `checkpointResume`, the rule of the table (after preparationSteps),
 * applies it to the draft: the step in the preparation, the ask's disposition, and a bounded workload of
 * two epochs where it had one (the check stops the run between two iterations of its loop).
 */
import type { AskDisposition, PreparationSpec } from '../../../domain/jobs/planSchema.js';
import { flagName, setFlag } from './flags.js';
import type { PlannerRule } from './planning.js';
import { boundedArgs, boundedScale } from './workload.js';
import { resumeEvidence, trainsWithTorch } from '../../../domain/preparation/resumeReplan.js';

/** Longer than this (seconds, the smoke run's estimate of the full run) and the step is proposed unasked. */
export const DEFAULT_RESUME_THRESHOLD_SEC = 600;

/** The request asks for a run that survives a lost machine. */
export const RESUMABLE_ASK =
  /\b(make (it|the (run|training)|this) (resumable|survive)|resumable|resume (it )?(after|from) (a )?(crash|interruption|checkpoint|lost)|surviv\w* (a |the )?(lost|dead|vanish\w*|lost) (machine|worker|lease)|checkpoint(ed|ing)? and resum\w*)\b/i;

export interface ResumeInput {
  request: string;
  /** The project's files (path → text); only Python files are read. */
  files: Readonly<Record<string, string>>;
  /** The full run's estimate in seconds, when one is known (the smoke run's); null otherwise. */
  estimateSec: number | null;
  thresholdSec?: number;
  /** The script already checkpoints into the worker's folder and resumes from it (a flag for it). */
  alreadyResumable: { flag: string } | null;
}

type Step = PreparationSpec['steps'][number];

export type ResumeDecision =
  | { propose: true; step: Step; why: string; ask: { ask: string; status: 'honoured'; detail: string } | null }
  | { propose: false; why: string; ask: { ask: string; status: 'honoured' | 'refused'; detail: string } | null };

export const RESUME_STEP: Step = { name: 'resume', kind: 'adaptation', transformation: 'checkpoint-resume', required: false };

/** Whether the project has a PyTorch training loop the rewriter may recognise: a backward() in a file that imports torch. */
export { trainsWithTorch };

export function decideCheckpointResume(input: ResumeInput): ResumeDecision {
  const asked = RESUMABLE_ASK.exec(input.request)?.[0] ?? null;
  const threshold = input.thresholdSec ?? DEFAULT_RESUME_THRESHOLD_SEC;
  const long = input.estimateSec !== null && input.estimateSec > threshold;
  if (input.alreadyResumable) {
    const detail = `the script checkpoints itself into the worker's checkpoint folder (${input.alreadyResumable.flag}), which the worker uploads and restores on the next attempt`;
    return { propose: false, why: detail, ask: asked ? { ask: asked, status: 'honoured', detail } : null };
  }
  if (!asked && !long)
    return {
      propose: false,
      why: `not asked, and ${input.estimateSec === null ? 'no estimate of the run is known yet' : `the run is estimated at ${Math.round(input.estimateSec)} s, within ${threshold} s`}`,
      ask: null,
    };
  const trains = trainsWithTorch(input.files);
  if (!trains) {
    const detail =
      'no PyTorch training loop to make resumable (no .backward() in a file that imports torch): if its machine is lost, the run restarts from the beginning';
    return { propose: false, why: detail, ask: asked ? { ask: asked, status: 'refused', detail } : null };
  }
  const why = asked ? `asked ("${asked}")` : `the run is estimated at ${Math.round(input.estimateSec!)} s, longer than ${threshold} s`;
  const detail = `the checkpoint-resume preparation step on ${trains}: the training loop saves its state between iterations into the worker's checkpoint folder and resumes from the newest checkpoint, kept only if a bounded run killed half-way and resumed ends bitwise equal to an uninterrupted one (on a GPU's non-deterministic kernels: equal within the job's tolerance, the reason recorded); otherwise (or if the loop is not one it recognises) the job runs without it and says so`;
  return { propose: true, step: RESUME_STEP, why, ask: asked ? { ask: asked, status: 'honoured', detail } : null };
}

/**
 * The draft's preparation with the step added: after the steps it has (a migration first, so the
 * rewrite reads migrated code), or a preparation of its own on the run's hardware.
 */
export function withResumeStep(
  preparation: PreparationSpec | null,
  draft: {
    bounded: string;
    hardware: { workload: string; accelVendor?: string };
    scale?: PreparationSpec['workload']['scale'] | null;
    frozenFiles?: string[];
  },
): PreparationSpec {
  if (preparation) {
    if (preparation.steps.some((s) => s.transformation === 'checkpoint-resume')) return preparation;
    return { ...preparation, steps: [...preparation.steps, RESUME_STEP] };
  }
  const here = {
    workload: draft.hardware.workload,
    ...(draft.hardware.accelVendor ? { accelVendor: draft.hardware.accelVendor } : {}),
  } as PreparationSpec['target'];
  return {
    workload: { command: draft.bounded, timeoutSec: 900, ...(draft.scale ? { scale: draft.scale } : {}) },
    compare: ['outputs'],
    reference: here,
    target: here,
    steps: [RESUME_STEP],
    revisionBudget: 0,
    frozenFiles: draft.frozenFiles ?? [],
    pinRun: false,
  };
}

/** The rule of the table: see the file's header. Never ends the turn (submitPlan does). */
export const checkpointResume: PlannerRule = (p) => {
  const files: Record<string, string> = { [p.entry.path]: p.source };
  for (const f of p.uploaded) if (f.endsWith('.py') && !(f in files)) files[f] = p.readOf(f) ?? '';
  // The smoke run's estimate, when the job came back from it to be made resumable (domain/preparation/resumeReplan.ts).
  const long = resumeEvidence(p.task);
  const d = decideCheckpointResume({
    request: p.request,
    files,
    estimateSec: long?.estimateSec ?? null,
    thresholdSec: long?.thresholdSec,
    alreadyResumable: p.resumable ? { flag: p.resumable.flag ?? `${p.resumable.path}/` } : null,
  });
  // What one plan cannot combine with it yet (a settings rewrite, a data step, shards): said, not tried.
  const blocked = d.propose
    ? p.askPlan.edits.length
      ? 'the settings you named are rewritten in the code, and one plan cannot yet both rewrite settings and add the checkpoint-resume step'
      : p.before.length
        ? `the run needs a data-preparation step first (${p.before[0]!.command}), and one plan cannot yet have both`
        : p.sharding?.spec
          ? 'the run is split into shards that each run briefly; a lost shard is run again'
          : null
    : null;
  const ask: AskDisposition | null = d.ask
    ? {
        ask: d.ask.ask,
        kind: 'other',
        status: blocked ? 'refused' : d.ask.status,
        detail: blocked ? `not made resumable: ${blocked}; if its machine is lost, the run restarts from the beginning` : d.ask.detail,
      }
    : null;
  if (ask) {
    // The asks rule may have read the same words as an ask of its own: this disposition replaces it.
    const same = (x: AskDisposition) =>
      x.ask.toLowerCase().includes(ask.ask.toLowerCase()) || ask.ask.toLowerCase().includes(x.ask.toLowerCase());
    const at = p.dispositions.findIndex(same);
    p.dispositions =
      at >= 0 ? [...p.dispositions.slice(0, at), ask, ...p.dispositions.slice(at + 1).filter((x) => !same(x))] : [...p.dispositions, ask];
  }
  if (!d.propose || blocked) return undefined;
  // Two epochs where the bounded workload has one: the check needs two iterations of the loop to stop between.
  let args = boundedArgs(p.entry, p.args);
  let scale = boundedScale(p.entry, p.args, p.configSettings) ?? null;
  const epochs = p.entry.flags.find((f) => /^(num-)?epochs?$/.test(flagName(f)));
  if (epochs && scale?.unit === 'epoch' && scale.bounded < 2 && scale.full >= 2) {
    args = setFlag(args, [epochs.flag], '2', p.entry.cli === 'configurator');
    scale = { ...scale, bounded: 2 };
  }
  const bounded = [p.runner, ...args].join(' ');
  const prepared = withResumeStep(p.preparation as PreparationSpec | null, {
    bounded,
    hardware: p.hardware,
    scale,
    frozenFiles: p.evaluate && p.evaluate.command.includes('.py') ? [p.evaluate.command.split(' ')[1]!] : [],
  });
  p.preparation = { ...prepared, workload: { ...prepared.workload, command: bounded, ...(scale ? { scale } : {}) } };
  p.bounded = bounded;
  // The preparation's runs test the plan on its hardware: no smoke run beside them (planSchema).
  p.smoke = null;
  return undefined;
};
