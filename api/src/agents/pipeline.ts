/**
 * The main job pipeline (DESIGN.md §4, without the preparation stage):
 *
 *   createJob → PLANNING: the planner runs (turns of the durable loop) until it submits
 *   a plan (→ RUNNING, one RUN task on the frozen code), asks the user (→ NEEDS_INPUT;
 *   answerQuestion resumes it from its saved history) or gives up (→ FAILED).
 *   RUN task done → VALIDATING: exit code, required files, metric thresholds; when a
 *   checkpoint is produced, an EVALUATE task reloads it on a worker → SUCCEEDED, or
 *   FAILED with the reason in plain words.
 *
 * Work is kicked from the domain hooks, and the scheduler tick calls `reconcile` so a
 * crashed API process loses nothing: jobs left PLANNING with no live agent lock get
 * their planner resumed; finished tasks whose job did not advance are validated.
 */
import type { Prisma as P } from '../generated/prisma/client.js';
import type { ManifestEntry } from '../domain/blobs/paths.js';
import { insertTask } from '../domain/jobs/createTask.js';
import { recordJobEvent } from '../domain/jobs/jobEvents.js';
import type { DomainHooks, Resources } from '../domain/resources.js';
import { runAgentTurn } from './loop.js';
import type { ModelClient } from './models/types.js';
import { PLANNER } from './planner/planner.js';
import type { Criteria } from './planner/planSchema.js';

const MAX_PLANNER_TURNS = 6;

export class Pipeline {
  private readonly active = new Set<string>();

  constructor(
    private readonly r: Resources,
    private readonly model: ModelClient,
  ) {}

  hooks(): DomainHooks {
    return {
      jobCreated: (jobId) => this.startPlanning(jobId),
      planningResumed: (jobId) => this.resumePlanning(jobId),
      taskFinished: (taskId) => this.onTaskFinished(taskId),
    };
  }

  /** Runs `fn` in the background; errors are logged, never thrown into a request. */
  private background(key: string, fn: () => Promise<void>): Promise<void> {
    if (this.active.has(key)) return Promise.resolve();
    this.active.add(key);
    const p = fn()
      .catch((err) => this.r.log.error('pipeline step failed', { key, message: (err as Error).message, stack: (err as Error).stack }))
      .finally(() => this.active.delete(key));
    return p;
  }

  /** Resolves when background work for this job is done (tests). */
  async idle(): Promise<void> {
    while (this.active.size) await new Promise((r) => setTimeout(r, 20));
  }

  async startPlanning(jobId: string): Promise<void> {
    const job = await this.r.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    const moved = await this.r.prisma.job.updateMany({ where: { id: jobId, status: 'DRAFT' }, data: { status: 'PLANNING', statusReason: 'The planner is reading the project.' } });
    if (moved.count) await this.event(jobId, 'job.status', { status: 'PLANNING' });
    const task = [
      `Job title: ${job.title}`,
      `Request: ${job.request}`,
      `Hardware preference: ${job.hardwarePreference ?? 'any'}`,
      `Spending cap: ${job.spendingCapCad ? `${job.spendingCapCad.toString()} CAD` : 'none'}`,
    ].join('\n');
    void this.background(`plan:${jobId}`, () => this.planTurns(jobId, [{ type: 'message', role: 'user', content: task }]));
  }

  async resumePlanning(jobId: string): Promise<void> {
    const answers = await this.r.prisma.question.findMany({ where: { jobId, status: 'ANSWERED', agentRunId: { not: null } }, orderBy: { answeredAt: 'asc' } });
    const run = await this.r.prisma.agentRun.findFirst({ where: { jobId, agent: PLANNER.name }, orderBy: { createdAt: 'desc' } });
    if (!run) return this.startPlanning(jobId);
    // The answers the run has not seen yet become user messages in its history.
    const seen = new Set(
      (await this.r.prisma.agentItem.findMany({ where: { runId: run.id, type: 'message' }, select: { payload: true } })).map((i) => (i.payload as { content?: string }).content),
    );
    const input = answers
      .map((q) => `Answer to "${q.text}": ${q.answer}`)
      .filter((t) => !seen.has(t))
      .map((content) => ({ type: 'message' as const, role: 'user' as const, content }));
    void this.background(`plan:${jobId}`, () => this.planTurns(jobId, input, run.id));
  }

  private async planTurns(jobId: string, input: { type: 'message'; role: 'user'; content: string }[], runId?: string): Promise<void> {
    let id = runId;
    let next = input;
    for (let turn = 0; turn < MAX_PLANNER_TURNS; turn++) {
      const res = await runAgentTurn(this.r, { jobId, agent: PLANNER, model: this.model, input: next, ...(id ? { runId: id } : {}) });
      if (res.stopReason === 'locked') return; // another process is planning this job
      id = res.runId;
      next = [];
      if (res.status === 'WAITING' || res.status === 'COMPLETED') {
        const job = await this.r.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
        if (res.status === 'COMPLETED' && job.status === 'PLANNING') {
          await this.fail(jobId, 'The planner finished without a plan. See its steps for what it found.');
        }
        return;
      }
      if (res.stopReason === 'model_error' || res.stopReason === 'model_timeout') await new Promise((r) => setTimeout(r, 1000 * (turn + 1)));
    }
    await this.fail(jobId, `The planner did not reach a plan within ${MAX_PLANNER_TURNS} turns.`);
  }

  async onTaskFinished(taskId: string): Promise<void> {
    void this.background(`task:${taskId}`, () => this.validate(taskId));
  }

  /** Acceptance checks for a finished RUN or EVALUATE task (idempotent: terminal jobs are left alone). */
  async validate(taskId: string): Promise<void> {
    const task = await this.r.prisma.task.findUniqueOrThrow({ where: { id: taskId }, include: { job: true, attempts: { orderBy: { number: 'desc' }, take: 1 } } });
    const job = task.job;
    if (!['RUNNING', 'VALIDATING'].includes(job.status)) return;
    const criteria = job.acceptanceCriteria as unknown as Criteria | null;
    if (task.status === 'FAILED') {
      const tail = await this.r.prisma.logChunk.findMany({ where: { attemptId: task.attempts[0]?.id ?? '00000000-0000-0000-0000-000000000000', stream: 'stderr' }, orderBy: { seq: 'desc' }, take: 3 });
      const last = tail.reverse().map((l) => l.text).join(' | ');
      return this.fail(job.id, `${task.kind === 'EVALUATE' ? 'Reloading and evaluating the checkpoint failed' : 'The run failed'}: ${task.statusReason ?? 'no reason recorded'}${last ? ` Last error output: ${last.slice(0, 500)}` : ''}`);
    }
    if (task.status !== 'SUCCEEDED' || !criteria) return;
    const result = task.result as { outputs?: ManifestEntry[]; metrics?: Record<string, number>; exitCode?: number } | null;
    const outputs = result?.outputs ?? [];
    const metrics = result?.metrics ?? {};

    if (task.kind === 'RUN' || task.kind === 'SHARD') {
      await this.setStatus(job.id, 'VALIDATING', 'Checking the acceptance criteria.');
      const problems: string[] = [];
      if ((result?.exitCode ?? 0) !== criteria.exitCode) problems.push(`the exit code was ${result?.exitCode}, not ${criteria.exitCode}`);
      for (const f of criteria.requiredFiles) if (!outputs.some((o) => o.path === f)) problems.push(`the required file ${f} was not produced`);
      problems.push(...checkMetrics(criteria.metrics, metrics));
      if (problems.length) return this.fail(job.id, `The run finished but did not meet its acceptance criteria: ${problems.join('; ')}.`);
      if (criteria.evaluate) {
        const ckpt = outputs.find((o) => o.path === criteria.evaluate!.checkpoint);
        if (!ckpt) return this.fail(job.id, `The checkpoint ${criteria.evaluate.checkpoint} was not produced, so it cannot be evaluated.`);
        const existing = await this.r.prisma.task.findFirst({ where: { jobId: job.id, kind: 'EVALUATE' } });
        if (existing) return;
        const { eventId } = await this.r.prisma.$transaction((tx) =>
          insertTask(tx, this.r.now(), {
            jobId: job.id,
            kind: 'EVALUATE',
            name: 'evaluate',
            codeVersionId: job.frozenCodeId ?? task.codeVersionId,
            command: criteria.evaluate!.command,
            environment: { inputs: [ckpt] },
            requirements: { ...(task.requirements as object), outputs: [] } as never,
            maxAttempts: 3,
          }),
        );
        await this.r.events.emit({ type: 'job.event', jobId: job.id, eventId });
        await this.r.events.emit({ type: 'tasks.available' });
        await this.event(job.id, 'validation', { step: 'run', ok: true, metrics, outputs: outputs.map((o) => o.path), next: 'evaluate the checkpoint' });
        return;
      }
      await this.event(job.id, 'validation', { step: 'run', ok: true, metrics, outputs: outputs.map((o) => o.path) });
      return this.succeed(job.id, 'The run met its acceptance criteria.');
    }
    if (task.kind === 'EVALUATE') {
      const problems = checkMetrics(criteria.evaluate?.metrics ?? [], metrics);
      await this.event(job.id, 'validation', { step: 'evaluate', ok: problems.length === 0, metrics, problems });
      if (problems.length) return this.fail(job.id, `The checkpoint reloaded, but its evaluation missed the criteria: ${problems.join('; ')}.`);
      const summary = Object.entries(metrics).slice(0, 6).map(([k, v]) => `${k} ${Number(v.toPrecision(4))}`).join(', ');
      return this.succeed(job.id, `The run met its criteria and the checkpoint reloaded and evaluated on a worker${summary ? ` (${summary})` : ''}.`);
    }
  }

  /** Called by the tick: picks up work a crashed process left behind. */
  async reconcile(): Promise<void> {
    const now = this.r.now();
    // Fix: only PLANNING jobs were picked up. A crash right after ask_user committed (the
    // job is then NEEDS_INPUT) left the planner run RUNNING with its call PENDING until
    // the user answered. Recovery keys on the run: a planner run still RUNNING with no
    // live lock is orphaned whatever the job's status says (a run that asked and
    // finished its turn is WAITING); resuming it resolves the call from the Action table.
    const stalled = await this.r.prisma.job.findMany({
      where: {
        OR: [{ status: 'PLANNING' }, { status: 'NEEDS_INPUT', agentRuns: { some: { agent: PLANNER.name, status: 'RUNNING' } } }],
        AND: [{ OR: [{ agentLockUntil: null }, { agentLockUntil: { lt: now } }] }],
        updatedAt: { lt: new Date(now.getTime() - 5000) },
      },
      select: { id: true },
      take: 10,
    });
    for (const j of stalled) {
      const run = await this.r.prisma.agentRun.findFirst({ where: { jobId: j.id, agent: PLANNER.name }, orderBy: { createdAt: 'desc' } });
      if (!run) await this.startPlanning(j.id);
      else if (run.status === 'RUNNING' || (run.status === 'WAITING' && (await this.r.prisma.question.count({ where: { jobId: j.id, status: 'OPEN' } })) === 0)) {
        await this.r.prisma.job.update({ where: { id: j.id }, data: { updatedAt: now } });
        await this.resumePlanning(j.id);
      }
    }
    const finished = await this.r.prisma.task.findMany({
      where: { status: { in: ['SUCCEEDED', 'FAILED'] }, kind: { in: ['RUN', 'EVALUATE'] }, job: { status: { in: ['RUNNING', 'VALIDATING'] } }, finishedAt: { lt: new Date(now.getTime() - 5000) } },
      select: { id: true },
      take: 20,
    });
    for (const t of finished) await this.onTaskFinished(t.id);
  }

  private async setStatus(jobId: string, status: 'VALIDATING', reason: string) {
    const moved = await this.r.prisma.job.updateMany({ where: { id: jobId, status: 'RUNNING' }, data: { status, statusReason: reason } });
    if (moved.count) await this.event(jobId, 'job.status', { status, reason });
  }

  private async succeed(jobId: string, reason: string) {
    const moved = await this.r.prisma.job.updateMany({ where: { id: jobId, status: { in: ['RUNNING', 'VALIDATING'] } }, data: { status: 'SUCCEEDED', statusReason: reason, finishedAt: this.r.now() } });
    if (moved.count) await this.event(jobId, 'job.status', { status: 'SUCCEEDED', reason });
  }

  private async fail(jobId: string, reason: string) {
    const moved = await this.r.prisma.job.updateMany({ where: { id: jobId, status: { notIn: ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'] } }, data: { status: 'FAILED', statusReason: reason, finishedAt: this.r.now() } });
    if (moved.count) await this.event(jobId, 'job.status', { status: 'FAILED', reason });
  }

  private async event(jobId: string, kind: Parameters<typeof recordJobEvent>[2], payload: P.InputJsonValue) {
    const eventId = await recordJobEvent(this.r.prisma, jobId, kind, payload);
    await this.r.events.emit({ type: 'job.event', jobId, eventId });
    await this.r.events.emit({ type: 'job.updated', jobId });
  }
}

function checkMetrics(thresholds: { name: string; op: string; value: number }[], metrics: Record<string, number>): string[] {
  const problems: string[] = [];
  for (const t of thresholds) {
    const v = metrics[t.name];
    if (v === undefined) {
      problems.push(`the metric ${t.name} was never reported`);
      continue;
    }
    const ok = t.op === '<' ? v < t.value : t.op === '<=' ? v <= t.value : t.op === '>' ? v > t.value : v >= t.value;
    if (!ok) problems.push(`${t.name} was ${Number(v.toPrecision(4))}, the criterion is ${t.op} ${t.value}`);
  }
  return problems;
}
