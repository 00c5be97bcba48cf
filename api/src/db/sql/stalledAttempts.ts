import type { Db } from '../types.js';

export interface StalledRow {
  attemptId: string;
  taskId: string;
  jobId: string;
  workerId: string;
  number: number;
  /** The last log line or metric, or null when the attempt printed nothing. */
  lastOutputAt: Date | null;
}

/**
 * RUNNING attempts of RUN/SHARD/EVALUATE tasks that started before `since` and have written no
 * log line and no metric since then, not reported as stalled yet (no `attempt.stalled` job
 * event names them): the lease is renewed — the worker is alive — but the program says
 * nothing. Bounded per tick.
 */
export async function stalledAttempts(prisma: Db, since: Date): Promise<StalledRow[]> {
  // The latest line and metric are the highest seq (primary-key order): one index probe per
  // running attempt, not a scan of all its chunks, on every tick.
  return prisma.$queryRaw<StalledRow[]>`
    SELECT * FROM (
      SELECT a.id AS "attemptId", a."taskId", t."jobId", a."workerId", a.number, a."startedAt",
             GREATEST((SELECT l.ts FROM "LogChunk" l WHERE l."attemptId" = a.id ORDER BY l.seq DESC LIMIT 1),
                      (SELECT m.ts FROM "MetricPoint" m WHERE m."attemptId" = a.id ORDER BY m.seq DESC LIMIT 1)) AS "lastOutputAt"
      FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId"
      WHERE a.status = 'RUNNING' AND a."startedAt" < ${since}
        AND t.kind IN ('RUN', 'SHARD', 'EVALUATE')
        AND NOT EXISTS (SELECT 1 FROM "JobEvent" e WHERE e."jobId" = t."jobId" AND e.kind = 'attempt.stalled' AND e.payload ->> 'attemptId' = a.id::text)
    ) s
    WHERE s."lastOutputAt" IS NULL OR s."lastOutputAt" < ${since}
    ORDER BY s."startedAt"
    LIMIT 100`;
}
