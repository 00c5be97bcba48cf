-- AlterTable
ALTER TABLE "Plan" ADD COLUMN     "shards" JSONB;
