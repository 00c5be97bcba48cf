import type { Prisma } from '../client.js';

/**
 * Deletes the chunks of uploads that never became a StoredBlob (refused, or the API host was
 * killed mid-upload) and are older than `before`. Such chunks are never read: readers go
 * through StoredBlob. The age keeps uploads still in progress; an upload's chunks only ever
 * gain a StoredBlob row after its last chunk, so a chunk older than any upload's life whose
 * upload has no row is an orphan. Row locks only (plain DELETE); safe from several API hosts.
 */
export async function sweepBlobChunks(prisma: Prisma, before: Date): Promise<number> {
  return prisma.$executeRaw`
    DELETE FROM "BlobChunk" c
    WHERE c."createdAt" < ${before}
      AND NOT EXISTS (SELECT 1 FROM "StoredBlob" s WHERE s."uploadId" = c."uploadId")`;
}
