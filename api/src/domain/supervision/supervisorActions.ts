/**
 * The supervisor's side effects (its `take_action` and `remember` tools), each run inside
 * the agent loop's Action transaction (which has already verified the agent lock) and
 * checked again there against the job's scope and limits — the tool's pre-dispatch check
 * read the same facts earlier, outside the transaction.
 *
 *   retryTask   a task of this job, FAILED (or QUEUED for another try) → QUEUED now, with
 *               optional changes: more memory (never less), kept off the workers it failed
 *               on (any other eligible worker may take it), or placed on one named worker. Only while the job is
 *               RUNNING, within the task's attempt budget, never against its pinned worker,
 *               never to another hardware class than the plan's, never past the spending cap
 *               (the claim's projection: it would not be leased).
 *   askDuringRun a question with choices (RUNNING → NEEDS_INPUT); the answer resumes the run
 *               and the supervisor's run (answerQuestion, agents/agentTurns.ts).
 *   replanJob   the job's unfinished work cancelled and the job handed back to the planner
 *               (RUNNING → PLANNING) with the evidence, at most MAX_REPLANS times per job; the
 *               new plan keeps the acceptance criteria the first one fixed (acceptPlan).
 *   requestRevision  a required preparation step whose candidate was rejected, with its revision
 *               budget left: the supervisor's evidence for the preparation agent (a
 *               `revision.requested` job event the pipeline hands to the preparer with the
 *               checks' own feedback); only the step the stage is waiting on.
 *   failJob     the job engine's `fail`, with the explanation (stop_with_explanation).
 *   noteOnJob   a line on the job's event log.
 *   saveFinding a Finding row (what was observed, evidence, hypothesis, follow-up).
 */
import type { Prisma as P } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { recordJobEvent } from '../jobs/jobEvents.js';
import { applyTransition } from '../jobs/jobLifecycle.js';
import { askUser, type AskUserInput } from '../jobs/askUser.js';
import { cancelOutstandingWork } from '../jobs/outstandingWork.js';
import { pendingRevision } from '../preparation/stage.js';
import type { Resources } from '../resources.js';
import type { Rates } from '../../db/sql/claimTasks.js';
import { avoidedWorkers, capProblem } from '../workers/placement.js';
import { countedAttempts } from '../leases/retryOrFail.js';
import { moveTasks } from '../leases/taskLifecycle.js';

export class SupervisorActionRefused extends ConflictError {}

export interface RetryChanges {
  minMemoryMiB?: number;
  /** Place the retry on this worker (it must be online and able to run the task). */
  onWorkerId?: string;
  /** Keep the retry off these workers (e.g. the one it keeps failing on); any other may take it. */
  avoidWorkerIds?: string[];
  /** Must be the task's own accelerator vendor ('none' for CPU): the plan's hardware class. */
  accelVendor?: string;
}

/**
 * Why a retry with these changes is out of the job's scope or limits, or null. Reads only;
 * `retryTask` calls it inside its transaction, the tool's check before dispatch.
 */
export async function retryProblem(
  db: Db,
  jobId: string,
  taskId: string,
  c: RetryChanges,
  cap?: { rates: Rates; now: Date },
): Promise<string | null> {
  const task = await db.task.findUnique({ where: { id: taskId }, include: { job: { select: { status: true } } } });
  if (!task || task.jobId !== jobId) return `Task ${taskId} is not a task of this job.`;
  if (task.job.status !== 'RUNNING') return `The job is ${task.job.status}: only a RUNNING job's tasks are retried.`;
  if (task.status !== 'FAILED' && task.status !== 'QUEUED')
    return `Task ${task.name} is ${task.status}: only a FAILED or QUEUED task can be retried.`;
  if (countedAttempts(task) >= task.maxAttempts)
    return `Task ${task.name} used its ${task.maxAttempts} attempts: the attempt budget is spent.`;
  if (c.accelVendor !== undefined && c.accelVendor !== (task.accelVendor ?? 'none')) {
    return `The plan runs task ${task.name} on ${task.accelVendor ?? 'none'} hardware; ${c.accelVendor} is outside it (replanning is not an action of this supervisor).`;
  }
  if (c.minMemoryMiB !== undefined && c.minMemoryMiB < task.minMemoryMiB)
    return `minMemoryMiB ${c.minMemoryMiB} is below the task's ${task.minMemoryMiB}: a retry never asks for less.`;
  if (c.onWorkerId !== undefined) {
    if (task.pinnedWorkerId !== null && task.pinnedWorkerId !== c.onWorkerId)
      return `Task ${task.name} is pinned to another worker; its placement is not changed.`;
    const w = await db.worker.findUnique({ where: { id: c.onWorkerId } });
    const mem = Math.max(task.minMemoryMiB, c.minMemoryMiB ?? 0);
    if (!w || w.status !== 'ONLINE') return `Worker ${c.onWorkerId} is not online.`;
    if (
      !w.workloads.includes(task.workload) ||
      (task.accelVendor !== null && task.accelVendor !== w.accelVendor) ||
      w.memoryMiB < mem ||
      w.accelMemMiB < task.minAccelMemMiB
    ) {
      return `Worker ${w.name} cannot run task ${task.name} (see list_eligible_workers).`;
    }
  } else if (c.minMemoryMiB !== undefined || c.avoidWorkerIds?.length) {
    const mem = Math.max(task.minMemoryMiB, c.minMemoryMiB ?? 0);
    const avoid = [...new Set([...avoidedWorkers(task.requirements), ...(c.avoidWorkerIds ?? [])])];
    if (task.pinnedWorkerId !== null && avoid.includes(task.pinnedWorkerId))
      return `Task ${task.name} is pinned to a worker the retry should avoid; its placement is not changed.`;
    const fits = await db.worker.count({
      where: {
        status: 'ONLINE',
        workloads: { has: task.workload },
        memoryMiB: { gte: mem },
        id: { notIn: avoid },
        ...(task.accelVendor ? { accelVendor: task.accelVendor } : {}),
      },
    });
    if (fits === 0) {
      return avoid.length
        ? `No other online worker${mem > task.minMemoryMiB ? ` with ${mem} MiB of memory` : ''} can run task ${task.name}.`
        : `No online worker has ${mem} MiB of memory for task ${task.name}.`;
    }
  }
  if (cap) {
    // The spending cap, as the claim would see the retry (its memory included).
    const over = await capProblem(db, cap.rates, cap.now, {
      ...task,
      minMemoryMiB: Math.max(task.minMemoryMiB, c.minMemoryMiB ?? 0),
    });
    if (over) return `A retry of task ${task.name} would not be leased: ${over.replace(/^Waiting: leasing it/, 'leasing it')}`;
  }
  return null;
}

export async function retryTask(tx: Db, now: Date, jobId: string, taskId: string, c: RetryChanges, reason: string, rates?: Rates) {
  const problem = await retryProblem(tx, jobId, taskId, c, rates ? { rates, now } : undefined);
  if (problem) throw new SupervisorActionRefused(problem);
  const task = await tx.task.findUniqueOrThrow({ where: { id: taskId } });
  const avoid = c.avoidWorkerIds?.length ? [...new Set([...avoidedWorkers(task.requirements), ...c.avoidWorkerIds])] : null;
  const requirements = {
    ...(task.requirements as Record<string, unknown>),
    ...(c.minMemoryMiB !== undefined ? { minMemoryMiB: c.minMemoryMiB } : {}),
    // The claim leaves these workers out (db/sql/claimTasks.ts).
    ...(avoid ? { avoidWorkers: avoid } : {}),
  };
  // Conditional on the status read above: a claim or a completion that moved the task
  // meanwhile wins, and nothing is written.
  const moved = await moveTasks(tx, { id: taskId }, [task.status], 'QUEUED', {
    statusReason: reason,
    currentAttemptId: null,
    runAfter: now,
    finishedAt: null,
    requirements: requirements as P.InputJsonValue,
    ...(c.minMemoryMiB !== undefined ? { minMemoryMiB: c.minMemoryMiB } : {}),
    ...(c.onWorkerId !== undefined ? { pinnedWorkerId: c.onWorkerId } : {}),
  });
  if (moved !== 1) throw new SupervisorActionRefused(`Task ${task.name} changed while the retry was decided; look again.`);
  const eventId = await recordJobEvent(tx, jobId, 'task.status', { taskId, name: task.name, status: 'QUEUED', reason, by: 'supervisor' });
  return {
    taskId,
    name: task.name,
    status: 'QUEUED' as const,
    minMemoryMiB: c.minMemoryMiB ?? task.minMemoryMiB,
    onWorkerId: c.onWorkerId ?? task.pinnedWorkerId,
    eventIds: [eventId],
  };
}

/** A job is replanned at most this many times: a plan that keeps failing is stopped, not replanned forever. */
export const MAX_REPLANS = 2;

/** The evidence of each time the run supervisor handed the job back to the planner, oldest first. */
export async function replans(db: Db, jobId: string): Promise<{ at: Date; evidence: string }[]> {
  const rows = await db.jobEvent.findMany({
    where: { jobId, kind: 'job.status', payload: { path: ['transition'], equals: 'replan' } },
    orderBy: { id: 'asc' },
    select: { createdAt: true, payload: true },
  });
  return rows.map((e) => ({ at: e.createdAt, evidence: String((e.payload as { evidence?: unknown }).evidence ?? '') }));
}

/** Why the job cannot be replanned now, or null: only a RUNNING job, within MAX_REPLANS. */
export async function replanProblem(db: Db, jobId: string): Promise<string | null> {
  const job = await db.job.findUnique({ where: { id: jobId }, select: { status: true } });
  if (!job) return `Job ${jobId} not found.`;
  if (job.status !== 'RUNNING') return `The job is ${job.status}: only a RUNNING job is handed back to the planner.`;
  const done = (await replans(db, jobId)).length;
  if (done >= MAX_REPLANS) return `The job was replanned ${done} times already (at most ${MAX_REPLANS}): stop with an explanation instead.`;
  return null;
}

/**
 * Hands the job back to the planner with the evidence: its unfinished work cancelled (the
 * workers holding it are returned, to be told after commit), RUNNING → PLANNING. The pipeline
 * starts a planner run on `job.replanned` (or the reconcile, after a crash).
 */
export async function replanJob(tx: Db, r: Pick<Resources, 'config'>, now: Date, jobId: string, evidence: string) {
  const problem = await replanProblem(tx, jobId);
  if (problem) throw new SupervisorActionRefused(problem);
  const workers = await cancelOutstandingWork(tx, r, now, jobId, 'Cancelled: the run supervisor handed the job back to the planner.');
  // The old plan's finished tasks never move the job again (the engine and the reconcile look at
  // SUCCEEDED and FAILED tasks of a RUNNING job); their attempts keep what happened.
  await moveTasks(tx, { jobId }, ['SUCCEEDED', 'FAILED'], 'CANCELLED', {
    statusReason: 'Superseded: the run supervisor handed the job back to the planner (its attempts keep what happened).',
  });
  const t = await applyTransition(tx, now, jobId, 'replan', {
    reason: `Planning again with the run supervisor's evidence: ${evidence.slice(0, 1500)}`,
    detail: { evidence },
  });
  return { status: t.to, workers, eventIds: t.eventIds };
}

/** Why a revision of `step` cannot be requested now, or null: only the step the preparation stage waits on, within its budget. */
export async function revisionProblem(r: Resources, jobId: string, step: string): Promise<string | null> {
  const job = await r.prisma.job.findUnique({ where: { id: jobId }, select: { status: true } });
  if (!job) return `Job ${jobId} not found.`;
  if (job.status !== 'PREPARING') return `The job is ${job.status}: revisions are requested only while it is being prepared.`;
  const pending = await pendingRevision(r, jobId);
  if (!pending) return 'No preparation step is waiting for a revision (no candidate was rejected, or the revision budget is spent).';
  if (pending.step.name !== step)
    return `Step ${step} is not waiting for a revision; ${pending.step.name} is (revision ${pending.revision} of ${pending.budget}).`;
  return null;
}

/** The supervisor's request for the revision the stage waits on: its evidence, for the preparation agent. */
export async function requestRevision(tx: Db, r: Resources, jobId: string, step: string, evidence: string) {
  const problem = await revisionProblem(r, jobId, step);
  if (problem) throw new SupervisorActionRefused(problem);
  const pending = (await pendingRevision(r, jobId))!;
  const eventId = await recordJobEvent(tx, jobId, 'revision.requested', {
    step,
    revision: pending.revision,
    budget: pending.budget,
    text: evidence,
    by: 'supervisor',
  });
  return { step, revision: pending.revision, eventIds: [eventId] };
}

/** The supervisor's revision request for this step and revision, if it made one. */
export async function revisionRequest(db: Db, jobId: string, step: string, revision: number): Promise<{ text: string } | null> {
  const e = await db.jobEvent.findFirst({
    where: {
      jobId,
      kind: 'revision.requested',
      AND: [{ payload: { path: ['step'], equals: step } }, { payload: { path: ['revision'], equals: revision } }],
    },
    orderBy: { id: 'desc' },
    select: { payload: true },
  });
  return e ? { text: String((e.payload as { text?: unknown }).text ?? '') } : null;
}

export async function failJob(tx: Db, now: Date, jobId: string, explanation: string) {
  const t = await applyTransition(tx, now, jobId, 'fail', { reason: explanation });
  return { status: t.to, eventIds: t.eventIds };
}

/** Why the supervisor cannot ask now, or null: only a RUNNING job, one open question at a time. */
export async function askProblem(db: Db, jobId: string): Promise<string | null> {
  const job = await db.job.findUnique({
    where: { id: jobId },
    select: { status: true, _count: { select: { questions: { where: { status: 'OPEN' } } } } },
  });
  if (!job) return `Job ${jobId} not found.`;
  if (job.status !== 'RUNNING') return `The job is ${job.status}: the supervisor asks only while it runs.`;
  if (job._count.questions > 0) return 'A question to the user is already open; wait for the answer.';
  return null;
}

/** The supervisor's question: RUNNING → NEEDS_INPUT until the user answers (answerQuestion resumes the run). */
export async function askDuringRun(tx: Db, now: Date, input: AskUserInput) {
  const problem = await askProblem(tx, input.jobId);
  if (problem) throw new SupervisorActionRefused(problem);
  return askUser(tx, now, input, 'askDuringRun');
}

export async function noteOnJob(tx: Db, jobId: string, text: string) {
  const eventId = await recordJobEvent(tx, jobId, 'finding', { source: 'supervisor', note: true, text });
  return { eventIds: [eventId] };
}

export interface FindingInput {
  observation: string;
  evidence?: string[];
  hypothesis?: string;
  followUp?: string;
  taskId?: string;
  /** What was tried (e.g. `retry_more_memory`), so the next run does not repeat a failed remedy. */
  remedy?: string;
  /** The error class the finding is about (the next run compares it with a new failure's). */
  errorClass?: string;
  /** The trigger it answers (e.g. stopped_at_cap), so another run for the same trigger does not say it again. */
  trigger?: string;
}

export async function saveFinding(tx: Db, jobId: string, f: FindingInput) {
  if (f.taskId) {
    const task = await tx.task.findUnique({ where: { id: f.taskId }, select: { jobId: true } });
    if (!task || task.jobId !== jobId) throw new NotFoundError('Task', f.taskId);
  }
  const data = JSON.parse(
    JSON.stringify({
      evidence: f.evidence ?? [],
      hypothesis: f.hypothesis ?? null,
      followUp: f.followUp ?? null,
      taskId: f.taskId ?? null,
      remedy: f.remedy ?? null,
      errorClass: f.errorClass ?? null,
      trigger: f.trigger ?? null,
    }),
  ) as P.InputJsonValue;
  const row = await tx.finding.create({ data: { jobId, source: 'supervisor', text: f.observation, data } });
  const eventId = await recordJobEvent(tx, jobId, 'finding', {
    findingId: row.id,
    source: 'supervisor',
    text: f.observation,
    hypothesis: f.hypothesis ?? null,
    followUp: f.followUp ?? null,
  });
  return { findingId: row.id, eventIds: [eventId] };
}
