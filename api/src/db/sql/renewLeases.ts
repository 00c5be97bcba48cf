import { hotQuery, type Prisma } from '../client.js';

/**
 * Renews the leases a worker still holds, in one statement: only attempts that are
 * LEASED or RUNNING, carry the right fencing token, belong to this worker and are their
 * task's current attempt, and whose lease has not run out: an expired lease is lost even
 * when no tick has marked it LOST yet (ticks may stall; the expiry is the attempt's own
 * fact). LEASED becomes RUNNING (the worker has started it).
 * The attempt rows are locked in id order first (as batched completions lock them), then the
 * task rows the UPDATE changes; nothing else is locked. Returns the renewed ids.
 */
export async function renewLeases(
  prisma: Prisma,
  workerId: string,
  leases: { attemptId: string; fencingToken: string }[],
  now: Date,
  leaseSec: number,
): Promise<string[]> {
  if (leases.length === 0) return [];
  const leaseUntil = new Date(now.getTime() + leaseSec * 1000);
  const ids = leases.map((l) => l.attemptId);
  const tokens = leases.map((l) => l.fencingToken);
  const rows = await hotQuery<{ id: string }>(
    prisma,
    'renewLeases',
    `
    WITH input AS (SELECT * FROM unnest($1::uuid[], $2::text[]) AS i(id, token)),
    -- The attempt rows locked in id order, the order a batch of completions locks them
    -- (completeAttempts.ts): two multi-row lockers in one order never deadlock.
    locked AS (SELECT a.id FROM "Attempt" a JOIN input ON input.id = a.id ORDER BY a.id FOR NO KEY UPDATE OF a),
    renewed AS (
      UPDATE "Attempt" a
      SET "leaseExpiresAt" = $3::timestamp,
          status = 'RUNNING',
          "startedAt" = COALESCE(a."startedAt", $4::timestamp)
      FROM locked JOIN input ON input.id = locked.id, "Task" t
      WHERE a.id = input.id AND a."fencingToken" = input.token AND a."workerId" = $5::uuid
        AND a.status IN ('LEASED', 'RUNNING') AND a."leaseExpiresAt" >= $4::timestamp
        AND t.id = a."taskId" AND t."currentAttemptId" = a.id AND t.status IN ('LEASED', 'RUNNING')
      RETURNING a.id, a."taskId"
    ),
    tasks AS (
      UPDATE "Task" t SET status = 'RUNNING', "updatedAt" = $4::timestamp
      FROM renewed WHERE t.id = renewed."taskId" AND t.status = 'LEASED'
      RETURNING t.id
    )
    SELECT id FROM renewed`,
    [ids, tokens, leaseUntil, now, workerId],
  );
  return rows.map((r) => r.id);
}
