import { userCanReadBlob, workerCanReadBlob } from '../../db/sql/blobReadable.js';
import type { Principal } from '../auth/principal.js';
import type { Resources } from '../resources.js';

export async function canReadBlob(r: Pick<Resources, 'prisma'>, who: Principal, sha256: string): Promise<boolean> {
  if (who.kind === 'user') return userCanReadBlob(r.prisma, who.userId, sha256);
  if (who.kind === 'worker') return workerCanReadBlob(r.prisma, who.workerTokenId, sha256);
  return false;
}

/** Records a stored blob and that this user may read it (they held its bytes). */
export async function registerBlob(r: Pick<Resources, 'prisma'>, sha256: string, size: number, userId: string | null) {
  await r.prisma.blob.upsert({ where: { sha256 }, create: { sha256, size }, update: {} });
  if (userId) {
    await r.prisma.blobAccess.upsert({
      where: { sha256_userId: { sha256, userId } },
      create: { sha256, userId },
      update: {},
    });
  }
}
