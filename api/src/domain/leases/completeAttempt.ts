import type { Prisma as P } from '../../generated/prisma/client.js';
import { accrueUsage, isContributorLoss, writeOffAttemptUsage } from '../billing/usage.js';
import { checkTree, normalizeMode, normalizeUploadPath } from '../blobs/paths.js';
import { NotFoundError, StaleAttemptError, ValidationError } from '../errors.js';
import { recordJobEvent } from '../jobs/jobEvents.js';
import type { Resources } from '../resources.js';
import { loadOwnAttempt, recordStale, staleReason } from './currentAttempt.js';
import { INFRASTRUCTURE_ERRORS } from './errorClasses.js';
import { retryAfter, retryBackoffSec } from './retryBackoff.js';

export interface CompleteInput {
  exitCode?: number | null;
  errorClass?: string | null;
  errorMessage?: string | null;
  outputs?: { path: string; sha256: string; mode?: number | null }[] | null;
  metrics?: unknown;
  usage?: unknown;
}

/**
 * Accepts the result of the task's current attempt, once (invariant 1). The attempt and
 * task rows are locked (SELECT … FOR UPDATE) so a completion and the tick's expiry or a cancel cannot
 * both win; a late or foreign completion is refused as stale and recorded, and so is one
 * past its lease's expiry (even before the tick marks it LOST). Declared outputs must be
 * blobs uploaded for this attempt.
 *   success (exit 0, no error class) → attempt SUCCEEDED, task SUCCEEDED with its result
 *   infrastructure error              → attempt FAILED, task retried within maxAttempts;
 *                                       its usage is the contributor's loss, not charged
 *   the code failed                   → attempt FAILED, task FAILED (never retried blindly)
 */
export async function completeAttempt(r: Resources, workerTokenId: string, attemptId: string, fencingToken: string, input: CompleteInput) {
  const outputs = checkTree(
    (input.outputs ?? []).map((o) => ({ path: normalizeUploadPath(o.path), sha256: o.sha256, size: 0, mode: normalizeMode(o.mode) })),
  );
  const pre = await loadOwnAttempt(r.prisma, attemptId, workerTokenId);
  // Only blobs this worker uploaded for this attempt (recorded by PUT /blobs with the
  // attempt header): listing any other existing blob would hand the job's owner read
  // access to bytes the worker never held.
  const uploads = outputs.length
    ? await r.prisma.attemptUpload.findMany({ where: { attemptId: pre.id, sha256: { in: outputs.map((o) => o.sha256) } }, select: { sha256: true, blob: { select: { size: true } } } })
    : [];
  const sizes = new Map(uploads.map((u) => [u.sha256, Number(u.blob.size)]));
  outputs.forEach((o, i) => {
    if (!sizes.has(o.sha256)) {
      throw new ValidationError(`Output ${o.path} was not uploaded for this attempt (PUT /blobs/${o.sha256} with the header X-ChatGPU-Attempt: ${pre.id} first).`, [
        { path: ['outputs', String(i), 'sha256'], message: 'not uploaded for this attempt' },
      ]);
    }
    o.size = sizes.get(o.sha256)!;
  });
  const now = r.now();
  const succeeded = (input.exitCode ?? null) === 0 && !input.errorClass;
  const errorClass = succeeded ? null : (input.errorClass ?? 'EXIT_NONZERO');
  const retryable = !succeeded && INFRASTRUCTURE_ERRORS.has(errorClass!);

  const outcome = await r.prisma.$transaction(async (tx) => {
    // Lock order attempt → task, the same as heartbeat's renewal (UPDATE attempt, then its
    // task) and the tick's `FOR UPDATE OF a, t SKIP LOCKED`, so none of them deadlock.
    await tx.$queryRaw`SELECT id FROM "Attempt" WHERE id = ${pre.id}::uuid FOR UPDATE`;
    await tx.$queryRaw`SELECT id FROM "Task" WHERE id = ${pre.taskId}::uuid FOR UPDATE`;
    const a = await loadOwnAttempt(tx, attemptId, workerTokenId);
    const reason = staleReason(a, fencingToken, now);
    if (reason) {
      await recordStale(tx, a.id, a.status, 'complete', { reason, exitCode: input.exitCode ?? null });
      return { stale: reason, jobId: a.task.jobId } as const;
    }
    await accrueUsage(tx, r, a.id, now, { final: true });
    await tx.attempt.update({
      where: { id: a.id },
      data: {
        status: succeeded ? 'SUCCEEDED' : 'FAILED',
        exitCode: input.exitCode ?? null,
        errorClass,
        errorMessage: input.errorMessage?.slice(0, 4000) ?? null,
        outputs: outputs as unknown as P.InputJsonValue,
        metrics: (input.metrics ?? undefined) as P.InputJsonValue | undefined,
        usage: (input.usage ?? undefined) as P.InputJsonValue | undefined,
        finishedAt: now,
      },
    });
    // The machine failed, not the code: what this attempt used is not the user's to pay.
    if (isContributorLoss({ status: succeeded ? 'SUCCEEDED' : 'FAILED', errorClass })) await writeOffAttemptUsage(tx, [a.id]);
    const task = a.task;
    let taskStatus: 'SUCCEEDED' | 'FAILED' | 'QUEUED';
    let statusReason: string | null = null;
    if (succeeded) taskStatus = 'SUCCEEDED';
    else if (retryable && task.attemptCount < task.maxAttempts) {
      taskStatus = 'QUEUED';
      statusReason = `Attempt ${a.number} failed on ${a.worker.name} (${errorClass}); retrying in ${retryBackoffSec(r.config.scheduler.retryBaseSec, task.attemptCount)}s.`;
    } else {
      taskStatus = 'FAILED';
      statusReason =
        errorClass === 'EXIT_NONZERO'
          ? `The command exited with code ${input.exitCode}.`
          : errorClass === 'TIMEOUT'
            ? 'The command ran past its time limit.'
            : `${errorClass}: ${input.errorMessage ?? 'no details'}`;
    }
    await tx.task.update({
      where: { id: task.id },
      data: {
        status: taskStatus,
        statusReason,
        ...(taskStatus === 'QUEUED' ? { currentAttemptId: null, runAfter: retryAfter(now, r.config.scheduler.retryBaseSec, task.attemptCount) } : {}),
        ...(taskStatus !== 'QUEUED' ? { finishedAt: now } : {}),
        ...(succeeded ? { result: { attemptId: a.id, exitCode: 0, outputs, metrics: input.metrics ?? null } as unknown as P.InputJsonValue } : {}),
      },
    });
    const events = [
      await recordJobEvent(tx, task.jobId, 'attempt.status', { taskId: task.id, attemptId: a.id, number: a.number, status: succeeded ? 'SUCCEEDED' : 'FAILED', exitCode: input.exitCode ?? null, errorClass }),
      await recordJobEvent(tx, task.jobId, 'task.status', { taskId: task.id, name: task.name, status: taskStatus, reason: statusReason }),
    ];
    return { stale: null, jobId: task.jobId, taskId: task.id, taskKind: task.kind, taskStatus, errorClass, events } as const;
  }, { timeout: 15_000, maxWait: 10_000 }); // busy databases: never fail a finished run on Prisma's 5 s default
  if (outcome.stale !== null) throw new StaleAttemptError(attemptId, outcome.stale);
  for (const eventId of outcome.events) await r.events.emit({ type: 'job.event', jobId: outcome.jobId, eventId });
  await r.events.emit({ type: 'job.updated', jobId: outcome.jobId });
  if (outcome.taskStatus === 'QUEUED') {
    await r.events.emit({ type: 'tasks.available' });
    await r.events.emit({ type: 'attempt.failed', jobId: outcome.jobId, taskId: outcome.taskId, attemptId, kind: outcome.taskKind, errorClass: outcome.errorClass ?? 'WORKER_ERROR' });
  } else await r.events.emit({ type: 'task.finished', jobId: outcome.jobId, taskId: outcome.taskId, kind: outcome.taskKind, status: outcome.taskStatus });
  const attempt = await r.prisma.attempt.findUnique({ where: { id: attemptId }, include: { task: { select: { jobId: true } } } });
  if (!attempt) throw new NotFoundError('Attempt', attemptId);
  return attempt;
}
