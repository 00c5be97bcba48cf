import type { Db } from '../client.js';

/**
 * Locks one attempt's row, then its task's (the order completions, heartbeats' renewals and the
 * tick use, so a checkpoint or a drain and an expiry or a completion cannot both win), for the
 * rest of the caller's transaction.
 */
export async function lockAttemptAndTask(tx: Db, attemptId: string, taskId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM "Attempt" WHERE id = ${attemptId}::uuid FOR UPDATE`;
  await tx.$queryRaw`SELECT id FROM "Task" WHERE id = ${taskId}::uuid FOR UPDATE`;
}
