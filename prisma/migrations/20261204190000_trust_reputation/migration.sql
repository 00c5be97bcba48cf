-- CreateEnum
CREATE TYPE "ResultCheckStatus" AS ENUM ('SKIPPED', 'REPLICATING', 'TIEBREAK', 'MATCHED', 'RESOLVED', 'UNRESOLVED', 'UNCHECKED');

-- AlterTable
ALTER TABLE "Worker" ADD COLUMN     "mismatchCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "reputation" DOUBLE PRECISION NOT NULL DEFAULT 0.5,
ADD COLUMN     "validatedCount" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "ResultCheck" (
    "id" UUID NOT NULL,
    "jobId" UUID NOT NULL,
    "taskId" UUID NOT NULL,
    "attemptId" UUID NOT NULL,
    "workerId" UUID NOT NULL,
    "reputation" DOUBLE PRECISION NOT NULL,
    "share" DOUBLE PRECISION NOT NULL,
    "draw" DOUBLE PRECISION NOT NULL,
    "status" "ResultCheckStatus" NOT NULL,
    "replicaTaskId" UUID,
    "tiebreakTaskId" UUID,
    "verifiedResult" JSONB,
    "wrongWorkerIds" UUID[],
    "report" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settledAt" TIMESTAMP(3),

    CONSTRAINT "ResultCheck_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ResultCheck_taskId_key" ON "ResultCheck"("taskId");

-- CreateIndex
CREATE INDEX "ResultCheck_jobId_idx" ON "ResultCheck"("jobId");

-- AddForeignKey
ALTER TABLE "ResultCheck" ADD CONSTRAINT "ResultCheck_taskId_fkey" FOREIGN KEY ("taskId") REFERENCES "Task"("id") ON DELETE CASCADE ON UPDATE CASCADE;
