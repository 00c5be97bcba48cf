import type { Db } from '../client.js';

export interface WorkerTokenRow {
  id: string;
  userId: string;
  tokenHash: string;
  revokedAt: Date | null;
}

/** The worker tokens with these hashes, in one statement (the coalesced lookup of domain/auth/users.ts). */
export function workerTokensByHash(db: Db, hashes: string[]): Promise<WorkerTokenRow[]> {
  return db.$queryRaw<WorkerTokenRow[]>`
    SELECT id, "userId", "tokenHash", "revokedAt" FROM "WorkerToken" WHERE "tokenHash" = ANY (${hashes}::text[])`;
}
