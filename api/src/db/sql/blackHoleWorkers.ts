import type { Db } from '../client.js';

export interface BlackHoleRow {
  workerId: string;
  ownerId: string;
  name: string;
  /** Jobs with a task that failed on this worker and then succeeded on another. */
  jobs: number;
  /** Such failed attempts. */
  failures: number;
  lastErrorClass: string | null;
  lastErrorMessage: string | null;
}

/**
 * Workers that look like black holes (domain/workers/blackHoles.ts): their attempts FAILED, since
 * `since`, on tasks of at least `minJobs` jobs that then SUCCEEDED on another worker. Failures from
 * before the end of a worker's last quarantine are not counted again. Only workers that could
 * claim (ONLINE, OFFLINE) or that said they cannot (UNHEALTHY); paused, draining and quarantined
 * ones are left as they are. Read-only: the caller quarantines. Out of memory and past the time
 * limit are not counted: a task that needed a bigger or faster machine and got one is no evidence
 * that this one is broken.
 * FAILED attempts are found through the (status, leaseExpiresAt) index's leading column; the
 * successful attempt through the task's currentAttemptId.
 */
export async function blackHoleWorkers(prisma: Db, since: Date, minJobs: number): Promise<BlackHoleRow[]> {
  return prisma.$queryRaw<BlackHoleRow[]>`
    SELECT a."workerId", w."ownerId", w.name,
           count(DISTINCT t."jobId")::int AS jobs, count(*)::int AS failures,
           (array_agg(a."errorClass" ORDER BY a."finishedAt" DESC))[1] AS "lastErrorClass",
           (array_agg(a."errorMessage" ORDER BY a."finishedAt" DESC))[1] AS "lastErrorMessage"
    FROM "Attempt" a
    JOIN "Task" t ON t.id = a."taskId"
    JOIN "Attempt" s ON s.id = t."currentAttemptId"
    JOIN "Worker" w ON w.id = a."workerId"
    WHERE a.status = 'FAILED' AND a."finishedAt" >= ${since} AND a."errorClass" NOT IN ('OOM', 'TIMEOUT')
      AND (w."quarantinedUntil" IS NULL OR a."finishedAt" > w."quarantinedUntil")
      AND w.status IN ('ONLINE', 'OFFLINE', 'UNHEALTHY')
      AND t.status = 'SUCCEEDED' AND s.status = 'SUCCEEDED' AND s."workerId" <> a."workerId"
    GROUP BY a."workerId", w."ownerId", w.name
    HAVING count(DISTINCT t."jobId") >= ${minJobs}
    ORDER BY a."workerId"`;
}
