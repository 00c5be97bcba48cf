/**
 * What happens to a job when one of its tasks finishes (SUCCEEDED or FAILED for good):
 *
 *   RUN failed                      → fail (the reason and the last error output)
 *   RUN succeeded                   → startValidation; the acceptance checks (acceptance.ts):
 *       problems                    → fail
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
import type { ManifestEntry } from '../blobs/paths.js';
import type { Resources } from '../resources.js';
import { checkEvaluation, checkRun, summarizeMetrics, type Criteria } from './acceptance.js';
import { insertTask, type Requirements } from './createTask.js';
import { recordJobEvent } from './jobEvents.js';
import { applyTransition, commitTransition, InvalidTransitionError, transitionIfAllowed } from './jobLifecycle.js';

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
    if (task.kind === 'RUN' || task.kind === 'SHARD') await afterRun(r, task, criteria);
    else if (task.kind === 'EVALUATE') await afterEvaluation(r, task, criteria);
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
  if (task.status === 'FAILED') {
    await fail(r, jobId, 'RUNNING', `The run failed: ${task.statusReason ?? 'no reason recorded'}${await lastErrorOutput(r, task.currentAttemptId)}`);
    return;
  }
  const result = (task.result ?? {}) as TaskResult;
  const problems = checkRun(criteria, result);
  const outputs = (result.outputs ?? []).map((o) => o.path);
  const metrics = result.metrics ?? {};
  const r2 = await commitTransition(r, jobId, async (tx, now) => {
    const started = await applyTransition(tx, now, jobId, 'startValidation', { reason: 'Checking the acceptance criteria.' });
    const eventIds = [...started.eventIds];
    eventIds.push(await recordJobEvent(tx, jobId, 'validation', { step: 'run', ok: problems.length === 0, metrics, outputs, problems, ...(criteria.evaluate && !problems.length ? { next: 'evaluate the checkpoint' } : {}) }));
    if (problems.length) {
      const f = await applyTransition(tx, now, jobId, 'fail', { reason: `The run finished but did not meet its acceptance criteria: ${problems.join('; ')}.` });
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
}

async function afterEvaluation(r: Resources, task: FinishedTask, criteria: Criteria) {
  const jobId = task.jobId;
  if (task.job.status !== 'VALIDATING') return;
  if (task.status === 'FAILED') {
    await fail(r, jobId, 'VALIDATING', `Reloading and evaluating the checkpoint failed: ${task.statusReason ?? 'no reason recorded'}${await lastErrorOutput(r, task.currentAttemptId)}`);
    return;
  }
  const result = (task.result ?? {}) as TaskResult;
  const metrics = result.metrics ?? {};
  const problems = checkEvaluation(criteria, result);
  await commitTransition(r, jobId, async (tx, now) => {
    const eventIds = [await recordJobEvent(tx, jobId, 'validation', { step: 'evaluate', ok: problems.length === 0, metrics, problems } as P.InputJsonValue)];
    const summary = summarizeMetrics(metrics);
    const t = problems.length
      ? await applyTransition(tx, now, jobId, 'fail', { reason: `The checkpoint reloaded, but its evaluation missed the criteria: ${problems.join('; ')}.` })
      : await applyTransition(tx, now, jobId, 'succeed', { reason: `The run met its criteria and the checkpoint reloaded and evaluated on a worker${summary ? ` (${summary})` : ''}.` });
    return { eventIds: [...eventIds, ...t.eventIds] };
  });
}

/** Fails the job only if it is still in `expected` (a concurrent caller may have moved it). */
function fail(r: Resources, jobId: string, expected: 'RUNNING' | 'VALIDATING', reason: string) {
  return transitionIfAllowed(r, jobId, 'fail', { reason, onlyFrom: [expected] });
}

async function lastErrorOutput(r: Resources, attemptId: string | null): Promise<string> {
  if (!attemptId) return '';
  const tail = await r.prisma.logChunk.findMany({ where: { attemptId, stream: 'stderr' }, orderBy: { seq: 'desc' }, take: 3 });
  const text = tail.reverse().map((l) => l.text).join(' | ');
  return text ? ` Last error output: ${text.slice(0, 500)}` : '';
}
