import { hotQuery, type Db } from '../client.js';

/**
 * Marks a worker seen (OFFLINE comes back ONLINE) and returns its status, slots and
 * number of live attempts, in one statement. Only a worker of this worker token matches
 * (no row otherwise). Takes the worker row's lock for the UPDATE only.
 */
export async function touchWorker(prisma: Db, workerId: string, workerTokenId: string, now: Date) {
  return hotQuery<{ status: string; slots: number; live: number }>(
    prisma,
    'touchWorker',
    `UPDATE "Worker" w
    SET "lastSeenAt" = $3::timestamp, status = CASE WHEN w.status = 'OFFLINE' THEN 'ONLINE'::"WorkerStatus" ELSE w.status END
    WHERE w.id = $1::uuid AND w."tokenId" = $2::uuid
    RETURNING w.status::text AS status, w.slots,
      (SELECT count(*)::int FROM "Attempt" a WHERE a."workerId" = w.id AND a.status IN ('LEASED', 'RUNNING')) AS live`,
    [workerId, workerTokenId, now],
  );
}
