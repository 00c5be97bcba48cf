/**
 * What happens to a job when one of its tasks finishes (SUCCEEDED or FAILED for good):
 *
 *   pipeline step failed            → fail (the step, the reason, the last error output)
 *   smoke run failed                → fail before the full run is leased (afterSmokeRun)
 *   smoke run passed                → the estimate stored; the main run queued (or fail:
 *                                     it cannot fit its time limit)
 *   pipeline step succeeded         → its products checked; the next step or the main run
 *                                     (a service plan: its SERVICE task) queued with every
 *                                     artifact so far as inputs
 *   RUN failed                      → fail (the reason and the last error output)
 *   RUN succeeded                   → (checkable: its trust check first, trust/replication.ts;
 *                                     the job waits for a sampled replica and goes on with the
 *                                     verified result) startValidation; the acceptance checks (acceptance.ts):
 *       problems                    → fail (`output.rejected`: the run supervisor names the evidence)
 *       a checkpoint to evaluate    → an EVALUATE task on the frozen code (same transaction)
 *       otherwise                   → succeed
 *   EVALUATE failed                 → fail
 *   EVALUATE succeeded              → the evaluation checks → succeed | fail
 *
 * Idempotent and safe to run from several processes at once: each step is a conditional
 * transition of the job engine, so only one caller moves the job and creates the EVALUATE
 * task; the others find the job already moved and do nothing. A job that is final (e.g.
 * cancelled while the task ran) is left alone.
 */
import type { Prisma as P } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import type { ManifestEntry } from '../blobs/paths.js';
import type { Resources } from '../resources.js';
import { checkEvaluation, checkRun, summarizeMetrics, type Criteria } from './acceptance.js';
import { pipelineTask, runTask, smokeTask, stepTaskName } from './acceptPlan.js';
import { describeEstimate, fmt, measureSmokeRun, withActual, type Estimate } from './estimate.js';
import { insertTask, type Requirements } from './createTask.js';
import { recordJobEvent } from './jobEvents.js';
import { applyTransition, commitTransition, InvalidTransitionError, transitionIfAllowed } from './jobLifecycle.js';
import type { PipelineStep, SmokeRun } from './planSchema.js';
import { lockJob } from '../../db/sql/lockJob.js';
import { resumeReplanEvidence } from '../preparation/resumeReplan.js';
import { afterService } from '../services/afterService.js';
import { serviceTask } from '../services/acceptServicePlan.js';
import type { ServiceRuntime } from '../services/services.js';
import { afterAdaptationCheck, afterMergeTask, afterShard } from './shardRun.js';
import { lastErrorOutput } from './lastErrorOutput.js';
import { afterCheckTask, checkedResult, isCheckTask } from '../trust/replication.js';
import { moveTasks } from '../leases/taskLifecycle.js';

interface TaskResult {
  outputs?: ManifestEntry[];
  metrics?: Record<string, number> | null;
  exitCode?: number;
}

export async function advanceJobAfterTask(r: Resources, taskId: string): Promise<void> {
  const task = await loadTask(r, taskId);
  if (!task || (task.status !== 'SUCCEEDED' && task.status !== 'FAILED')) return;
  const job = task.job;
  const criteria = job.acceptanceCriteria as unknown as Criteria | null;
  if (!criteria) return; // a task of a job without a plan (created directly): nothing to decide
  try {
    if (task.kind === 'SHARD') await afterShard(r, task, (result, extraEvents) => validateRun(r, task, criteria, result, extraEvents));
    else if (task.kind === 'MERGE')
      await afterMergeTask(r, task, (result, extraEvents) => validateRun(r, task, criteria, result, extraEvents));
    else if (task.kind === 'RUN') await afterRun(r, task, criteria);
    else if (isCheckTask(task)) {
      const checked = await afterCheckTask(r, task);
      if (checked) await advanceJobAfterTask(r, checked);
    } else if (task.role === 'SHARD_CHECK') await afterAdaptationCheck(r, task);
    else if (task.kind === 'EVALUATE') await afterEvaluation(r, task, criteria);
    else if (task.kind === 'SERVICE') await afterService(r, task);
    else if (task.role === 'SMOKE') await afterSmokeRun(r, task);
  } catch (err) {
    // Another caller moved the job first, or it was cancelled meanwhile: nothing left to do.
    if (err instanceof InvalidTransitionError) return;
    throw err;
  }
}

type FinishedTask = NonNullable<Awaited<ReturnType<typeof loadTask>>>;
function loadTask(r: Resources, id: string) {
  return r.prisma.task.findUnique({ where: { id }, include: { job: true } });
}

async function afterRun(r: Resources, task: FinishedTask, criteria: Criteria) {
  const jobId = task.jobId;
  if (task.job.status !== 'RUNNING') return;
  if (task.role === 'STEP') return afterStep(r, task);
  await recordActualDuration(r, task);
  if (task.status === 'FAILED') {
    await fail(
      r,
      jobId,
      'RUNNING',
      `The run failed: ${task.statusReason ?? 'no reason recorded'}${await lastErrorOutput(r, task.currentAttemptId)}`,
    );
    return;
  }
  const result = await checkedResult(r, task);
  if (result) await validateRun(r, task, criteria, result);
}

/**
 * The acceptance checks of a finished run's result (one RUN, or the merge of SHARDs whose
 * `extraEvents` are written in the same transaction as startValidation: once across callers).
 */
async function validateRun(
  r: Resources,
  task: FinishedTask,
  criteria: Criteria,
  result: TaskResult,
  extraEvents?: (tx: Db) => Promise<string[]>,
) {
  const jobId = task.jobId;
  const problems = checkRun(criteria, result);
  const outputs = (result.outputs ?? []).map((o) => o.path);
  const metrics = result.metrics ?? {};
  const r2 = await commitTransition(r, jobId, async (tx, now) => {
    const started = await applyTransition(tx, now, jobId, 'startValidation', { reason: 'Checking the acceptance criteria.' });
    const eventIds = [...started.eventIds, ...(extraEvents ? await extraEvents(tx) : [])];
    eventIds.push(
      await recordJobEvent(tx, jobId, 'validation', {
        step: 'run',
        ok: problems.length === 0,
        metrics,
        outputs,
        problems,
        ...(criteria.evaluate && !problems.length ? { next: 'evaluate the checkpoint' } : {}),
      }),
    );
    if (problems.length) {
      const f = await applyTransition(tx, now, jobId, 'fail', {
        reason: `The run finished but did not meet its acceptance criteria: ${problems.join('; ')}.`,
      });
      return { eventIds: [...eventIds, ...f.eventIds], evaluate: false };
    }
    if (criteria.evaluate) {
      const checkpoint = result.outputs!.find((o) => o.path === criteria.evaluate!.checkpoint)!;
      const { eventId } = await insertTask(tx, now, {
        jobId,
        kind: 'EVALUATE',
        name: 'evaluate',
        codeVersionId: task.job.frozenCodeId ?? task.codeVersionId,
        command: criteria.evaluate.command,
        environment: { inputs: [checkpoint] },
        requirements: { ...(task.requirements as Requirements), outputs: [] },
        maxAttempts: 3,
      });
      return { eventIds: [...eventIds, eventId], evaluate: true };
    }
    const s = await applyTransition(tx, now, jobId, 'succeed', { reason: 'The run met its acceptance criteria.' });
    return { eventIds: [...eventIds, ...s.eventIds], evaluate: false };
  });
  if (r2.evaluate) await r.events.emit({ type: 'tasks.available' });
  // The run supervisor names the evidence (the criteria stay as they are).
  if (problems.length) await r.events.emit({ type: 'output.rejected', jobId, taskId: task.id });
}

async function afterEvaluation(r: Resources, task: FinishedTask, criteria: Criteria) {
  const jobId = task.jobId;
  if (task.job.status !== 'VALIDATING') return;
  if (task.status === 'FAILED') {
    await fail(
      r,
      jobId,
      'VALIDATING',
      `Reloading and evaluating the checkpoint failed: ${task.statusReason ?? 'no reason recorded'}${await lastErrorOutput(r, task.currentAttemptId)}`,
    );
    return;
  }
  const result = (task.result ?? {}) as TaskResult;
  const metrics = result.metrics ?? {};
  const problems = checkEvaluation(criteria, result);
  await commitTransition(r, jobId, async (tx, now) => {
    const eventIds = [
      await recordJobEvent(tx, jobId, 'validation', { step: 'evaluate', ok: problems.length === 0, metrics, problems } as P.InputJsonValue),
    ];
    const summary = summarizeMetrics(metrics);
    const t = problems.length
      ? await applyTransition(tx, now, jobId, 'fail', {
          reason: `The checkpoint reloaded, but its evaluation missed the criteria: ${problems.join('; ')}.`,
        })
      : await applyTransition(tx, now, jobId, 'succeed', {
          reason: `The run met its criteria and the checkpoint reloaded and evaluated on a worker${summary ? ` (${summary})` : ''}.`,
        });
    return { eventIds: [...eventIds, ...t.eventIds] };
  });
  if (problems.length) await r.events.emit({ type: 'output.rejected', jobId, taskId: task.id });
}

/**
 * A pipeline step finished (docs/architecture.md §4, "Pipelines"): failed → the job fails
 * naming the step; a declared product missing → fails likewise; else the next step (or the
 * main run) is queued with every artifact so far as its inputs. Exactly once across callers:
 * the job row is locked and an existing next task means another caller already did it.
 */
async function afterStep(r: Resources, task: FinishedTask) {
  const jobId = task.jobId;
  const plan = task.job.currentPlanId ? await r.prisma.plan.findUnique({ where: { id: task.job.currentPlanId } }) : null;
  const steps = (plan?.pipeline ?? []) as unknown as PipelineStep[];
  const index = steps.findIndex((s) => stepTaskName(s) === task.name);
  const stepName = steps[index]?.name ?? task.name;
  if (task.status === 'FAILED') {
    await fail(
      r,
      jobId,
      'RUNNING',
      `The pipeline step "${stepName}" failed: ${task.statusReason ?? 'no reason recorded'}${await lastErrorOutput(r, task.currentAttemptId)}`,
    );
    return;
  }
  if (!plan || index < 0) return;
  const step = steps[index]!;
  const result = (task.result ?? {}) as TaskResult;
  const collected = result.outputs ?? [];
  const missing = step.produces.filter((p) => !collected.some((o) => o.path === p || o.path.startsWith(`${p.replace(/\/$/, '')}/`)));
  if (missing.length) {
    await fail(r, jobId, 'RUNNING', `The pipeline step "${stepName}" finished but did not produce ${missing.join(', ')}.`);
    return;
  }
  // What the step made: files of a produced folder that the code already holds unchanged
  // (the script itself) are not artifacts.
  const code = await r.prisma.codeVersion.findUnique({ where: { id: task.codeVersionId }, select: { manifest: true } });
  const unchanged = new Set(((code?.manifest ?? []) as unknown as ManifestEntry[]).map((m) => `${m.path}\0${m.sha256}`));
  const produced = collected.filter((o) => !unchanged.has(`${o.path}\0${o.sha256}`));
  // Every artifact so far (later paths win), handed to the next task at the same paths.
  const earlier = ((task.environment as { inputs?: ManifestEntry[] } | null)?.inputs ?? []).filter(
    (i) => !produced.some((o) => o.path === i.path),
  );
  const inputs = [...earlier, ...produced];
  const next = steps[index + 1];
  // A service plan's setup steps end in its SERVICE task, which takes over the job's Service row (acceptServicePlan.ts).
  const service = next ? null : await r.prisma.service.findFirst({ where: { jobId }, orderBy: { createdAt: 'desc' } });
  const nextName = next ? stepTaskName(next) : service ? 'service' : plan.smokeRun ? 'smoke' : 'run';
  const queued = await commitTransition(r, jobId, async (tx, now) => {
    if ((await lockJob(tx, jobId)) !== 'RUNNING' || (await tx.task.count({ where: { jobId, name: nextName } })) > 0)
      return { eventIds: [], queued: false };
    const environment = (plan.environment ?? {}) as Record<string, unknown>;
    const requirements = plan.requirements as unknown as Requirements;
    const smoke = plan.smokeRun as unknown as SmokeRun | null;
    const spec = next
      ? pipelineTask(jobId, task.codeVersionId, next, environment, requirements, inputs)
      : service
        ? serviceTask(
            jobId,
            task.codeVersionId,
            plan.command,
            environment,
            requirements,
            (service.spec as unknown as { runtime: ServiceRuntime }).runtime,
            inputs,
          )
        : smoke
          ? smokeTask(jobId, task.codeVersionId, smoke, environment, requirements, inputs)
          : runTask(jobId, task.codeVersionId, plan.command, environment, requirements, inputs);
    const stepEvent = await recordJobEvent(tx, jobId, 'pipeline.step', {
      step: stepName,
      ok: true,
      produced: produced.map((o) => o.path),
      next: next?.name ?? nextName,
    });
    const { task: queuedTask, eventId } = await insertTask(tx, now, spec);
    if (service) await tx.service.update({ where: { id: service.id }, data: { taskId: queuedTask.id } });
    return { eventIds: [stepEvent, eventId], queued: true };
  });
  if (queued.queued) await r.events.emit({ type: 'tasks.available' });
}

/**
 * The smoke run finished (docs/architecture.md §4, "Smoke run"):
 *   failed                     → the job fails before the full run is leased, with the error
 *                                class and the last error output (a missing module, OOM, …)
 *   passed                     → the estimate (estimate.ts) is stored on the job; a full run
 *                                whose low estimate is past its time limit cannot fit → fail,
 *                                saying so; else the RUN task is queued with the estimate
 *                                (the cap check at lease grant projects it to the high end)
 * Exactly once across callers: under the job's row lock, an existing run task means done.
 */
async function afterSmokeRun(r: Resources, task: FinishedTask) {
  const jobId = task.jobId;
  if (task.job.status !== 'RUNNING') return;
  const attempt = task.currentAttemptId
    ? await r.prisma.attempt.findUnique({
        where: { id: task.currentAttemptId },
        select: { errorClass: true, worker: { select: { name: true } } },
      })
    : null;
  if (task.status === 'FAILED') {
    const cls = attempt?.errorClass ? ` (${attempt.errorClass})` : '';
    await fail(
      r,
      jobId,
      'RUNNING',
      `The smoke run (\`${task.command}\`) failed${cls} on ${attempt?.worker.name ?? 'its worker'}, so the full run was not started: ${task.statusReason ?? 'no reason recorded'}${await lastErrorOutput(r, task.currentAttemptId)}`,
    );
    return;
  }
  const plan = task.job.currentPlanId ? await r.prisma.plan.findUnique({ where: { id: task.job.currentPlanId } }) : null;
  if (!plan || !attempt) return;
  const smoke = plan.smokeRun as unknown as SmokeRun | null;
  const estimate = await measureSmokeRun(r, task, smoke?.scale);
  const requirements = plan.requirements as unknown as Requirements;
  const limit = requirements.timeoutSec;
  // A long PyTorch training run: planned again with the checkpoint-resume step (preparation/resumeReplan.ts).
  const resume = estimate
    ? await resumeReplanEvidence(r, { jobId, codeVersionId: task.codeVersionId, requirements }, estimate.durationSec)
    : null;
  const queued = await commitTransition(r, jobId, async (tx, now) => {
    if ((await lockJob(tx, jobId)) !== 'RUNNING' || (await tx.task.count({ where: { jobId, role: 'RUN' } })) > 0)
      return { eventIds: [], queued: false, replanned: false };
    const eventIds = [
      await recordJobEvent(tx, jobId, 'smoke.result', { ok: true, estimate: (estimate ?? null) as unknown as P.InputJsonValue }),
    ];
    if (estimate) await tx.job.update({ where: { id: jobId }, data: { estimate: estimate as unknown as P.InputJsonValue } });
    if (estimate && limit && estimate.lowSec > limit) {
      const f = await applyTransition(tx, now, jobId, 'fail', {
        reason: `The full run cannot fit its time limit of ${fmt(limit)}: the smoke run estimates ${describeEstimate(estimate)}. ${estimate.basis} Ask for a shorter run, or for a longer time limit.`,
      });
      return { eventIds: [...eventIds, ...f.eventIds], queued: false, replanned: false };
    }
    if (resume) {
      // The smoke run is superseded (the engine never moves a RUNNING job on it again); the planner starts on job.replanned.
      await moveTasks(tx, { id: task.id }, ['SUCCEEDED'], 'CANCELLED', {
        statusReason: 'Superseded: planned again with the checkpoint-resume step.',
      });
      const t = await applyTransition(tx, now, jobId, 'replan', { reason: resume, detail: { evidence: resume } });
      return { eventIds: [...eventIds, ...t.eventIds], queued: false, replanned: true };
    }
    const environment = (plan.environment ?? {}) as Record<string, unknown>;
    const inputs = (task.environment as { inputs?: ManifestEntry[] } | null)?.inputs ?? [];
    const { eventId } = await insertTask(
      tx,
      now,
      runTask(jobId, task.codeVersionId, plan.command, environment, requirements, inputs, estimate?.highSec),
    );
    return { eventIds: [...eventIds, eventId], queued: true, replanned: false };
  });
  if (queued.queued) await r.events.emit({ type: 'tasks.available' });
  if (queued.replanned) await r.events.emit({ type: 'job.replanned', jobId });
}

/** After the full run: how long it really took and cost, beside the estimate (once). */
async function recordActualDuration(r: Resources, task: FinishedTask) {
  const estimate = task.job.estimate as unknown as Estimate | null;
  if (!estimate || estimate.actualSec !== undefined || !task.currentAttemptId) return;
  const attempt = await r.prisma.attempt.findUnique({ where: { id: task.currentAttemptId }, select: { usage: true } });
  const runSeconds = (attempt?.usage as { runSeconds?: number } | null)?.runSeconds;
  if (typeof runSeconds !== 'number') return;
  const usage = await r.prisma.usageEntry.aggregate({ where: { attempt: { taskId: task.id }, billable: true }, _sum: { costCad: true } });
  await r.prisma.job.update({
    where: { id: task.jobId },
    data: { estimate: withActual(estimate, runSeconds, Number(usage._sum.costCad ?? 0)) as unknown as P.InputJsonValue },
  });
}

/** Fails the job only if it is still in `expected` (a concurrent caller may have moved it). */
function fail(r: Resources, jobId: string, expected: 'RUNNING' | 'VALIDATING', reason: string) {
  return transitionIfAllowed(r, jobId, 'fail', { reason, onlyFrom: [expected] });
}
