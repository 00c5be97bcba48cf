/**
 * The run supervisor: an agent on the durable loop (agents/loop.ts), started by the
 * pipeline when an attempt of a RUN/SHARD/EVALUATE task fails or a task is out of
 * retries, a run is stalled, a worker flaps, and after a job stopped at its cap or whose
 * output missed its criteria (then it explains; the job stays as it ended). It reads the job (get_job, list_eligible_workers, search_logs), acts within the
 * job's scope and limits (take_action) and saves what it learned (remember); findings are
 * shown to its next run by get_job, so a remedy that did not work is not repeated.
 * One supervisor run per job at a time: it takes the job's agent lock like every agent,
 * and every side effect verifies the lock inside its transaction.
 */
import { latestRun, unseenAnswers } from '../../domain/agents/agentRuns.js';
import type { Resources } from '../../domain/resources.js';
import { runAgentTurn, type RunOptions, type TurnResult } from '../loop.js';
import type { ModelClient } from '../models/types.js';
import type { AgentDef } from '../tool.js';
import { getJob, listEligibleWorkers, remember, searchLogsTool, takeAction } from './tools.js';

export const SUPERVISOR: AgentDef = {
  name: 'supervisor',
  instructions: `You are the supervisor of a ChatGPU job: a task of it failed on a contributor's worker, and you decide what happens next.
- Start with get_job: the tasks, their attempts (error class, message, worker), the cost against the cap, and the findings earlier supervisor runs saved (what was tried, and what to check).
- Name the cause from the evidence (search_logs for the lines; the attempt's error class and message).
- OOM: retry on a worker with more memory (list_eligible_workers with a higher minMemoryMiB, then take_action retry with that minMemoryMiB) if one is online; otherwise stop_with_explanation naming the memory the run had.
- The same task lost or failing with an infrastructure error (WORKER_ERROR, DOWNLOAD_FAILED, UPLOAD_FAILED, SANDBOX_ERROR, LEASE_EXPIRED) twice on one worker: reassign it off that worker (avoidWorkerIds) or onto another eligible worker (onWorkerId).
- DEPENDENCY, a package the setup could not install: name it from the logs; when another eligible worker installs packages, ask_user whether to retry there or stop (choices); otherwise stop_with_explanation with the installer's message. A missing package is not fixed by retrying on the same worker.
- DEPENDENCY, a module missing at run time ("missing module: X"): the plan itself must change — take_action replan with the evidence in text (the attempt, the worker, "missing module: X" and the error line); the planner then installs it when the project's requirements provide it, or says what the user must add. Replan at most once for the same cause; after a replan that did not help, stop_with_explanation.
- candidate_rejected (a required preparation step's candidate failed compilation or its numerical check; the job is PREPARING): send the evidence to the preparation agent — take_action request_revision with the step and, in text, what failed (file, line, message; the numbers that differ) and what to change; or, when the change cannot pass (the budget shows it, or the evidence says it is impossible here), stop_with_explanation. The output and quality requirements stay as they are.
- candidate_accepted (the revision you requested passed its checks): remember "Follow-up: resolved" for it, with evidence preparation:<step>:<revision> and trigger candidate_accepted.
- replan is for evidence that the plan is wrong (not for a worker's fault): the job's unfinished work is cancelled and the planner plans again; the acceptance criteria stay as they are.
- stalled (a running attempt printed nothing for a while, its worker alive): remember what you saw (the last log lines, how long it has been silent); do not stop a run that may still be working.
- worker_flapping (a worker lost several attempts of any job within a short window): remember it, then reassign each of this job's QUEUED tasks off that worker (avoidWorkerIds) when another eligible worker can run them; a RUNNING task is left alone.
- stopped_at_cap (the job was stopped at its spending cap; it is final): remember what the money went to (billed per task, the contributors' lost work apart) and what finishing would take (the estimate, if any); nothing else can be done.
- output_rejected (the result missed the fixed acceptance criteria; the job failed): remember which criterion was missed and by how much, with the evidence (search_logs for warnings, NaN, errors); the criteria are never relaxed.
- When the user answers your question, act on the answer (reassign to the worker they chose, or stop_with_explanation).
- Never repeat a remedy a finding says was tried and did not work; never retry blindly; stay within the plan's hardware class and the task's attempts.
- Before acting, remember what you saw, the remedy and the follow-up to check. When the trigger is task_succeeded after a remedy, remember "Follow-up: resolved" with what worked. Then stop with a one-line summary.`,
  tools: [getJob, listEligibleWorkers, searchLogsTool, takeAction, remember],
};

/** What started a supervisor run, given to it as its first message. */
export interface SupervisorTrigger {
  /**
   * task_succeeded: after a remedy, to record whether it worked (the follow-up).
   * stalled: the attempt is alive (lease renewed) but wrote no log line or metric for STALL_MIN minutes.
   * worker_flapping: `workerId` lost `lost` attempts within `windowMin` (domain/workers/flapping.ts).
   * stopped_at_cap, output_rejected: the job has ended (REVIEWS_FINAL_JOB): the run explains it.
   * candidate_rejected: a required preparation step's candidate failed its checks and the budget
   * allows a revision: request_revision sends the evidence to the preparation agent (or stop).
   * candidate_accepted: the revision it requested passed its checks — record the follow-up (also
   * when the job has ended since: REVIEWS_FINAL_JOB).
   */
  reason:
    | 'attempt_failed'
    | 'task_failed'
    | 'task_succeeded'
    | 'stalled'
    | 'worker_flapping'
    | 'stopped_at_cap'
    | 'output_rejected'
    | 'candidate_rejected'
    | 'candidate_accepted';
  /** candidate_rejected: the required preparation step whose candidate failed its checks, the revision the stage would make next, and the checks' feedback (shortened). */
  step?: string;
  revision?: number;
  feedback?: string;
  /** The task concerned (none for stopped_at_cap and worker_flapping). */
  taskId?: string;
  attemptId?: string | null;
  errorClass?: string | null;
  workerId?: string;
  lost?: number;
  windowMin?: number;
}

/**
 * Triggers whose run waits for the job's lock when another run holds it (an attempt_failed
 * run the same tick started, say) instead of leaving the decision to that holder, which
 * knows nothing of this trigger. Safe to run after another process ran the same one: the
 * finding they save names the trigger, and a second run sees it and says so.
 */
export const WAITS_FOR_LOCK: ReadonlySet<SupervisorTrigger['reason']> = new Set([
  'worker_flapping',
  'stopped_at_cap',
  'output_rejected',
  'candidate_rejected',
  'candidate_accepted',
]);

/**
 * Triggers that may come after the job ended: the run looks back at it (RunOptions.reviewsFinalJob).
 * candidate_accepted too: the accepted revision's full run starts at once and may end the job
 * before the follow-up is recorded (CI saw that: the finding was never written).
 */
export const REVIEWS_FINAL_JOB: ReadonlySet<SupervisorTrigger['reason']> = new Set([
  'stopped_at_cap',
  'output_rejected',
  'candidate_accepted',
]);

const MAX_TURNS = 2;
/** A run's first message: the trigger as JSON after this prefix (parseTrigger reads it back). */
export const TRIGGER_PREFIX = 'Trigger: ';

/**
 * One supervisor run for a trigger (a new run each time; earlier runs speak through their
 * findings). `locked`: another process's agent holds the job — it decides, not this one.
 */
/**
 * The user answered the supervisor's question: its latest run (or `runId`, one a crash cut
 * off) continues with the answer as a user message (once), then acts on it. Null when there
 * is no such run left to resume.
 */
export async function resumeSupervisor(
  r: Resources,
  model: ModelClient,
  jobId: string,
  extra: Pick<RunOptions, 'afterAction'> = {},
  runId?: string,
): Promise<TurnResult | null> {
  const run = runId ? await r.prisma.agentRun.findUnique({ where: { id: runId } }) : await latestRun(r, jobId, SUPERVISOR.name);
  if (!run || run.jobId !== jobId || run.status === 'COMPLETED' || run.status === 'FAILED') return null;
  const input = await unseenAnswers(r, jobId, run.id, run.id);
  // A run that looks back at the ended job (a crash cut it off) goes on looking back.
  const opts = { ...extra, ...(REVIEWS_FINAL_JOB.has((await triggerOf(r, run.id))?.reason as never) ? { reviewsFinalJob: true } : {}) };
  return moreTurns(r, model, jobId, await runAgentTurn(r, { jobId, agent: SUPERVISOR, model, runId: run.id, input, ...opts }), opts);
}

/** The trigger a supervisor run was started with (its first message), or null. */
async function triggerOf(r: Resources, runId: string): Promise<SupervisorTrigger | null> {
  const first = await r.prisma.agentItem.findFirst({
    where: { runId, type: 'message' },
    orderBy: { seq: 'asc' },
    select: { payload: true },
  });
  return parseTrigger((first?.payload as { content?: unknown } | undefined)?.content);
}

/** A run's first message back to its trigger (null when it is not one). */
export function parseTrigger(text: unknown): SupervisorTrigger | null {
  if (typeof text !== 'string' || !text.startsWith(TRIGGER_PREFIX)) return null;
  try {
    return JSON.parse(text.slice(TRIGGER_PREFIX.length)) as SupervisorTrigger;
  } catch {
    return null;
  }
}

/** Further turns of a run still RUNNING after its first, up to MAX_TURNS in all. */
async function moreTurns(
  r: Resources,
  model: ModelClient,
  jobId: string,
  first: TurnResult,
  extra: Pick<RunOptions, 'afterAction' | 'reviewsFinalJob'>,
): Promise<TurnResult> {
  let res = first;
  for (let turn = 1; turn < MAX_TURNS && res.status === 'RUNNING' && res.stopReason !== 'locked'; turn++) {
    res = await runAgentTurn(r, { jobId, agent: SUPERVISOR, model, runId: res.runId, ...extra });
  }
  return res;
}

export async function runSupervisor(
  r: Resources,
  model: ModelClient,
  jobId: string,
  trigger: SupervisorTrigger,
  extra: Pick<RunOptions, 'afterAction'> = {},
): Promise<TurnResult> {
  const opts = { ...extra, ...(REVIEWS_FINAL_JOB.has(trigger.reason) ? { reviewsFinalJob: true } : {}) };
  return moreTurns(
    r,
    model,
    jobId,
    await runAgentTurn(r, {
      jobId,
      agent: SUPERVISOR,
      model,
      input: [{ type: 'message', role: 'user', content: `${TRIGGER_PREFIX}${JSON.stringify(trigger)}` }],
      ...opts,
    }),
    opts,
  );
}
