import type { Db } from '../client.js';
import type { JobStatus } from '../../generated/prisma/client.js';

/**
 * Locks a job's row for the rest of the caller's transaction and returns its status (null: no
 * such job). FOR NO KEY UPDATE, not FOR UPDATE: inserts into tables that reference the job
 * (JobEvent, Task) take a KEY SHARE lock on its row, which FOR UPDATE blocks — a cancel holding
 * the job row and waiting on a task row then deadlocked with a completion holding that task row
 * and recording its job event (api/test/races.test.ts, "a cancel and a completion of the same
 * job at once"). Job-status writers still exclude each other: NO KEY UPDATE conflicts with itself.
 */
export async function lockJob(tx: Db, jobId: string): Promise<JobStatus | null> {
  const rows = await tx.$queryRaw<{ status: JobStatus }[]>`SELECT status FROM "Job" WHERE id = ${jobId}::uuid FOR NO KEY UPDATE`;
  return rows[0]?.status ?? null;
}
