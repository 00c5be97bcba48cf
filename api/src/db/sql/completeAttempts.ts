import { epochMs } from '../client.js';
import { Prisma as P } from '../../generated/prisma/client.js';

/**
 * The statements of a batch of completions (domain/leases/completeAttempts.ts), which writes
 * Task.status and Attempt.status here as the task life cycle allows (domain/leases/taskLifecycle.ts):
 *   attempt LEASED | RUNNING → SUCCEEDED | FAILED; task LEASED | RUNNING → SUCCEEDED | FAILED | QUEUED (a retry);
 *   attempt LOST → STALE (its worker reported late).
 *
 * Locking: `FOR UPDATE OF a, t` takes each attempt row, then its task row (the order of
 * heartbeat's renewal, the tick's expiry and the checkpoint calls), so a completion and an
 * expiry or a cancel cannot both win. The UPDATE re-checks the fencing in its WHERE (token,
 * live status, unexpired lease, still the task's current attempt), and usage entries and job
 * events are written only for the rows that UPDATE returned, in the same statement; the job
 * rows are locked last (the usage totals), after the attempt and task rows.
 */

/** Locks and reads the batch's attempts of this worker token, with their tasks and workers ($1 attempt ids, $2 the token). Times as epoch milliseconds. */
export const LOCK_COMPLETIONS = `SELECT a.id, a."taskId", a."workerId", a.number, a.status::text AS status, a."fencingToken",
                      ${epochMs('a."leaseExpiresAt"')} AS "leaseMs", ${epochMs('a."startedAt"')} AS "startedMs", ${epochMs('a."createdAt"')} AS "createdMs",
                      (SELECT ${epochMs('max(u."periodEnd")')} FROM "UsageEntry" u WHERE u."attemptId" = a.id) AS "lastPeriodEndMs",
                      w.name AS "workerName", w."cpuCores", w."memoryMiB", w.slots,
                      t."jobId", t.kind::text AS kind, t.name, t.status::text AS "taskStatus", t."currentAttemptId", t."attemptCount", t."maxAttempts", t."infraFailures",
                      t.requirements, t."accelVendor"
               FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId" JOIN "Worker" w ON w.id = a."workerId"
               WHERE a.id = ANY ($1::uuid[]) AND w."tokenId" = $2::uuid
               ORDER BY a.id
               FOR UPDATE OF a, t`;

// One statement: the fenced attempt UPDATE, then — only for the rows it returned — the
// tasks, the final usage entries and the jobs' totals, the job events; and the stale
// reports (a LOST attempt reporting late becomes STALE).
export function applyCompletionsSql(apply: unknown[], stale: unknown[], now: Date) {
  return P.sql`
            WITH i AS (
              SELECT * FROM jsonb_to_recordset(${JSON.stringify(apply)}::jsonb) AS i(
                ord int, id uuid, token text, status "AttemptStatus", "exitCode" int, "errorClass" text, "errorMessage" text,
                outputs jsonb, metrics jsonb, usage jsonb, "taskStatus" "TaskStatus", "statusReason" text, "runAfter" timestamptz, "infraFailure" boolean,
                result jsonb, "jobId" uuid, "periodStart" timestamptz, "cpuCoreHours" float8, "ramGbHours" float8, "accelHours" float8,
                "accelClass" text, "costCad" numeric, billable boolean, events jsonb)
            ),
            acc AS (
              UPDATE "Attempt" a
              SET status = i.status, "exitCode" = i."exitCode", "errorClass" = i."errorClass", "errorMessage" = i."errorMessage",
                  outputs = i.outputs, metrics = COALESCE(i.metrics, a.metrics), usage = COALESCE(i.usage, a.usage), "finishedAt" = ${now}::timestamp
              FROM i, "Task" t
              WHERE a.id = i.id AND a."fencingToken" = i.token AND a.status IN ('LEASED', 'RUNNING') AND a."leaseExpiresAt" >= ${now}::timestamp
                AND t.id = a."taskId" AND t."currentAttemptId" = a.id AND t.status IN ('LEASED', 'RUNNING')
              RETURNING a.id, a."taskId"
            ),
            tsk AS (
              UPDATE "Task" t
              SET status = i."taskStatus", "statusReason" = i."statusReason",
                  "currentAttemptId" = CASE WHEN i."taskStatus" = 'QUEUED' THEN NULL ELSE t."currentAttemptId" END,
                  "runAfter" = COALESCE(i."runAfter", t."runAfter"),
                  "infraFailures" = t."infraFailures" + CASE WHEN i."infraFailure" THEN 1 ELSE 0 END,
                  "finishedAt" = CASE WHEN i."taskStatus" = 'QUEUED' THEN t."finishedAt" ELSE ${now}::timestamp END,
                  result = COALESCE(i.result, t.result), "updatedAt" = ${now}::timestamp
              FROM acc JOIN i ON i.id = acc.id
              WHERE t.id = acc."taskId"
              RETURNING t.id
            ),
            used AS (
              INSERT INTO "UsageEntry" (id, "jobId", "attemptId", "periodStart", "periodEnd", "cpuCoreHours", "ramGbHours", "accelHours", "accelClass", "costCad", billable, "createdAt")
              SELECT gen_random_uuid(), i."jobId", i.id, i."periodStart", ${now}::timestamp, i."cpuCoreHours", i."ramGbHours", i."accelHours", i."accelClass", i."costCad", i.billable, ${now}::timestamp
              FROM acc JOIN i ON i.id = acc.id WHERE i."periodStart" IS NOT NULL
              RETURNING "jobId", "costCad", billable
            ),
            cost AS (
              UPDATE "Job" j
              SET "costCad" = j."costCad" + s.b, "lostCostCad" = j."lostCostCad" + s.l, "updatedAt" = ${now}::timestamp
              FROM (SELECT "jobId", sum(CASE WHEN billable THEN "costCad" ELSE 0 END) AS b, sum(CASE WHEN billable THEN 0 ELSE "costCad" END) AS l FROM used GROUP BY "jobId") s
              WHERE j.id = s."jobId"
              RETURNING j.id
            ),
            ev AS (
              INSERT INTO "JobEvent" ("jobId", kind, payload)
              SELECT i."jobId", e.x ->> 'kind', e.x -> 'payload'
              FROM acc JOIN i ON i.id = acc.id, jsonb_array_elements(i.events) WITH ORDINALITY AS e(x, n)
              ORDER BY i.ord, e.n
              RETURNING id, "jobId"
            ),
            st AS (
              SELECT * FROM jsonb_to_recordset(${JSON.stringify(stale)}::jsonb) AS s("attemptId" uuid, detail jsonb, lost boolean)
            ),
            reports AS (
              INSERT INTO "StaleReport" (id, "attemptId", kind, detail) SELECT gen_random_uuid(), st."attemptId", 'complete', st.detail FROM st RETURNING id
            ),
            late AS (
              UPDATE "Attempt" a SET status = 'STALE' FROM st WHERE st.lost AND a.id = st."attemptId" AND a.status = 'LOST' RETURNING a.id
            )
            SELECT 'attempt' AS what, acc.id::text AS id, NULL AS "jobId" FROM acc
            UNION ALL SELECT 'event', ev.id::text, ev."jobId"::text FROM ev
            UNION ALL SELECT 'counts', (SELECT count(*) FROM tsk)::text || '/' || (SELECT count(*) FROM cost)::text || '/' || (SELECT count(*) FROM reports)::text || '/' || (SELECT count(*) FROM late)::text, NULL`;
}
