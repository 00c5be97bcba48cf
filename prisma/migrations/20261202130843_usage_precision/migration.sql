-- DropIndex
DROP INDEX "UsageEntry_attemptId_idx";

-- AlterTable
ALTER TABLE "Job" ALTER COLUMN "costCad" SET DATA TYPE DECIMAL(16,6);

-- CreateIndex
CREATE INDEX "UsageEntry_attemptId_periodEnd_idx" ON "UsageEntry"("attemptId", "periodEnd");
