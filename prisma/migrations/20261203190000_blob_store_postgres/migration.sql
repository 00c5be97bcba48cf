-- CreateTable
CREATE TABLE "BlobChunk" (
    "uploadId" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "BlobChunk_pkey" PRIMARY KEY ("uploadId","seq")
);

-- CreateTable
CREATE TABLE "StoredBlob" (
    "sha256" TEXT NOT NULL,
    "uploadId" UUID NOT NULL,
    "size" BIGINT NOT NULL,
    "chunkBytes" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "StoredBlob_pkey" PRIMARY KEY ("sha256")
);

-- CreateIndex
CREATE INDEX "BlobChunk_createdAt_idx" ON "BlobChunk"("createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "StoredBlob_uploadId_key" ON "StoredBlob"("uploadId");

