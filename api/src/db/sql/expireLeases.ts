import type { Db } from '../types.js';

export interface ExpiredRow {
  attemptId: string;
  taskId: string;
  jobId: string;
  workerId: string;
  /** LOST, or STALE when the worker already reported on it after its lease ran out. */
  status: 'LOST' | 'STALE';
}

/**
 * Marks LOST every live attempt whose lease expired before `now` (invariant 2), in one
 * statement; the caller decides retries. `FOR UPDATE OF a, t SKIP LOCKED`: an attempt
 * being completed right now (completeAttempt locks the attempt, then its task) is left
 * for the next tick (its completion wins or it expires then). Fix: this used to lock
 * only the attempt row, so the tick expired an attempt whose task a completion had
 * locked, then waited on that task row while the completion waited on the attempt row:
 * a deadlock, and one of the two failed.
 *
 * An attempt whose worker already reported on it late (a StaleReport saved after the lease
 * ran out, before this tick) is marked STALE, not LOST: the report read it RUNNING and so
 * could not turn it STALE itself (recordStale in domain/leases/currentAttempt.ts). Found by
 * bench/chaos.ts: such attempts stayed LOST although their worker had come back.
 */
export async function expireLeases(prisma: Db, now: Date): Promise<ExpiredRow[]> {
  return prisma.$queryRaw<ExpiredRow[]>`
    WITH expired AS (
      SELECT a.id FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId"
      WHERE a.status IN ('LEASED', 'RUNNING') AND a."leaseExpiresAt" < ${now}
      ORDER BY a."leaseExpiresAt"
      LIMIT 1000
      FOR UPDATE OF a, t SKIP LOCKED
    )
    UPDATE "Attempt" a
    SET status = CASE WHEN EXISTS (SELECT 1 FROM "StaleReport" s WHERE s."attemptId" = a.id)
                      THEN 'STALE'::"AttemptStatus" ELSE 'LOST'::"AttemptStatus" END,
        "finishedAt" = ${now}, "errorClass" = 'LEASE_EXPIRED',
        "errorMessage" = 'The worker stopped renewing its lease.'
    FROM expired, "Task" t
    WHERE a.id = expired.id AND t.id = a."taskId"
    RETURNING a.id AS "attemptId", a."taskId", t."jobId", a."workerId", a.status::text AS status`;
}
