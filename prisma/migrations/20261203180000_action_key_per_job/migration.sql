-- An Action's idempotency key (the tool call id) is unique per job, not across all jobs.
DROP INDEX "Action_idempotencyKey_key";
CREATE UNIQUE INDEX "Action_jobId_idempotencyKey_key" ON "Action"("jobId", "idempotencyKey");
