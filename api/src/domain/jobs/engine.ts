/**
 * The job engine: what moves a job forward after its tasks end, started by server.ts whatever
 * the agents' configuration. The job's status has one writer (jobLifecycle.ts); this is the one
 * place that decides *when* to call it, reacting to the domain's events:
 *
 *   task.finished       → REFERENCE / CANDIDATE / BENCHMARK: the preparation stage moves on
 *                         (preparation/stage.ts); any other kind: advanceJobAfterTask (the next
 *                         pipeline step, the main run after its smoke run, validation,
 *                         evaluation, success or failure)
 *   preparation.step    → the preparation stage moves on
 *   reconcile           → (the tick) what a crashed process left behind: finished tasks whose
 *                         job did not move on, PREPARING jobs
 *   job.replanned       → with agents off only: no planner will make the new plan, so the job
 *                         fails saying why (with agents, the planner takes it)
 *
 * The agents (agents/agentTurns.ts) are a judge the engine consults, never a precondition: when
 * they run, a FAILED run, shard or evaluation goes to the run supervisor before the job moves
 * (it may queue the task again, or ask the user), a SUCCEEDED one after a supervisor's remedy
 * gets its follow-up, and a rejected required preparation step gets its revision. A server with
 * agents off still runs an accepted plan to its end: a failed task fails the job with its reason,
 * and a step that needs a revision, or a job sent back to planning, fails the job saying so.
 *
 * Events reach every API process, so several engines may react to one: every move is a
 * conditional transition of the job (advanceJob.ts, stage.ts), so one moves the job and the
 * others find it moved.
 */
import type { DomainEvent, EventBus } from '../events.js';
import type { Resources } from '../resources.js';
import { advanceJobAfterTask } from './advanceJob.js';
import { jobsInStatus, tasksAwaitingAdvance } from './jobQueries.js';
import { transitionIfAllowed } from './jobLifecycle.js';
import { advancePreparation } from '../preparation/stage.js';

/** Task kinds whose failures the run supervisor judges (preparation tasks have their own stage). */
export const SUPERVISED_KINDS: ReadonlySet<string> = new Set(['RUN', 'SHARD', 'EVALUATE']);
/** Task kinds of the preparation stage. */
const PREPARATION_KINDS: ReadonlySet<string> = new Set(['REFERENCE', 'CANDIDATE', 'BENCHMARK']);
/** A finished task untouched this long is picked up by the reconcile. */
export const QUIET_MS = 5000;

export interface FinishedTask {
  id: string;
  jobId: string;
  kind: string;
  status: string;
  currentAttemptId: string | null;
}

/**
 * What the engine asks of the agents, when a server runs them (agents/agentTurns.ts).
 *   judgeFinishedTask: `advance` — move the job on now; `hold` — not now (the agent that holds
 *     the job, or the user's answer, moves it later).
 *   revise: a required preparation step was rejected with budget left.
 *   afterPreparationPass: after each pass of the stage (the supervisor's follow-ups).
 *   reconcile: the agents' own crash recovery first; returns the jobs they took over (their
 *     finished tasks are theirs to move on).
 */
export interface EngineAgents {
  judgeFinishedTask(task: FinishedTask): Promise<'advance' | 'hold'>;
  revise(jobId: string, step: string, revision: number, feedback: string): Promise<void>;
  afterPreparationPass(jobId: string): Promise<void>;
  reconcile(): Promise<Set<string>>;
}

export class JobEngine {
  private readonly active = new Set<string>();
  private readonly again = new Set<string>();
  private off: (() => void) | null = null;
  private agents: EngineAgents | null;

  constructor(
    private readonly r: Resources,
    agents: EngineAgents | null = null,
  ) {
    this.agents = agents;
  }

  /** The agents this engine consults (null: none; the engine decides alone). */
  useAgents(agents: EngineAgents | null): void {
    this.agents = agents;
  }

  /** Starts reacting to the domain's events; `stop` ends it. */
  listen(bus: EventBus): void {
    this.off = bus.on(
      (e) => e.type === 'task.finished' || e.type === 'preparation.step' || e.type === 'reconcile' || e.type === 'job.replanned',
      (e) => this.react(e),
    );
  }

  stop(): void {
    this.off?.();
    this.off = null;
  }

  /** Resolves when this process's engine work is done (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.active.size) await new Promise((r) => setTimeout(r, 20));
  }

  private react(e: DomainEvent): void {
    if (e.type === 'task.finished') {
      if (PREPARATION_KINDS.has(e.kind)) void this.prepare(e.jobId);
      else void this.background(`task:${e.taskId}`, () => this.afterTask(e.taskId));
    } else if (e.type === 'preparation.step') void this.prepare(e.jobId);
    else if (e.type === 'reconcile') void this.background('reconcile', () => this.reconcile());
    else if (e.type === 'job.replanned' && !this.agents) void this.background(`replan:${e.jobId}`, () => this.noPlanner(e.jobId));
  }

  /** A job sent back to planning on a server without agents: nobody will plan it, so it fails with the replan's reason. */
  private async noPlanner(jobId: string): Promise<void> {
    const job = await this.r.prisma.job.findUnique({ where: { id: jobId }, select: { statusReason: true } });
    await transitionIfAllowed(this.r, jobId, 'fail', {
      reason: `The job needs a new plan, and this server runs without agents to make one (agents off). ${job?.statusReason ?? ''}`.trim(),
      onlyFrom: ['PLANNING'],
    });
  }

  /** Runs `fn` in the background, once per key at a time; errors are logged, never thrown into a request. */
  private background(key: string, fn: () => Promise<unknown>): Promise<void> {
    if (this.active.has(key)) return Promise.resolve();
    this.active.add(key);
    return fn()
      .then(() => undefined)
      .catch((err) => this.r.log.error('job engine step failed', { key, message: (err as Error).message, stack: (err as Error).stack }))
      .finally(() => this.active.delete(key));
  }

  /**
   * Moves the job's preparation stage on. Once per job at a time in this process; when an
   * event arrives while it runs, it runs once more afterwards (the event may be about a task
   * that finished after the stage looked).
   */
  prepare(jobId: string): Promise<void> {
    const key = `prep:${jobId}`;
    if (this.active.has(key)) {
      this.again.add(key);
      return Promise.resolve();
    }
    return this.background(key, async () => {
      do {
        this.again.delete(key);
        const state = await advancePreparation(this.r, jobId);
        const agents = this.agents;
        if (state.state === 'revision') {
          if (agents) await agents.revise(jobId, state.step, state.revision, state.feedback);
          else
            await transitionIfAllowed(this.r, jobId, 'fail', {
              reason: `The candidate for preparation step ${state.step} was rejected, and revising it needs the preparation agent, which this server runs without (agents off). The checks said: ${state.feedback.slice(0, 1500)}`,
              onlyFrom: ['PREPARING'],
            });
        }
        if (agents) await agents.afterPreparationPass(jobId);
      } while (this.again.has(key));
    });
  }

  /**
   * A finished task: the agents judge it first when they run (a FAILED one may be queued again,
   * and then the job waits for it); then the job moves on. Each pass looks at the attempt the
   * task has now: the event of a newer attempt that ended while this ran was dropped (one
   * `task:<id>` at a time in a process).
   */
  async afterTask(taskId: string): Promise<void> {
    let handled: string | null | undefined;
    for (let pass = 0; pass < 10; pass++) {
      const task = await this.r.prisma.task.findUnique({
        where: { id: taskId },
        select: { id: true, jobId: true, kind: true, status: true, currentAttemptId: true },
      });
      if (!task || task.currentAttemptId === handled) return;
      handled = task.currentAttemptId;
      if (task.status !== 'SUCCEEDED' && task.status !== 'FAILED') return;
      if (this.agents) {
        if ((await this.agents.judgeFinishedTask(task)) === 'hold') return;
        // The supervisor queued it again (and maybe its new attempt already ended): not this
        // attempt's outcome to move the job on.
        const now = await this.r.prisma.task.findUnique({ where: { id: taskId }, select: { currentAttemptId: true, status: true } });
        if (now?.currentAttemptId !== handled || (now.status !== 'SUCCEEDED' && now.status !== 'FAILED')) continue;
      }
      await advanceJobAfterTask(this.r, taskId);
      return;
    }
  }

  /** Moves the job on after each of these finished tasks (an agent that acted on them hands them back). */
  async advance(taskIds: string[]): Promise<void> {
    for (const id of taskIds) await advanceJobAfterTask(this.r, id);
  }

  /** Picks up what a crashed process left behind (the tick's `reconcile` event). */
  async reconcile(): Promise<void> {
    const taken = this.agents ? await this.agents.reconcile() : new Set<string>();
    const awaiting = await tasksAwaitingAdvance(this.r, this.r.now(), QUIET_MS);
    const jobOf = taken.size
      ? new Map(
          (await this.r.prisma.task.findMany({ where: { id: { in: awaiting } }, select: { id: true, jobId: true } })).map((t) => [
            t.id,
            t.jobId,
          ]),
        )
      : null;
    for (const taskId of awaiting) {
      if (jobOf && taken.has(jobOf.get(taskId) ?? '')) continue;
      await this.background(`task:${taskId}`, () => this.afterTask(taskId));
    }
    for (const jobId of await jobsInStatus(this.r, 'PREPARING')) void this.prepare(jobId);
  }
}
