-- AlterTable
ALTER TABLE "PreparationRecord" ADD COLUMN     "modelFamily" TEXT;

-- CreateIndex
CREATE INDEX "PreparationRecord_transformation_modelFamily_accelerator_idx" ON "PreparationRecord"("transformation", "modelFamily", "accelerator");
