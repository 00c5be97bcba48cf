-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "WorkerStatus" ADD VALUE 'UNHEALTHY';
ALTER TYPE "WorkerStatus" ADD VALUE 'QUARANTINED';

-- AlterTable
ALTER TABLE "Worker" ADD COLUMN     "quarantinedUntil" TIMESTAMP(3),
ADD COLUMN     "statusReason" TEXT;

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "infraFailures" INTEGER NOT NULL DEFAULT 0;
