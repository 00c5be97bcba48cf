/**
 * Fencing (invariant 1). Every report from a worker names (attemptId, fencingToken).
 * It is accepted only when the attempt is live (LEASED or RUNNING), the token matches,
 * and the attempt is still its task's current attempt. Anything else is refused with
 * StaleAttemptError and recorded as a StaleReport; an attempt of another worker token
 * is simply not found (no leak).
 *
 * Attempt status machine:
 *   LEASED → RUNNING (first heartbeat) → SUCCEEDED | FAILED   (completeAttempt)
 *   LEASED|RUNNING → LOST      (tick: lease expired)   → STALE (late report arrives)
 *   (a report after leaseExpiresAt is refused even before the tick marks the attempt LOST)
 *   LEASED|RUNNING → CANCELLED (job cancelled / cap reached; worker told via heartbeat)
 * SUCCEEDED and FAILED are final: accepted results never change.
 */
import type { Prisma as P } from '../../generated/prisma/client.js';
import type { Prisma, Tx } from '../../db/types.js';
import { isUuid } from '../ids.js';
import { NotFoundError, StaleAttemptError } from '../errors.js';
import { logAttempt } from '../../telemetry/sentry.js';
import { moveAttempts } from './taskLifecycle.js';
import { lockStaleAttempt } from '../../db/sql/lockStaleAttempt.js';

export async function loadOwnAttempt(db: Prisma | Tx, attemptId: string, workerTokenId: string) {
  if (!isUuid(attemptId)) throw new NotFoundError('Attempt', attemptId.slice(0, 80));
  const attempt = await db.attempt.findUnique({
    where: { id: attemptId },
    include: { worker: { select: { tokenId: true, id: true, name: true } }, task: true },
  });
  if (!attempt || attempt.worker.tokenId !== workerTokenId) throw new NotFoundError('Attempt', attemptId);
  return attempt;
}

/**
 * Why a report on this attempt is refused, or null when it is accepted. `now` matters: a
 * lease past its expiry is expired even when no tick has marked the attempt LOST yet (ticks
 * may stall). Such an attempt is left LEASED/RUNNING for the tick to mark LOST and retry.
 */
export function staleReason(
  a: { status: string; fencingToken: string; id: string; leaseExpiresAt: Date; task: { currentAttemptId: string | null; status: string } },
  token: string,
  now: Date,
): string | null {
  if (a.fencingToken !== token) return 'the fencing token does not match';
  if (a.status === 'LOST' || a.status === 'STALE') return 'its lease expired and the task was handed on';
  if (a.status === 'CANCELLED') return 'it was cancelled';
  if (a.status === 'SUCCEEDED' || a.status === 'FAILED') return `it already completed (${a.status.toLowerCase()})`;
  if (a.task.currentAttemptId !== a.id) return 'another attempt now holds the task';
  if (a.task.status === 'CANCELLED') return 'its task was cancelled';
  if (a.leaseExpiresAt < now) return 'its lease expired';
  return null;
}

/** Loads and checks; on a stale report records it (LOST → STALE) and throws StaleAttemptError. */
export async function requireCurrentAttempt(
  db: Prisma,
  attemptId: string,
  fencingToken: string,
  workerTokenId: string,
  now: Date,
  kind: string,
  detail: P.InputJsonValue = {},
) {
  const attempt = await loadOwnAttempt(db, attemptId, workerTokenId);
  const reason = staleReason(attempt, fencingToken, now);
  if (reason) {
    await db.$transaction((tx) => recordStale(tx, attempt.id, kind, { reason, ...(detail as object) }));
    throw new StaleAttemptError(attempt.id, reason);
  }
  return attempt;
}

/**
 * Records a late report and turns a LOST attempt STALE. Under the attempt's row lock, and
 * whatever status the caller read earlier: a report that arrives after the lease expired
 * but before the tick marked the attempt LOST used to leave it LOST for ever (the report
 * read RUNNING; the tick then wrote LOST). Now either this runs first (the tick skips the
 * locked row, and on its next pass finds the saved report: `markReportedLate` in
 * expireLeases.ts) or the tick commits first and this sees LOST. Found by bench/chaos.ts.
 */
export async function recordStale(tx: Tx, attemptId: string, kind: string, detail: P.InputJsonValue) {
  const a = await lockStaleAttempt(tx, attemptId);
  await tx.staleReport.create({ data: { attemptId, kind, detail } });
  await moveAttempts(tx, { id: attemptId }, ['LOST'], 'STALE');
  const reason = (detail as { reason?: string } | null)?.reason;
  if (a)
    logAttempt('stale', `late ${kind} refused${reason ? `: ${reason}` : ''}`, {
      job: a.jobId,
      task: a.taskId,
      worker: a.workerId,
      attempt: attemptId,
    });
}
