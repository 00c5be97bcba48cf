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
 * Pure: the table's adaptor hands it the request, the files, the entry, the draft's preparation and
 * bounded workload, and applies what it returns.
 */
import type { PreparationSpec } from '../../../domain/jobs/planSchema.js';

/** Longer than this (seconds, the smoke run's estimate of the full run) and the step is proposed unasked. */
export const DEFAULT_RESUME_THRESHOLD_SEC = 600;

/** The request asks for a run that survives a lost machine. */
export const RESUMABLE_ASK = /\b(make (it|the (run|training)|this) (resumable|survive)|resumable|resume (it )?(after|from) (a )?(crash|interruption|checkpoint|lost)|surviv\w* (a |the )?(lost|dead|vanish\w*|lost) (machine|worker|lease)|checkpoint(ed|ing)? and resum\w*)\b/i;

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
export function trainsWithTorch(files: Readonly<Record<string, string>>): string | null {
  for (const [p, text] of Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (p.endsWith('.py') && /^\s*(import torch|from torch\b)/m.test(text) && /\.backward\(/.test(text)) return p;
  }
  return null;
}

export function decideCheckpointResume(input: ResumeInput): ResumeDecision {
  const asked = RESUMABLE_ASK.exec(input.request)?.[0] ?? null;
  const threshold = input.thresholdSec ?? DEFAULT_RESUME_THRESHOLD_SEC;
  const long = input.estimateSec !== null && input.estimateSec > threshold;
  if (input.alreadyResumable) {
    const detail = `the script checkpoints itself into the worker's checkpoint folder (${input.alreadyResumable.flag}), which the worker uploads and restores on the next attempt`;
    return { propose: false, why: detail, ask: asked ? { ask: asked, status: 'honoured', detail } : null };
  }
  if (!asked && !long) return { propose: false, why: `not asked, and ${input.estimateSec === null ? 'no estimate of the run is known yet' : `the run is estimated at ${Math.round(input.estimateSec)} s, within ${threshold} s`}`, ask: null };
  const trains = trainsWithTorch(input.files);
  if (!trains) {
    const detail = 'no PyTorch training loop to make resumable (no .backward() in a file that imports torch): if its machine is lost, the run restarts from the beginning';
    return { propose: false, why: detail, ask: asked ? { ask: asked, status: 'refused', detail } : null };
  }
  const why = asked ? `asked ("${asked}")` : `the run is estimated at ${Math.round(input.estimateSec!)} s, longer than ${threshold} s`;
  const detail = `the checkpoint-resume preparation step on ${trains}: the training loop saves its state between iterations into the worker's checkpoint folder and resumes from the newest checkpoint, kept only if a bounded run killed half-way and resumed ends bitwise equal to an uninterrupted one; otherwise (or if the loop is not one it recognises) the job runs without it and says so`;
  return { propose: true, step: RESUME_STEP, why, ask: asked ? { ask: asked, status: 'honoured', detail } : null };
}

/**
 * The draft's preparation with the step added: after the steps it has (a migration first, so the
 * rewrite reads migrated code), or a preparation of its own on the run's hardware.
 */
export function withResumeStep(preparation: PreparationSpec | null, draft: { bounded: string; hardware: { workload: string; accelVendor?: string }; scale?: PreparationSpec['workload']['scale'] | null; frozenFiles?: string[] }): PreparationSpec {
  if (preparation) {
    if (preparation.steps.some((s) => s.transformation === 'checkpoint-resume')) return preparation;
    return { ...preparation, steps: [...preparation.steps, RESUME_STEP] };
  }
  const here = { workload: draft.hardware.workload, ...(draft.hardware.accelVendor ? { accelVendor: draft.hardware.accelVendor } : {}) } as PreparationSpec['target'];
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
