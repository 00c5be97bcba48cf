import type { Db } from '../client.js';
import { Prisma as P } from '../../generated/prisma/client.js';

/**
 * Moves the billable usage entries of these attempts out of the user's cost, in one
 * statement: each entry becomes non-billable and its job's costCad goes down by the same
 * amount its lostCostCad goes up (Job.costCad stays the sum of its billable entries).
 * Returns what moved, per job.
 *
 * Exactly once: only entries still billable move, and the UPDATE locks them; a second
 * caller racing the first (the tick expiring a lease while a late report arrives, or two
 * ticks) waits on those row locks, then re-checks `billable` and moves nothing. The job
 * rows are locked last (after the entries), as accrueUsage locks them after inserting an
 * entry, and callers hold the attempt and task rows already (attempt → task → job).
 */
export async function writeOffUsage(db: Db, attemptIds: string[]): Promise<{ jobId: string; movedCad: string }[]> {
  if (attemptIds.length === 0) return [];
  return db.$queryRaw<{ jobId: string; movedCad: string }[]>(writeOffUsageSql(attemptIds));
}

/** The statement itself (completeAttempts runs it in its own transaction). */
export function writeOffUsageSql(attemptIds: string[]) {
  return P.sql`
    WITH moved AS (
      UPDATE "UsageEntry" SET billable = false
      WHERE "attemptId" = ANY (${attemptIds}::uuid[]) AND billable
      RETURNING "jobId", "costCad"
    ), per_job AS (
      SELECT "jobId", sum("costCad") AS c FROM moved GROUP BY "jobId"
    )
    UPDATE "Job" j SET "costCad" = j."costCad" - p.c, "lostCostCad" = j."lostCostCad" + p.c
    FROM per_job p WHERE j.id = p."jobId"
    RETURNING j.id AS "jobId", p.c::text AS "movedCad"`;
}
