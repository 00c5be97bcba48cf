-- A task's part in its job as a column (set at creation) instead of a prefix of its name.
-- CreateEnum
CREATE TYPE "TaskRole" AS ENUM ('RUN', 'SMOKE', 'STEP', 'REFERENCE', 'CANDIDATE', 'BENCHMARK', 'RESUME_CHECK', 'EVALUATE', 'SHARD', 'MERGE', 'SHARD_CHECK', 'REPLICA', 'TIEBREAK', 'SERVICE', 'PROBE');

-- AlterTable: existing tasks get the role their kind and name meant until now.
ALTER TABLE "Task" ADD COLUMN "role" "TaskRole";
UPDATE "Task" SET "role" = (CASE
  WHEN kind = 'RUN' AND name LIKE 'step:%' THEN 'STEP'
  WHEN kind = 'PROBE' AND name = 'smoke' THEN 'SMOKE'
  WHEN name LIKE 'adapt:%' THEN 'SHARD_CHECK'
  WHEN kind = 'PROBE' AND name LIKE 'replica:%' THEN 'REPLICA'
  WHEN kind = 'PROBE' AND name LIKE 'tiebreak:%' THEN 'TIEBREAK'
  WHEN kind = 'CANDIDATE' AND command LIKE 'python -m chatgpu.resume_check %' THEN 'RESUME_CHECK'
  ELSE kind::text
END)::"TaskRole";
ALTER TABLE "Task" ALTER COLUMN "role" SET NOT NULL;
