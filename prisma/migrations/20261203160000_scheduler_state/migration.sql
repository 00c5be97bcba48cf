-- CreateTable
CREATE TABLE "SchedulerState" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "lastTickAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SchedulerState_pkey" PRIMARY KEY ("id")
);
