import { hotQuery, type Prisma } from '../client.js';

export interface TouchedWorker {
  id: string;
  ownerId: string;
  /** The status before this touch (OFFLINE comes back ONLINE). */
  previous: string;
  status: string;
  /** A live attempt of this worker whose task was cancelled (the heartbeat then tells it to stop). */
  cancelledLive: boolean;
}

/**
 * Marks many workers seen in ONE statement (the heartbeats of one flush, domain/workers/seen.ts):
 * lastSeenAt = now and OFFLINE → ONLINE, only for a worker of the token it names (no row
 * otherwise), in id order (row locks taken in one order, so two flushes never deadlock).
 * Returns the status before and after, and whether the worker holds a live attempt of a
 * cancelled task. The status is never written from a value read earlier, so a pause committed
 * meanwhile stays.
 */
export async function touchWorkers(prisma: Prisma, workers: { id: string; tokenId: string }[], now: Date): Promise<TouchedWorker[]> {
  if (workers.length === 0) return [];
  return hotQuery<TouchedWorker>(
    prisma,
    'touchWorkers',
    `WITH i AS (SELECT * FROM unnest($1::uuid[], $2::uuid[]) AS i(id, "tokenId")),
    old AS (
      SELECT w.id, w.status FROM "Worker" w JOIN i ON i.id = w.id AND i."tokenId" = w."tokenId"
      ORDER BY w.id FOR NO KEY UPDATE OF w
    )
    UPDATE "Worker" w
    SET "lastSeenAt" = $3::timestamp, status = CASE WHEN w.status = 'OFFLINE' THEN 'ONLINE'::"WorkerStatus" ELSE w.status END
    FROM old
    WHERE w.id = old.id
    RETURNING w.id, w."ownerId", old.status::text AS previous, w.status::text AS status,
      EXISTS (SELECT 1 FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId"
              WHERE a."workerId" = w.id AND a.status IN ('LEASED', 'RUNNING') AND t.status = 'CANCELLED') AS "cancelledLive"`,
    [workers.map((w) => w.id), workers.map((w) => w.tokenId), now],
  );
}
