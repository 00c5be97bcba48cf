-- AlterTable
ALTER TABLE "Plan" ADD COLUMN     "asks" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "settings" JSONB;
