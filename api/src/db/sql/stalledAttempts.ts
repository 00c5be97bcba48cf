import type { Prisma } from '../client.js';

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
export async function stalledAttempts(prisma: Prisma, since: Date): Promise<StalledRow[]> {
  return prisma.$queryRaw<StalledRow[]>`
    SELECT a.id AS "attemptId", a."taskId", t."jobId", a."workerId", a.number,
           GREATEST((SELECT max(l.ts) FROM "LogChunk" l WHERE l."attemptId" = a.id),
                    (SELECT max(m.ts) FROM "MetricPoint" m WHERE m."attemptId" = a.id)) AS "lastOutputAt"
    FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId"
    WHERE a.status = 'RUNNING' AND a."startedAt" < ${since}
      AND t.kind IN ('RUN', 'SHARD', 'EVALUATE')
      AND NOT EXISTS (SELECT 1 FROM "LogChunk" l WHERE l."attemptId" = a.id AND l.ts >= ${since})
      AND NOT EXISTS (SELECT 1 FROM "MetricPoint" m WHERE m."attemptId" = a.id AND m.ts >= ${since})
      AND NOT EXISTS (SELECT 1 FROM "JobEvent" e WHERE e."jobId" = t."jobId" AND e.kind = 'attempt.stalled' AND e.payload ->> 'attemptId' = a.id::text)
    ORDER BY a."startedAt"
    LIMIT 100`;
}
