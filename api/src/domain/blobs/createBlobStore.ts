import path from 'node:path';
import type { Config } from '../../config.js';
import type { Prisma } from '../../db/client.js';
import type { BlobStore } from './blobStore.js';
import { FsBlobStore } from './fsBlobStore.js';
import { PgBlobStore } from './pgBlobStore.js';
import { S3BlobStore } from './s3BlobStore.js';

/** The blob store BLOB_STORE names (see blobStore.ts for what each backend guarantees). */
export function createBlobStore(config: Pick<Config, 'blobs' | 'dataDir'>, prisma: Prisma): BlobStore {
  const b = config.blobs;
  if (b.store === 's3') return new S3BlobStore(b.s3!);
  if (b.store === 'postgres') return new PgBlobStore(prisma, b.postgresChunkBytes);
  return new FsBlobStore(path.join(config.dataDir, 'blobs'));
}
