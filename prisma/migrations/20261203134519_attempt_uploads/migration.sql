-- CreateTable
CREATE TABLE "AttemptUpload" (
    "attemptId" UUID NOT NULL,
    "sha256" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AttemptUpload_pkey" PRIMARY KEY ("attemptId","sha256")
);

-- AddForeignKey
ALTER TABLE "AttemptUpload" ADD CONSTRAINT "AttemptUpload_attemptId_fkey" FOREIGN KEY ("attemptId") REFERENCES "Attempt"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AttemptUpload" ADD CONSTRAINT "AttemptUpload_sha256_fkey" FOREIGN KEY ("sha256") REFERENCES "Blob"("sha256") ON DELETE CASCADE ON UPDATE CASCADE;
