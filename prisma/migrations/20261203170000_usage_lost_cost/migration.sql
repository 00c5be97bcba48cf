-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "lostCostCad" DECIMAL(16,6) NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "UsageEntry" ADD COLUMN     "billable" BOOLEAN NOT NULL DEFAULT true;

-- Data: usage already recorded for work lost through no fault of the user (LOST or STALE
-- attempts, attempts FAILED on an infrastructure error: INFRASTRUCTURE_ERRORS in
-- api/src/domain/leases/errorClasses.ts) moves out of the user's cost into the lost cost,
-- so that Job.costCad = sum of billable entries and Job.lostCostCad = sum of the others.
WITH moved AS (
  UPDATE "UsageEntry" u SET billable = false
  FROM "Attempt" a
  WHERE a.id = u."attemptId"
    AND (a.status IN ('LOST', 'STALE')
         OR (a.status = 'FAILED' AND a."errorClass" IN ('WORKER_ERROR', 'DOWNLOAD_FAILED', 'UPLOAD_FAILED', 'SANDBOX_ERROR', 'WORKER_SHUTDOWN')))
  RETURNING u."jobId", u."costCad"
), per_job AS (
  SELECT "jobId", sum("costCad") AS c FROM moved GROUP BY "jobId"
)
UPDATE "Job" j SET "costCad" = j."costCad" - p.c, "lostCostCad" = j."lostCostCad" + p.c
FROM per_job p WHERE j.id = p."jobId";
