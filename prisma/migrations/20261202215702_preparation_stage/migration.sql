-- DropIndex
DROP INDEX "PreparationRecord_jobId_idx";

-- AlterTable
ALTER TABLE "CodeVersion" ADD COLUMN     "revision" INTEGER,
ADD COLUMN     "staticChecks" JSONB,
ADD COLUMN     "step" TEXT;

-- AlterTable
ALTER TABLE "PreparationRecord" ADD COLUMN     "accelerator" TEXT,
ADD COLUMN     "attemptId" UUID,
ADD COLUMN     "candidateManifestSha" TEXT,
ADD COLUMN     "evidenceSha" TEXT,
ADD COLUMN     "kind" TEXT NOT NULL,
ADD COLUMN     "originalManifestSha" TEXT NOT NULL,
ADD COLUMN     "required" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "revision" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "staticChecks" JSONB,
ADD COLUMN     "step" TEXT NOT NULL,
ADD COLUMN     "taskId" UUID,
ADD COLUMN     "workerId" UUID,
ADD COLUMN     "workload" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "CodeVersion_jobId_step_revision_key" ON "CodeVersion"("jobId", "step", "revision");

-- CreateIndex
CREATE INDEX "PreparationRecord_outcome_createdAt_idx" ON "PreparationRecord"("outcome", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "PreparationRecord_jobId_step_revision_key" ON "PreparationRecord"("jobId", "step", "revision");
