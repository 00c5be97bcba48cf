-- AlterTable
ALTER TABLE "Service" ADD COLUMN     "errorCount" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "latencyMsSum" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "readyAt" TIMESTAMP(3),
ADD COLUMN     "requestCount" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "spec" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "stoppedAt" TIMESTAMP(3),
ADD COLUMN     "tokenRotatedAt" TIMESTAMP(3),
ADD COLUMN     "tunnelUrl" TEXT;

-- CreateIndex
CREATE INDEX "Service_jobId_idx" ON "Service"("jobId");
