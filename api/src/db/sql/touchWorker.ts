import type { Prisma } from '../client.js';

/**
 * Marks a worker seen (OFFLINE comes back ONLINE) and returns its status, slots and
 * number of live attempts, in one statement. Only a worker of this worker token matches
 * (no row otherwise). Takes the worker row's lock for the UPDATE only.
 */
export async function touchWorker(prisma: Prisma, workerId: string, workerTokenId: string, now: Date) {
  return prisma.$queryRaw<{ status: string; slots: number; live: number }[]>`
    UPDATE "Worker" w
    SET "lastSeenAt" = ${now}, status = CASE WHEN w.status = 'OFFLINE' THEN 'ONLINE'::"WorkerStatus" ELSE w.status END
    WHERE w.id = ${workerId}::uuid AND w."tokenId" = ${workerTokenId}::uuid
    RETURNING w.status::text AS status, w.slots,
      (SELECT count(*)::int FROM "Attempt" a WHERE a."workerId" = w.id AND a.status IN ('LEASED', 'RUNNING')) AS live`;
}
