import type { Db } from '../client.js';

/**
 * Locks the attempt a late report names (its row only: the report may come from any call) and
 * reads what the log line about it needs. The tick's expiry skips a locked row, so either this
 * transaction records the report first (the tick finds it on its next pass) or the tick has
 * marked the attempt LOST already and this sees it (domain/leases/currentAttempt.ts recordStale).
 */
export async function lockStaleAttempt(tx: Db, attemptId: string): Promise<{ taskId: string; workerId: string; jobId: string } | null> {
  const [a] = await tx.$queryRaw<{ taskId: string; workerId: string; jobId: string }[]>`
    SELECT a."taskId", a."workerId", t."jobId" FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId" WHERE a.id = ${attemptId}::uuid FOR UPDATE OF a`;
  return a ?? null;
}
