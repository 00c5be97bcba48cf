/**
 * Completions, batched: a worker hands in the results of several attempts in one call, and
 * they are applied in one transaction of three statements whatever the batch size (lock and
 * read, one data-modifying statement, commit), then one NOTIFY for the whole batch. Each
 * attempt is fenced on its own (invariant 1): a stale member is refused and recorded while
 * the others are accepted. `completeAttempt` (the single-attempt mutation) is a batch of one.
 *
 *   success (exit 0, no error class) → attempt SUCCEEDED, task SUCCEEDED with its result
 *   infrastructure error              → attempt FAILED, task retried, not counted against
 *                                       maxAttempts (retryOrFail.ts); its usage is the
 *                                       contributor's loss, not charged
 *   the code failed                   → attempt FAILED, task FAILED (never retried blindly)
 *
 * The statements and their locking reasoning: db/sql/completeAttempts.ts.
 */
import { checkTree, normalizeMode, normalizeUploadPath } from '../blobs/paths.js';
import { fromEpochMs, hotTransaction } from '../../db/client.js';
import { writeOffUsageSql } from '../../db/sql/writeOffUsage.js';
import { applyCompletionsSql, LOCK_COMPLETIONS } from '../../db/sql/completeAttempts.js';
import { isContributorLoss, priceInterval, reservationOf } from '../billing/usage.js';
import { DomainError, NotFoundError, StaleAttemptError, ValidationError } from '../errors.js';
import { logAttempt } from '../../telemetry/sentry.js';
import type { DomainEvent } from '../events.js';
import { emitAll } from '../events.js';
import { isUuid } from '../ids.js';
import type { Resources } from '../resources.js';
import type { TaskKind } from '../../generated/prisma/enums.js';
import { staleReason } from './currentAttempt.js';
import { retryOrFail } from './retryOrFail.js';

export interface CompleteInput {
  exitCode?: number | null;
  errorClass?: string | null;
  errorMessage?: string | null;
  outputs?: { path: string; sha256: string; mode?: number | null }[] | null;
  metrics?: unknown;
  usage?: unknown;
}

export interface Completion {
  attemptId: string;
  fencingToken: string;
  result: CompleteInput;
}

/** At most this many attempts per completeAttempts call. */
export const MAX_COMPLETIONS = 256;

export type CompletionOutcome =
  | {
      attemptId: string;
      ok: true;
      id: string;
      taskId: string;
      workerId: string;
      jobId: string;
      taskKind: TaskKind;
      status: 'SUCCEEDED' | 'FAILED';
      errorClass: string | null;
      taskStatus: 'SUCCEEDED' | 'FAILED' | 'QUEUED';
    }
  | { attemptId: string; ok: false; error: DomainError };

interface Locked {
  id: string;
  taskId: string;
  workerId: string;
  number: number;
  status: string;
  fencingToken: string;
  leaseExpiresAt: Date;
  startedAt: Date | null;
  createdAt: Date;
  lastPeriodEnd: Date | null;
  workerName: string;
  cpuCores: number;
  memoryMiB: number;
  slots: number;
  jobId: string;
  kind: TaskKind;
  name: string;
  taskStatus: string;
  currentAttemptId: string | null;
  attemptCount: number;
  maxAttempts: number;
  infraFailures: number;
  requirements: unknown;
  accelVendor: string | null;
}

type Output = { path: string; sha256: string; size: number; mode: number };

/** Normalized outputs, or the ValidationError that refuses them. */
function outputsOf(input: CompleteInput): Output[] | ValidationError {
  try {
    return checkTree(
      (input.outputs ?? []).map((o) => ({ path: normalizeUploadPath(o.path), sha256: o.sha256, size: 0, mode: normalizeMode(o.mode) })),
    );
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
}

export async function completeAttempts(r: Resources, workerTokenId: string, items: Completion[]): Promise<CompletionOutcome[]> {
  if (items.length > MAX_COMPLETIONS)
    throw new ValidationError(`At most ${MAX_COMPLETIONS} completions per call.`, [{ path: ['completions'], message: 'too many' }]);
  const ids = items.map((c) => c.attemptId);
  if (new Set(ids).size !== ids.length)
    throw new ValidationError('An attempt appears twice in one batch of completions.', [
      { path: ['completions'], message: 'duplicate attemptId' },
    ]);
  const outputs = items.map((c) => outputsOf(c.result));
  const known = items.filter((c) => isUuid(c.attemptId));

  // Only blobs this worker uploaded for this attempt (recorded by PUT /blobs with the attempt
  // header): listing any other existing blob would hand the job's owner read access to bytes
  // the worker never held. One query for the batch; uploads of another token's attempts are
  // never used (those attempts are not found below).
  const withOutputs = items.flatMap((c, k) => {
    const o = outputs[k]!;
    return isUuid(c.attemptId) && Array.isArray(o) && o.length > 0 ? [{ attemptId: c.attemptId, shas: o.map((x) => x.sha256) }] : [];
  });
  const uploads = withOutputs.length
    ? await r.prisma.attemptUpload.findMany({
        where: { attemptId: { in: withOutputs.map((c) => c.attemptId) }, sha256: { in: withOutputs.flatMap((c) => c.shas) } },
        select: { attemptId: true, sha256: true, blob: { select: { size: true } } },
      })
    : [];
  const sizes = new Map(uploads.map((u) => [`${u.attemptId}/${u.sha256}`, Number(u.blob.size)]));

  const now = r.now();
  const { outcomes, events } = await retryOnDeadlock(() =>
    hotTransaction(
      r.prisma,
      async (q) => {
        // Times as epoch milliseconds: the drivers read a timestamp column differently (hotQuery).
        const rows = known.length
          ? (
              await q<
                Omit<Locked, 'leaseExpiresAt' | 'startedAt' | 'createdAt' | 'lastPeriodEnd'> & {
                  leaseMs: number;
                  startedMs: number | null;
                  createdMs: number;
                  lastPeriodEndMs: number | null;
                }
              >('completeAttempts_lock', LOCK_COMPLETIONS, [known.map((c) => c.attemptId), workerTokenId])
            ).map(({ leaseMs, startedMs, createdMs, lastPeriodEndMs, ...a }): Locked => ({
              ...a,
              leaseExpiresAt: fromEpochMs(leaseMs),
              startedAt: fromEpochMs(startedMs),
              createdAt: fromEpochMs(createdMs),
              lastPeriodEnd: fromEpochMs(lastPeriodEndMs),
            }))
          : [];
        const byId = new Map(rows.map((a) => [a.id, a]));
        const outcomes: (CompletionOutcome | null)[] = [];
        const apply: Record<string, unknown>[] = [];
        const stale: { attemptId: string; detail: unknown; lost: boolean }[] = [];
        const losses: string[] = [];
        items.forEach((c, k) => {
          const a = byId.get(c.attemptId);
          if (!a)
            return outcomes.push({ attemptId: c.attemptId, ok: false, error: new NotFoundError('Attempt', c.attemptId.slice(0, 80)) });
          let outs = outputs[k]!;
          if (!(outs instanceof ValidationError)) {
            const missing = outs.findIndex((o) => !sizes.has(`${a.id}/${o.sha256}`));
            if (missing >= 0) {
              const o = outs[missing]!;
              outs = new ValidationError(
                `Output ${o.path} was not uploaded for this attempt (PUT /blobs/${o.sha256} with the header X-ChatGPU-Attempt: ${a.id} first).`,
                [{ path: ['outputs', String(missing), 'sha256'], message: 'not uploaded for this attempt' }],
              );
            } else for (const o of outs) o.size = sizes.get(`${a.id}/${o.sha256}`)!;
          }
          if (outs instanceof ValidationError) return outcomes.push({ attemptId: c.attemptId, ok: false, error: outs });
          const reason = staleReason({ ...a, task: { currentAttemptId: a.currentAttemptId, status: a.taskStatus } }, c.fencingToken, now);
          if (reason) {
            stale.push({ attemptId: a.id, detail: { reason, exitCode: c.result.exitCode ?? null }, lost: a.status === 'LOST' });
            return outcomes.push({ attemptId: c.attemptId, ok: false, error: new StaleAttemptError(a.id, reason) });
          }
          const input = c.result;
          const succeeded = (input.exitCode ?? null) === 0 && !input.errorClass;
          const errorClass = succeeded ? null : (input.errorClass ?? 'EXIT_NONZERO');
          const status = succeeded ? 'SUCCEEDED' : 'FAILED';
          let taskStatus: 'SUCCEEDED' | 'FAILED' | 'QUEUED';
          let statusReason: string | null = null;
          const decision = succeeded ? null : retryOrFail(a, { kind: 'failed', errorClass: errorClass! }, now, r.config.scheduler);
          if (!decision) taskStatus = 'SUCCEEDED';
          else if (decision.retry) {
            taskStatus = 'QUEUED';
            statusReason = `Attempt ${a.number} failed on ${a.workerName} (${errorClass}${input.errorMessage ? `: ${input.errorMessage.slice(0, 300)}` : ''}); retrying in ${decision.waitSec}s${decision.infrastructure ? " (the worker failed, not the code: not counted against the task's attempts)" : ''}.`;
          } else {
            taskStatus = 'FAILED';
            statusReason =
              errorClass === 'EXIT_NONZERO'
                ? `The command exited with code ${input.exitCode}.`
                : errorClass === 'TIMEOUT'
                  ? 'The command ran past its time limit.'
                  : `${errorClass}: ${input.errorMessage ?? 'no details'}${decision.exhausted ? `; ${decision.exhausted}` : ''}`;
          }
          // The final usage interval (billing/usage.ts accrueUsage with final: true, computed
          // here from the locked rows): from the last entry, else the start, to now.
          const from = a.lastPeriodEnd ?? a.startedAt ?? a.createdAt;
          const billable = !isContributorLoss({ status, errorClass });
          if (!billable) losses.push(a.id);
          const res = reservationOf({ requirements: a.requirements, accelVendor: a.accelVendor }, a);
          const price = now > from ? priceInterval(r.config.rates, res, (now.getTime() - from.getTime()) / 3600_000) : null;
          apply.push({
            ord: k,
            id: a.id,
            token: c.fencingToken,
            status,
            exitCode: input.exitCode ?? null,
            errorClass,
            errorMessage: input.errorMessage?.slice(0, 4000) ?? null,
            outputs: outs,
            metrics: input.metrics ?? null,
            usage: input.usage ?? null,
            taskStatus,
            statusReason,
            runAfter: decision?.retry ? decision.runAfter.toISOString() : null,
            infraFailure: decision?.infrastructure ?? false,
            result: succeeded ? { attemptId: a.id, exitCode: 0, outputs: outs, metrics: input.metrics ?? null } : null,
            jobId: a.jobId,
            periodStart: price ? from.toISOString() : null,
            cpuCoreHours: price?.cpuCoreHours ?? 0,
            ramGbHours: price?.ramGbHours ?? 0,
            accelHours: price?.accelHours ?? 0,
            accelClass: res.accelClass,
            costCad: price ? price.costCad.toFixed(6) : '0',
            billable,
            events: [
              {
                kind: 'attempt.status',
                payload: { taskId: a.taskId, attemptId: a.id, number: a.number, status, exitCode: input.exitCode ?? null, errorClass },
              },
              { kind: 'task.status', payload: { taskId: a.taskId, name: a.name, status: taskStatus, reason: statusReason } },
            ],
          });
          return outcomes.push({
            attemptId: c.attemptId,
            ok: true,
            id: a.id,
            taskId: a.taskId,
            workerId: a.workerId,
            jobId: a.jobId,
            taskKind: a.kind,
            status,
            errorClass,
            taskStatus,
          });
        });

        const statement = applyCompletionsSql(apply, stale, now);
        const done =
          apply.length + stale.length
            ? await q<{ what: string; id: string; jobId: string | null }>('completeAttempts_apply', statement.text, statement.values)
            : [];
        const accepted = new Set(done.filter((d) => d.what === 'attempt').map((d) => d.id));
        // Rows were locked and checked above, so the UPDATE's own fencing check agrees; were it
        // ever not to, the completion is refused, never half-applied.
        if (apply.some((x) => !accepted.has(x.id as string)))
          throw new Error('completeAttempts: the fenced UPDATE refused an attempt the locked read accepted');
        // The machine failed, not the code: what these attempts used is not the user's to pay.
        const lossIds = losses.filter((id) => accepted.has(id));
        if (lossIds.length) {
          const w = writeOffUsageSql(lossIds);
          await q('completeAttempts_writeOff', w.text, w.values);
        }
        const events: DomainEvent[] = done
          .filter((d) => d.what === 'event')
          .map((d) => ({ type: 'job.event', jobId: d.jobId!, eventId: d.id }));
        return { outcomes: outcomes as CompletionOutcome[], events };
      },
      { timeoutMs: 15_000, maxWaitMs: 10_000 }, // busy databases: never fail a finished run on a 5 s limit
    ),
  );

  // After commit, one NOTIFY for the batch (emitAll packs the events).
  const ok = outcomes.filter((o): o is Extract<CompletionOutcome, { ok: true }> => o.ok);
  const jobs = [...new Set(ok.map((o) => o.jobId))];
  const after: DomainEvent[] = [...events, ...jobs.map((jobId) => ({ type: 'job.updated', jobId }) as DomainEvent)];
  const retried = ok.filter((o) => o.taskStatus === 'QUEUED').length;
  if (retried > 0) after.push({ type: 'tasks.available', count: retried });
  for (const o of ok) {
    if (o.taskStatus === 'QUEUED')
      after.push({
        type: 'attempt.failed',
        jobId: o.jobId,
        taskId: o.taskId,
        attemptId: o.id,
        kind: o.taskKind,
        errorClass: o.errorClass ?? 'WORKER_ERROR',
      });
    else after.push({ type: 'task.finished', jobId: o.jobId, taskId: o.taskId, kind: o.taskKind, status: o.taskStatus });
  }
  await emitAll(r.events, after);
  for (const o of ok) {
    const ids = { job: o.jobId, task: o.taskId, worker: o.workerId, attempt: o.id };
    logAttempt(
      'complete',
      `attempt ${o.status.toLowerCase()}${o.errorClass ? ` (${o.errorClass})` : ''}; task ${o.taskStatus.toLowerCase()}`,
      ids,
      o.errorClass ? { error_class: o.errorClass } : {},
    );
  }
  return outcomes;
}

/**
 * Runs the batch's transaction again when PostgreSQL aborted it as a deadlock victim (40P01):
 * it was rolled back whole, so nothing of it was applied. Lockers of several attempts take
 * them in id order (here, renewLeases), but a cancel locks its job first; up to 3 tries.
 */
async function retryOnDeadlock<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= 2 || !/40P01|deadlock detected/.test(String((err as Error).message))) throw err;
    }
  }
}
