-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "agentLockHolder" TEXT,
ADD COLUMN     "agentLockUntil" TIMESTAMP(3);
