-- AlterTable
ALTER TABLE "Worker" ADD COLUMN     "simulatedAccelerator" TEXT;

-- AlterTable
ALTER TABLE "Attempt" ADD COLUMN     "simulatedAccelerator" TEXT;

