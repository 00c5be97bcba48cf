-- AlterTable
ALTER TABLE "Service" ADD COLUMN     "readinessCheckCount" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "readinessFailureCount" BIGINT NOT NULL DEFAULT 0;
