-- Steps a plan runs before its main command (data preparation, …), in order.
ALTER TABLE "Plan" ADD COLUMN "pipeline" JSONB;
