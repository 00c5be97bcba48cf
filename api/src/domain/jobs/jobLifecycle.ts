/**
 * The job engine: the only code that writes Job.status (invariant 10; docs/architecture.md).
 *
 *                 startPlanning          askUser
 *   DRAFT ───────────────────▶ PLANNING ◀───────▶ NEEDS_INPUT
 *                                │      resumePlanning
 *                acceptPlan      │ acceptPlan (code needs a preparation step)
 *             (code fits) ┌──────┴──────────┐
 *                         ▼                 ▼
 *                      RUNNING ◀──────── PREPARING ⟲ acceptCandidate | rejectCandidate | freeze
 *                         │      startRun
 *   askDuringRun ⇅ resumeRun (the run supervisor's question: RUNNING ⇄ NEEDS_INPUT)
 *   replan: RUNNING → PLANNING (the run supervisor hands the job back to the planner with the
 *           evidence; the criteria fixed by the first plan stay)
 *                         │ startValidation
 *                         ▼
 *                     VALIDATING ──succeed──▶ SUCCEEDED
 *
 *   every non-final status ──fail──▶ FAILED · ──cancel──▶ CANCELLED · ──stopAtCap──▶ STOPPED
 *
 * Each transition is one conditional UPDATE (`… WHERE id = $1 AND status IN (allowed)`), so
 * two writers can never both move a job: the loser's update matches no row and gets an
 * InvalidTransitionError naming the status it found — never a silent overwrite. The job
 * event is recorded in the same transaction, and events are published only after commit
 * (`commitTransition` does both; callers already inside a transaction publish themselves
 * with `publishJobEvents`). SUCCEEDED, FAILED, CANCELLED and STOPPED are final: no
 * transition leaves them.
 *
 * The PREPARING self-transitions (acceptCandidate, rejectCandidate, freeze) change no
 * status but are still conditional: a decision about a candidate lands only while the job
 * is PREPARING, so a cancel that commits first makes a late decision fail instead of
 * writing into a cancelled job.
 */
import type { JobStatus, Prisma as P } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import { ConflictError } from '../errors.js';
import type { Resources } from '../resources.js';
import { recordJobEvent } from './jobEvents.js';
import { ACTIVE_JOB_STATUSES as ACTIVE, isFinalJobStatus } from './jobStatus.js';
import { lockJob } from '../../db/sql/lockJob.js';

/** Every transition: the statuses it may start from and the one it ends in. */
export const TRANSITIONS = {
  startPlanning: { from: ['DRAFT'], to: 'PLANNING' },
  askUser: { from: ['PLANNING'], to: 'NEEDS_INPUT' },
  resumePlanning: { from: ['NEEDS_INPUT'], to: 'PLANNING' },
  /** The run supervisor asks the user (a failure only they can decide); the answer resumes the run. */
  askDuringRun: { from: ['RUNNING'], to: 'NEEDS_INPUT' },
  resumeRun: { from: ['NEEDS_INPUT'], to: 'RUNNING' },
  acceptPlan: { from: ['PLANNING'], to: 'RUNNING' },
  /** The run supervisor hands a running job back to the planner with the evidence (take_action replan). */
  replan: { from: ['RUNNING'], to: 'PLANNING' },
  startPreparation: { from: ['PLANNING'], to: 'PREPARING' },
  acceptCandidate: { from: ['PREPARING'], to: 'PREPARING' },
  rejectCandidate: { from: ['PREPARING'], to: 'PREPARING' },
  freeze: { from: ['PREPARING'], to: 'PREPARING' },
  startRun: { from: ['PREPARING'], to: 'RUNNING' },
  startValidation: { from: ['RUNNING'], to: 'VALIDATING' },
  succeed: { from: ['VALIDATING'], to: 'SUCCEEDED' },
  fail: { from: ACTIVE, to: 'FAILED' },
  cancel: { from: ACTIVE, to: 'CANCELLED' },
  stopAtCap: { from: ACTIVE, to: 'STOPPED' },
} as const satisfies Record<string, { from: readonly JobStatus[]; to: JobStatus }>;

export type TransitionName = keyof typeof TRANSITIONS;

/**
 * A transition was asked of a job whose status does not allow it (e.g. the job was
 * cancelled meanwhile). A ConflictError, so mutations return it as ConflictError.
 */
export class InvalidTransitionError extends ConflictError {
  constructor(
    readonly jobId: string,
    readonly transition: TransitionName,
    readonly current: JobStatus | null,
  ) {
    super(
      current === null
        ? `Job ${jobId} does not exist.`
        : isFinalJobStatus(current)
          ? `The job is already ${current.toLowerCase()}${transition === 'cancel' ? '' : `; it cannot ${describe(transition)}`}.`
          : `The job is ${current.toLowerCase().replace('_', ' ')}; it cannot ${describe(transition)} now.`,
    );
  }
  /** The job is in a final status: whoever asked should stop working on it. */
  get jobIsFinal(): boolean {
    return this.current !== null && isFinalJobStatus(this.current);
  }
}

function describe(t: TransitionName): string {
  const words: Record<TransitionName, string> = {
    startPlanning: 'start planning',
    askUser: 'ask the user',
    resumePlanning: 'resume planning',
    askDuringRun: 'ask the user during the run',
    resumeRun: 'resume the run',
    acceptPlan: 'accept a plan',
    replan: 'be handed back to the planner',
    startPreparation: 'start preparing',
    acceptCandidate: 'accept a candidate',
    rejectCandidate: 'reject a candidate',
    freeze: 'freeze its code',
    startRun: 'start the run',
    startValidation: 'start validating',
    succeed: 'succeed',
    fail: 'fail',
    cancel: 'be cancelled',
    stopAtCap: 'be stopped at its cap',
  };
  return words[t];
}

/** Job columns a transition may set besides status (timestamps are set by the engine). */
export type TransitionData = Pick<P.JobUncheckedUpdateManyInput, 'currentPlanId' | 'acceptanceCriteria' | 'frozenCodeId'>;

export interface TransitionOptions {
  /** In plain words; shown on the job page (Job.statusReason) and in the job.status event. */
  reason: string | null;
  data?: TransitionData;
  /** Extra fields for the job.status event (e.g. the candidate a decision was about). */
  detail?: Record<string, P.InputJsonValue>;
  /**
   * Narrows the statuses the transition may start from (e.g. fail only a job that is
   * still PLANNING): a reaction that is about one status must not act on a later one.
   */
  onlyFrom?: readonly JobStatus[];
}

export interface TransitionResult {
  jobId: string;
  transition: TransitionName;
  from: JobStatus;
  to: JobStatus;
  /** Job events recorded in the transaction, to publish after commit. */
  eventIds: string[];
}

/**
 * Applies a transition inside the caller's transaction. Throws InvalidTransitionError when
 * the job's status does not allow it; nothing is written then.
 */
export async function applyTransition(
  tx: Db,
  now: Date,
  jobId: string,
  name: TransitionName,
  opts: TransitionOptions,
): Promise<TransitionResult> {
  const t = TRANSITIONS[name];
  const from: readonly JobStatus[] = opts.onlyFrom ? t.from.filter((s: JobStatus) => opts.onlyFrom!.includes(s)) : t.from;
  // The status it moves from, read under the row lock the UPDATE needs (db/sql/lockJob.ts).
  const current = await lockJob(tx, jobId);
  if (current === null || !from.includes(current)) throw new InvalidTransitionError(jobId, name, current);
  const moved = await tx.job.updateMany({
    where: { id: jobId, status: { in: [...from] } },
    data: {
      status: t.to,
      ...(current !== t.to || opts.reason !== null ? { statusReason: opts.reason } : {}),
      ...(t.to === 'RUNNING' ? { startedAt: now } : {}),
      ...(isFinalJobStatus(t.to) ? { finishedAt: now } : {}),
      ...opts.data,
    },
  });
  if (moved.count !== 1) throw new InvalidTransitionError(jobId, name, current);
  const eventId = await recordJobEvent(tx, jobId, 'job.status', {
    status: t.to,
    from: current,
    transition: name,
    ...(opts.reason ? { reason: opts.reason } : {}),
    ...(opts.detail ?? {}),
  });
  return { jobId, transition: name, from: current, to: t.to, eventIds: [eventId] };
}

/** Publishes a committed transaction's job events (and the job row change). */
export async function publishJobEvents(r: Pick<Resources, 'events'>, jobId: string, eventIds: readonly string[]): Promise<void> {
  for (const eventId of eventIds) await r.events.emit({ type: 'job.event', jobId, eventId });
  if (eventIds.length) await r.events.emit({ type: 'job.updated', jobId });
}

/**
 * Runs `fn` and the transition it returns in one transaction, then publishes its events.
 * `fn` does the transition's companion writes (a question, a plan, tasks) with the same
 * transaction and returns what it recorded.
 */
export async function commitTransition<T extends { eventIds: string[] }>(
  r: Resources,
  jobId: string,
  fn: (tx: Db, now: Date) => Promise<T>,
): Promise<T> {
  const now = r.now();
  const result = await r.prisma.$transaction((tx) => fn(tx, now), { timeout: 30_000, maxWait: 10_000 });
  await publishJobEvents(r, jobId, result.eventIds);
  return result;
}

/** A single transition in its own transaction, published after commit. */
export function transition(r: Resources, jobId: string, name: TransitionName, opts: TransitionOptions): Promise<TransitionResult> {
  return commitTransition(r, jobId, (tx, now) => applyTransition(tx, now, jobId, name, opts));
}

/**
 * Like `transition`, but a job that has moved on (e.g. cancelled, or already moved by
 * another process) is not an error: returns null. For reactions that may arrive late or
 * twice (a task finishing after a cancel, an event seen by several API processes).
 */
export async function transitionIfAllowed(
  r: Resources,
  jobId: string,
  name: TransitionName,
  opts: TransitionOptions,
): Promise<TransitionResult | null> {
  try {
    return await transition(r, jobId, name, opts);
  } catch (err) {
    if (err instanceof InvalidTransitionError) return null;
    throw err;
  }
}
