import type { Prisma } from '../client.js';

export interface ExpiredRow {
  attemptId: string;
  taskId: string;
  jobId: string;
  workerId: string;
}

/**
 * Marks LOST every live attempt whose lease expired before `now` (invariant 2), in one
 * statement; the caller decides retries. `FOR UPDATE SKIP LOCKED`: an attempt being
 * completed right now is left for the next tick (its completion wins or it expires then).
 */
export async function expireLeases(prisma: Prisma, now: Date): Promise<ExpiredRow[]> {
  return prisma.$queryRaw<ExpiredRow[]>`
    WITH expired AS (
      SELECT a.id FROM "Attempt" a
      WHERE a.status IN ('LEASED', 'RUNNING') AND a."leaseExpiresAt" < ${now}
      ORDER BY a."leaseExpiresAt"
      LIMIT 1000
      FOR UPDATE SKIP LOCKED
    )
    UPDATE "Attempt" a
    SET status = 'LOST', "finishedAt" = ${now}, "errorClass" = 'LEASE_EXPIRED',
        "errorMessage" = 'The worker stopped renewing its lease.'
    FROM expired, "Task" t
    WHERE a.id = expired.id AND t.id = a."taskId"
    RETURNING a.id AS "attemptId", a."taskId", t."jobId", a."workerId"`;
}
