import type { Db } from '../client.js';

/**
 * Locks the RUNNING attempts and their tasks (attempt → task, the order completions, renewals and
 * checkpoints use) for the tick's usage accrual. SKIP LOCKED: an attempt being completed right now
 * is left to its completion, which accrues it itself — accruing it here too counted the same
 * interval twice (both read the same last entry) and could deadlock with the completion.
 */
export async function lockRunningAttempts(tx: Db): Promise<{ id: string }[]> {
  return tx.$queryRaw<{ id: string }[]>`
    SELECT a.id FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId"
    WHERE a.status = 'RUNNING'
    FOR UPDATE OF a, t SKIP LOCKED`;
}
