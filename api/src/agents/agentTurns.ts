/**
 * The agents' side of a job's life (docs/architecture.md). The job engine
 * (domain/jobs/engine.ts) moves jobs after their tasks end and calls the job's transitions
 * (domain/jobs/jobLifecycle.ts); AgentTurns runs agent turns — on the domain's agent events,
 * and when the engine asks (it is the engine's `EngineAgents`):
 *
 *   job.created        → startPlanning (DRAFT → PLANNING), then planner turns until the
 *                         planner submits a plan (acceptPlan), asks the user (askUser) or
 *                         gives up (fail)
 *   job.replanned      → (the run supervisor's replan: RUNNING → PLANNING) a new planner run
 *                         whose brief carries the evidence and the fixed criteria
 *   question.answered  → (resumed) the agent that asked continues from its saved history with
 *                         the answers: the planner, or the run supervisor (then the engine moves
 *                         the job's failed tasks on)
 *   attempt.stalled    → (the tick: alive but silent for STALL_MIN minutes) the run supervisor
 *   attempt.failed     → (an infrastructure failure the engine retries) the run supervisor
 *   worker.flapping    → the run supervisor of each job whose work the worker lost
 *   job.capped, output.rejected → the run supervisor looks back at the ended job (explains)
 *
 *   the engine asks:
 *   judgeFinishedTask  → a FAILED run / shard / evaluation: the run supervisor first — it may
 *                         retry the task (the job then waits for it) or ask the user (the answer
 *                         moves it); a SUCCEEDED one after a supervisor's remedy: the follow-up
 *   revise             → a required preparation step was rejected with budget left: the run
 *                         supervisor looks (candidate_rejected: request_revision with its
 *                         evidence, or stop), then the preparer agent proposes a revision
 *   reconcile          → what a crashed process left behind: planner runs with no live lock,
 *                         supervisor runs a crash cut off
 *
 * Events reach every API process (graphql/pubsub.ts), so several may react to the same
 * one: the agent lock lets one planner run per job, and the engine's conditional
 * transitions let one reaction move the job; the others do nothing.
 */
import type { TaskKind } from '../generated/prisma/client.js';
import type { EventBus, DomainEvent } from '../domain/events.js';
import {
  answersToAgent,
  latestRun,
  openQuestionCount,
  orphanedPlanning,
  orphanedSupervision,
  touchJob,
  unseenAnswers,
  userMessages,
} from '../domain/agents/agentRuns.js';
import { QUIET_MS, SUPERVISED_KINDS, type EngineAgents, type FinishedTask, type JobEngine } from '../domain/jobs/engine.js';
import { loadJob } from '../domain/jobs/jobQueries.js';
import { transitionIfAllowed } from '../domain/jobs/jobLifecycle.js';
import { isFinalJobStatus } from '../domain/jobs/jobStatus.js';
import type { Resources } from '../domain/resources.js';
import { LOCK_LEASE_MS, runAgentTurn } from './loop.js';
import type { Item, ModelClient } from './models/types.js';
import { PLANNER } from './planner/planner.js';
import { PREPARER } from './preparer.js';
import { hasRemedy } from '../domain/supervision/findings.js';
import { replans, revisionRequest } from '../domain/supervision/supervisorActions.js';
import { resumeSupervisor, REVIEWS_FINAL_JOB, runSupervisor, WAITS_FOR_LOCK, type SupervisorTrigger } from './supervisor/supervisor.js';

const MAX_PLANNER_TURNS = 6;
const MAX_PREPARER_TURNS = 3;
/** How often a waiting supervisor trigger tries the job's lock again. */
const LOCK_WAIT_MS = 500;

/** Calls `attempt` again while another agent holds the job's lock, LOCK_WAIT_MS apart, for at most two lock leases. */
async function whileLocked<T extends string>(attempt: () => Promise<'locked' | T>): Promise<'locked' | T> {
  for (let waited = 0; ; waited += LOCK_WAIT_MS) {
    const res = await attempt();
    if (res !== 'locked' || waited >= 2 * LOCK_LEASE_MS) return res;
    await new Promise((done) => setTimeout(done, LOCK_WAIT_MS));
  }
}

export interface AgentTurnsOptions {
  /** Passed to every agent turn (crash tests inject a kill after a side effect). */
  afterAction?: (toolName: string) => void | Promise<void>;
}

export class AgentTurns implements EngineAgents {
  private readonly active = new Set<string>();
  private off: (() => void) | null = null;
  private engine: JobEngine | null = null;

  constructor(
    private readonly r: Resources,
    private readonly model: ModelClient,
    private readonly opts: AgentTurnsOptions = {},
  ) {}

  /** Becomes the engine's agents: the engine consults them on finished tasks, revisions and the reconcile. */
  attach(engine: JobEngine): void {
    this.engine = engine;
    engine.useAgents(this);
  }

  /** Starts reacting to the domain's agent events; `stop` ends it (and leaves the engine on its own). */
  listen(bus: EventBus): void {
    this.off = bus.on(
      (e) =>
        e.type === 'job.created' ||
        e.type === 'question.answered' ||
        e.type === 'attempt.failed' ||
        e.type === 'attempt.stalled' ||
        e.type === 'worker.flapping' ||
        e.type === 'job.capped' ||
        e.type === 'output.rejected' ||
        e.type === 'job.replanned',
      (e) => this.react(e),
    );
  }

  stop(): void {
    this.off?.();
    this.off = null;
    this.engine?.useAgents(null);
    this.engine = null;
  }

  private react(e: DomainEvent): void {
    switch (e.type) {
      case 'job.created':
        void this.background(`plan:${e.jobId}`, () => this.startPlanning(e.jobId));
        break;
      case 'job.replanned':
        void this.background(`plan:${e.jobId}`, () => this.startPlanning(e.jobId));
        break;
      case 'question.answered':
        if (e.resumed && e.agent === 'supervisor') void this.background(`supervise:${e.jobId}`, () => this.resumeSupervision(e.jobId));
        else if (e.resumed) void this.background(`plan:${e.jobId}`, () => this.resumePlanning(e.jobId));
        break;
      case 'attempt.failed':
        if (SUPERVISED_KINDS.has(e.kind))
          void this.background(`attempt:${e.attemptId}`, () =>
            this.supervise(e.jobId, { reason: 'attempt_failed', taskId: e.taskId, attemptId: e.attemptId, errorClass: e.errorClass }),
          );
        break;
      case 'attempt.stalled':
        void this.background(`stalled:${e.attemptId}`, () =>
          this.supervise(e.jobId, { reason: 'stalled', taskId: e.taskId, attemptId: e.attemptId }),
        );
        break;
      case 'worker.flapping':
        for (const jobId of e.jobIds)
          void this.background(`flapping:${e.workerId}:${jobId}`, () =>
            this.supervise(jobId, { reason: 'worker_flapping', workerId: e.workerId, lost: e.lost, windowMin: e.windowMin }),
          );
        break;
      case 'job.capped':
        void this.background(`capped:${e.jobId}`, () => this.supervise(e.jobId, { reason: 'stopped_at_cap' }));
        break;
      case 'output.rejected':
        void this.background(`rejected:${e.taskId}`, () => this.supervise(e.jobId, { reason: 'output_rejected', taskId: e.taskId }));
        break;
    }
  }

  /** Runs `fn` in the background, once per key at a time; errors are logged, never thrown into a request. */
  private background(key: string, fn: () => Promise<unknown>): Promise<void> {
    if (this.active.has(key)) return Promise.resolve();
    this.active.add(key);
    return fn()
      .then(() => undefined)
      .catch((err) => this.r.log.error('agent turn failed', { key, message: (err as Error).message, stack: (err as Error).stack }))
      .finally(() => this.active.delete(key));
  }

  /** Resolves when this process's background work is done (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.active.size) await new Promise((r) => setTimeout(r, 20));
  }

  /**
   * A planner run from the job's brief: a new job (DRAFT → PLANNING), or one the run supervisor
   * handed back (replan: PLANNING already) — then the brief carries its evidence and the
   * criteria the first plan fixed, and a new planner run starts (the first one completed).
   */
  private async startPlanning(jobId: string): Promise<void> {
    await transitionIfAllowed(this.r, jobId, 'startPlanning', { reason: 'The planner is reading the project.' });
    // After a replan the supervisor that replanned may still hold the job's agent lock (its
    // turn goes on after the call): the planner waits its turn (bounded: two lock leases).
    await whileLocked(() => this.startPlannerRun(jobId));
  }

  /** `locked`: after a replan, another agent held the job and no planner run started. */
  private async startPlannerRun(jobId: string): Promise<'locked' | 'done'> {
    const job = await loadJob(this.r, jobId);
    if (job.status !== 'PLANNING') return 'done';
    const replanned = await replans(this.r.prisma, jobId);
    const latest = replanned.length ? await latestRun(this.r, jobId, PLANNER.name) : null;
    if (latest && latest.createdAt > replanned.at(-1)!.at) return 'done'; // another process's planner run has it
    const task = [
      `Job title: ${job.title}`,
      `Request: ${job.request}`,
      `Hardware preference: ${job.hardwarePreference ?? 'any'}`,
      `Spending cap: ${job.spendingCapCad ? `${job.spendingCapCad.toString()} CAD` : 'none'}`,
      ...replanned.map((p, i) => `Replan ${i + 1}: the run supervisor handed the job back after the run failed. Evidence: ${p.evidence}`),
      ...(replanned.length && job.acceptanceCriteria
        ? [`Acceptance criteria (fixed by the first plan; the new plan keeps them): ${JSON.stringify(job.acceptanceCriteria)}`]
        : []),
    ].join('\n');
    // After a replan the new run starts with what the user already answered the planner.
    const answered = replanned.length ? await answersToAgent(this.r, jobId, PLANNER.name) : [];
    const res = await this.planTurns(jobId, [{ type: 'message', role: 'user', content: task }, ...answered]);
    // A new job's lock held by another process's planner: that one plans it.
    return replanned.length ? res : 'done';
  }

  private async resumePlanning(jobId: string): Promise<void> {
    const run = await latestRun(this.r, jobId, PLANNER.name);
    if (!run) return this.startPlanning(jobId);
    // The answers the run has not seen yet become user messages in its history.
    await this.planTurns(jobId, await unseenAnswers(this.r, jobId, run.id), run.id);
  }

  /** `locked`: the first turn found another agent holding the job (no turn ran). */
  private async planTurns(jobId: string, input: Item[], runId?: string): Promise<'locked' | 'done'> {
    let id = runId;
    let next = input;
    for (let turn = 0; turn < MAX_PLANNER_TURNS; turn++) {
      const res = await runAgentTurn(this.r, {
        jobId,
        agent: PLANNER,
        model: this.model,
        input: next,
        ...(id ? { runId: id } : {}),
        ...(this.opts.afterAction ? { afterAction: this.opts.afterAction } : {}),
      });
      if (res.stopReason === 'locked') return turn === 0 ? 'locked' : 'done'; // another process plans it
      if (res.stopReason === 'job_final') return 'done'; // it is over
      id = res.runId;
      next = [];
      if (res.status === 'WAITING') return 'done';
      if (res.status === 'COMPLETED') {
        await transitionIfAllowed(this.r, jobId, 'fail', {
          reason: 'The planner finished without a plan. See its steps for what it found.',
          onlyFrom: ['PLANNING'],
        });
        return 'done';
      }
      if (isFinalJobStatus((await loadJob(this.r, jobId)).status)) return 'done';
      if (res.stopReason === 'model_error' || res.stopReason === 'model_timeout')
        await new Promise((r) => setTimeout(r, 1000 * (turn + 1)));
    }
    await transitionIfAllowed(this.r, jobId, 'fail', {
      reason: `The planner did not reach a plan within ${MAX_PLANNER_TURNS} turns.`,
      onlyFrom: ['PLANNING'],
    });
    return 'done';
  }

  /**
   * A rejected required step with budget left: the run supervisor looks first (candidate_rejected)
   * — it sends its evidence with the revision (request_revision) or stops the job; then the
   * preparer revises, with the checks' feedback and the supervisor's evidence. A supervisor that
   * did neither leaves the stage's bounded revision to go on; one holding the job elsewhere
   * (locked) leaves it to the next event.
   */
  async revise(jobId: string, step: string, revision: number, feedback: string): Promise<void> {
    let asked = await revisionRequest(this.r.prisma, jobId, step, revision);
    if (!asked) {
      const seen = await this.supervise(jobId, { reason: 'candidate_rejected', step, revision, feedback: feedback.slice(0, 1500) });
      if (seen === 'locked') return;
      if ((await loadJob(this.r, jobId)).status !== 'PREPARING') return; // stopped with an explanation
      asked = await revisionRequest(this.r.prisma, jobId, step, revision);
    }
    await this.preparerTurns(jobId, step, revision, asked?.text ? `${feedback}\n\nThe run supervisor: ${asked.text}` : feedback);
  }

  /**
   * A revision the run supervisor requested whose candidate then passed its checks (ACCEPTED):
   * the supervisor records the follow-up (candidate_accepted), once per revision.
   */
  async afterPreparationPass(jobId: string): Promise<void> {
    const requests = await this.r.prisma.jobEvent.findMany({ where: { jobId, kind: 'revision.requested' }, select: { payload: true } });
    for (const q of requests) {
      const { step, revision } = q.payload as { step: string; revision: number };
      const record = await this.r.prisma.preparationRecord.findUnique({
        where: { jobId_step_revision: { jobId, step, revision } },
        select: { outcome: true },
      });
      if (record?.outcome !== 'ACCEPTED') continue;
      const recorded = await this.r.prisma.finding.count({
        where: {
          jobId,
          AND: [
            { data: { path: ['trigger'], equals: 'candidate_accepted' } },
            { data: { path: ['evidence'], array_contains: [`preparation:${step}:${revision}`] } },
          ],
        },
      });
      if (!recorded) await this.supervise(jobId, { reason: 'candidate_accepted', step, revision });
    }
  }

  /** The preparer agent's turn for a rejected required step (its patch emits preparation.step). */
  private async preparerTurns(jobId: string, step: string, revision: number, feedback: string): Promise<void> {
    const message = `Step ${step}, revision ${revision}: the previous candidate was rejected.\n\n${feedback}`;
    const run = await latestRun(this.r, jobId, PREPARER.name);
    // One preparer run per job; a new revision appends the new feedback to its history.
    const seen = run ? await userMessages(this.r, run.id) : new Set<string>();
    if (run && seen.has(message) && run.status !== 'RUNNING') {
      // The agent already had this revision and ended its turn without a patch or a stop.
      await transitionIfAllowed(this.r, jobId, 'fail', {
        reason: `The preparation agent ended without proposing revision ${revision} of ${step} or explaining why it cannot. Last feedback: ${feedback.slice(0, 1500)}`,
        onlyFrom: ['PREPARING'],
      });
      return;
    }
    let input: Item[] = seen.has(message) ? [] : [{ type: 'message', role: 'user', content: message }];
    let runId = run?.id;
    for (let turn = 0; turn < MAX_PREPARER_TURNS; turn++) {
      const res = await runAgentTurn(this.r, {
        jobId,
        agent: PREPARER,
        model: this.model,
        input,
        ...(runId ? { runId } : {}),
        ...(this.opts.afterAction ? { afterAction: this.opts.afterAction } : {}),
      });
      if (res.stopReason === 'locked' || res.stopReason === 'job_final' || res.status === 'WAITING') return;
      if (res.status === 'COMPLETED') {
        if (res.stopReason === 'done') {
          await transitionIfAllowed(this.r, jobId, 'fail', {
            reason: `The preparation agent ended without proposing revision ${revision} of ${step}: ${res.finalText?.slice(0, 1000) ?? 'no explanation'}`,
            onlyFrom: ['PREPARING'],
          });
        }
        return;
      }
      runId = res.runId;
      input = [];
      if (res.stopReason === 'model_error' || res.stopReason === 'model_timeout')
        await new Promise((r) => setTimeout(r, 1000 * (turn + 1)));
    }
    await transitionIfAllowed(this.r, jobId, 'fail', {
      reason: `The preparation agent did not propose revision ${revision} of ${step} within ${MAX_PREPARER_TURNS} turns (the model failed or kept working). Last feedback: ${feedback.slice(0, 1500)}`,
      onlyFrom: ['PREPARING'],
    });
  }

  /**
   * A finished task, before the engine moves the job on: a FAILED run, shard or evaluation goes
   * to the run supervisor first (it may queue it again: the engine then sees a newer attempt and
   * leaves the job alone). When another process's agent holds the job, that one decides (the
   * reconcile comes back to the task if nobody moves the job).
   */
  async judgeFinishedTask(task: FinishedTask): Promise<'advance' | 'hold'> {
    if (task.status === 'FAILED' && SUPERVISED_KINDS.has(task.kind)) {
      const res = await this.supervise(task.jobId, { reason: 'task_failed', taskId: task.id, attemptId: task.currentAttemptId });
      if (res === 'locked') return 'hold';
      // The supervisor asked the user: the answer's resumeSupervision moves the failed task
      // on, not this pass (advancing here would fail a job an answer just put back to
      // RUNNING). An answer that came while the run was still ending its turn found it
      // locked: it is acted on now.
      if (res === 'waiting') {
        if ((await openQuestionCount(this.r, task.jobId)) === 0) await this.resumeSupervision(task.jobId);
        return 'hold';
      }
    } else if (task.status === 'SUCCEEDED' && (await hasRemedy(this.r, task.id))) {
      // The supervisor tried something for this task: its follow-up says whether it worked
      // (before the job moves on and is final). Its answer does not hold the job back.
      await this.supervise(task.jobId, { reason: 'task_succeeded', taskId: task.id, attemptId: task.currentAttemptId });
    }
    return 'advance';
  }

  /**
   * The user answered the run supervisor: it acts on the answer; then the job's failed tasks
   * move the job on as usual (a retry queued them again, a stop ended the job, anything else
   * lets the failure stand).
   */
  private async resumeSupervision(jobId: string, runId?: string): Promise<void> {
    const res = await resumeSupervisor(
      this.r,
      this.model,
      jobId,
      this.opts.afterAction ? { afterAction: this.opts.afterAction } : {},
      runId,
    );
    if (res?.stopReason === 'locked') return;
    const failed = await this.r.prisma.task.findMany({
      where: { jobId, status: 'FAILED', kind: { in: [...SUPERVISED_KINDS] as TaskKind[] } },
      select: { id: true },
    });
    await this.engine?.advance(failed.map((t) => t.id));
  }

  private async supervise(jobId: string, trigger: SupervisorTrigger): Promise<'locked' | 'waiting' | 'done'> {
    if (!REVIEWS_FINAL_JOB.has(trigger.reason) && isFinalJobStatus((await loadJob(this.r, jobId)).status)) return 'done';
    const extra = this.opts.afterAction ? { afterAction: this.opts.afterAction } : {};
    const once = async () => {
      const res = await runSupervisor(this.r, this.model, jobId, trigger, extra);
      return res.stopReason === 'locked' ? 'locked' : res.status === 'WAITING' ? 'waiting' : 'done';
    };
    // A trigger the holder knows nothing of waits its turn.
    return WAITS_FOR_LOCK.has(trigger.reason) ? whileLocked(once) : once();
  }

  /**
   * Picks up agent work a crashed process left behind (the engine's reconcile asks first);
   * returns the jobs whose supervision it resumed — their failed tasks are its to move on
   * (resumeSupervision does), not the engine's generic pass: that would start a new supervisor
   * run that knows nothing of the answer.
   */
  async reconcile(): Promise<Set<string>> {
    const now = this.r.now();
    for (const jobId of await orphanedPlanning(this.r, PLANNER.name, now, QUIET_MS)) {
      const run = await latestRun(this.r, jobId, PLANNER.name);
      // No planner run yet, or the last one ended before the run supervisor replanned the job
      // (the crash came between the replan's commit and the planner's start).
      if (!run || (run.status === 'COMPLETED' && (await replans(this.r.prisma, jobId)).some((p) => p.at > run.updatedAt))) {
        void this.background(`plan:${jobId}`, () => this.startPlanning(jobId));
      } else if (run.status === 'RUNNING' || (run.status === 'WAITING' && (await openQuestionCount(this.r, jobId)) === 0)) {
        // A run still RUNNING with no live lock is orphaned whatever the job's status says;
        // resuming it resolves its PENDING calls from the Action table.
        await touchJob(this.r, jobId);
        void this.background(`plan:${jobId}`, () => this.resumePlanning(jobId));
      }
    }
    // A supervisor run cut off by a crash, or waiting for an answer given while no process
    // listened: resumed from its history (a PENDING call resolves from the Action table: its
    // effect happened once and is not repeated).
    const supervised = new Set<string>();
    for (const o of await orphanedSupervision(this.r, now, QUIET_MS)) {
      supervised.add(o.jobId);
      await this.background(`supervise:${o.jobId}`, () => this.resumeSupervision(o.jobId, o.runId));
    }
    return supervised;
  }
}
