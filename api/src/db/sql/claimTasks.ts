import type { Prisma } from '../client.js';

export interface ClaimedRow {
  attemptId: string;
  taskId: string;
  fencingToken: string;
  leaseExpiresAt: Date;
  number: number;
}

/**
 * Claims up to `max` eligible QUEUED tasks for one worker and creates their attempts,
 * in ONE statement (so it is atomic on PGlite's single connection too, and never holds
 * a transaction open across a long-poll).
 *
 * Locking: candidate task rows are taken with `FOR UPDATE OF t SKIP LOCKED`, so
 * concurrent claimers never wait on each other and never get the same task; the
 * UPDATE re-checks status = 'QUEUED' under the row lock.
 *
 * Eligibility (all in SQL): workload among the worker's workloads, accelerator vendor,
 * memory and accelerator memory, pinned worker, runAfter (retry backoff), a setup phase
 * (packages to install) only on a worker whose capabilities say it installs; the worker
 * must be ONLINE (paused and draining workers get nothing).
 * Fairness: round-robin between owners — a task's turn is its owner's live tasks plus
 * its rank among that owner's eligible tasks; then priority, then age. One user's
 * thousand tasks cannot starve another's one, in single or batch claims.
 * Placement: a worker with an accelerator skips accelerator-free work while an idle,
 * recently seen CPU-only worker could take it.
 */
export async function claimTasks(prisma: Prisma, workerId: string, max: number, now: Date, leaseSec: number): Promise<ClaimedRow[]> {
  const leaseUntil = new Date(now.getTime() + leaseSec * 1000);
  const seenSince = new Date(now.getTime() - 3 * leaseSec * 1000);
  return prisma.$queryRaw<ClaimedRow[]>`
    WITH w AS (
      SELECT id, workloads, "accelVendor", "accelMemMiB", "memoryMiB",
             COALESCE((capabilities -> 'install' ->> 'enabled')::boolean, false) AS installs
      FROM "Worker" WHERE id = ${workerId}::uuid AND status = 'ONLINE'
    ),
    -- Fairness (fix): each candidate gets a turn = its owner's live tasks + its rank among
    -- that owner's eligible tasks, so a batch claim interleaves owners (turn 1 of every
    -- owner before turn 2 of any). Ordering only by the owner's live count, evaluated once
    -- per statement, handed a batch all of one owner's oldest tasks.
    live AS (
      SELECT "ownerId", count(*) AS n FROM "Task" WHERE status IN ('LEASED', 'RUNNING') GROUP BY "ownerId"
    ),
    ranked AS (
      SELECT t.id, t.priority, t."createdAt",
             COALESCE(l.n, 0) + row_number() OVER (PARTITION BY t."ownerId" ORDER BY t.priority DESC, t."createdAt", t.id) AS turn
      FROM "Task" t CROSS JOIN w LEFT JOIN live l ON l."ownerId" = t."ownerId"
      WHERE t.status = 'QUEUED'
        AND t."runAfter" <= ${now}
        AND t.workload = ANY (w.workloads)
        AND (t."accelVendor" IS NULL OR t."accelVendor" = w."accelVendor")
        AND t."minMemoryMiB" <= w."memoryMiB"
        AND t."minAccelMemMiB" <= w."accelMemMiB"
        AND (t."pinnedWorkerId" IS NULL OR t."pinnedWorkerId" = w.id)
        -- A task with a setup phase (packages to install) only goes to a worker that installs.
        AND (w.installs OR NOT (t.requirements ? 'setup'))
        AND NOT (
          w."accelVendor" <> 'none' AND t."accelVendor" IS NULL AND t."pinnedWorkerId" IS NULL
          AND EXISTS (
            SELECT 1 FROM "Worker" c
            WHERE c.status = 'ONLINE' AND c."accelVendor" = 'none' AND c.id <> w.id
              AND c."lastSeenAt" >= ${seenSince}
              AND t.workload = ANY (c.workloads) AND t."minMemoryMiB" <= c."memoryMiB"
              AND (SELECT count(*) FROM "Attempt" a WHERE a."workerId" = c.id AND a.status IN ('LEASED', 'RUNNING')) < c.slots
          )
        )
    ),
    picked AS (
      SELECT t.id, t."attemptCount"
      FROM ranked r JOIN "Task" t ON t.id = r.id
      WHERE t.status = 'QUEUED'
      ORDER BY r.turn, r.priority DESC, r."createdAt", r.id
      LIMIT ${max}
      FOR UPDATE OF t SKIP LOCKED
    ),
    att AS (
      INSERT INTO "Attempt" (id, "taskId", number, "workerId", "fencingToken", "leaseExpiresAt", status, "createdAt")
      SELECT gen_random_uuid(), p.id, p."attemptCount" + 1, ${workerId}::uuid, gen_random_uuid()::text, ${leaseUntil}, 'LEASED', ${now}
      FROM picked p
      RETURNING id, "taskId", "fencingToken", "leaseExpiresAt", number
    ),
    upd AS (
      UPDATE "Task" t
      SET status = 'LEASED', "attemptCount" = att.number, "currentAttemptId" = att.id, "statusReason" = NULL, "updatedAt" = ${now}
      FROM att
      WHERE t.id = att."taskId" AND t.status = 'QUEUED'
      RETURNING t.id
    )
    SELECT att.id AS "attemptId", att."taskId", att."fencingToken", att."leaseExpiresAt", att.number
    FROM att JOIN upd ON upd.id = att."taskId"`;
}
