-- CreateIndex
CREATE INDEX "Task_status_ownerId_priority_createdAt_id_idx" ON "Task"("status", "ownerId", "priority" DESC, "createdAt", "id");
