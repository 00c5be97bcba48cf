-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "estimate" JSONB;

-- AlterTable
ALTER TABLE "Plan" ADD COLUMN     "smokeRun" JSONB;
