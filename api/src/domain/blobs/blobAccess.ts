import { userCanReadBlob, workerCanReadBlob } from '../../db/sql/blobReadable.js';
import type { Principal } from '../auth/principal.js';
import { NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import type { Resources } from '../resources.js';

export async function canReadBlob(r: Pick<Resources, 'prisma'>, who: Principal, sha256: string): Promise<boolean> {
  if (who.kind === 'user') return userCanReadBlob(r.prisma, who.userId, sha256);
  if (who.kind === 'worker') return workerCanReadBlob(r.prisma, who.workerTokenId, sha256);
  return false;
}

/** Records a stored blob and that this user may read it (they held its bytes). */
export async function registerBlob(r: Pick<Resources, 'prisma'>, sha256: string, size: number, userId: string | null) {
  // INSERT … ON CONFLICT DO NOTHING: concurrent uploads of the same bytes (two services of
  // one app, a retried upload) all succeed; Prisma's upsert is a read-then-insert that races.
  await r.prisma.blob.createMany({ data: [{ sha256, size }], skipDuplicates: true });
  if (userId) await r.prisma.blobAccess.createMany({ data: [{ sha256, userId }], skipDuplicates: true });
}

/** The header a worker sends with an output upload: the attempt the blob is an output of. */
export const ATTEMPT_HEADER = 'x-chatgpu-attempt';

/**
 * The live attempt (LEASED or RUNNING) of this worker token that an upload names, or
 * NotFoundError (another token's attempt, a finished one and a malformed id all read the same).
 */
export async function requireUploadingAttempt(r: Pick<Resources, 'prisma'>, workerTokenId: string, attemptId: string): Promise<string> {
  const a = isUuid(attemptId)
    ? await r.prisma.attempt.findFirst({
        where: { id: attemptId, status: { in: ['LEASED', 'RUNNING'] }, worker: { tokenId: workerTokenId } },
        select: { id: true },
      })
    : null;
  if (!a) throw new NotFoundError('Attempt', attemptId.slice(0, 80));
  return a.id;
}

/**
 * Records that a worker uploaded this blob for this attempt (it held the bytes while it
 * ran the attempt): completeAttempt accepts as outputs only blobs recorded here.
 */
export async function recordAttemptUpload(r: Pick<Resources, 'prisma'>, attemptId: string, sha256: string) {
  await r.prisma.attemptUpload.createMany({ data: [{ attemptId, sha256 }], skipDuplicates: true });
}
