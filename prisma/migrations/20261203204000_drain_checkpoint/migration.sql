-- AlterEnum
ALTER TYPE "AttemptStatus" ADD VALUE 'DRAINED';

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "checkpoint" JSONB;

-- AlterTable
ALTER TABLE "Attempt" ADD COLUMN     "checkpoint" JSONB;
