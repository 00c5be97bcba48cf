import { hotQuery, type Db } from '../client.js';

export interface WorkerTokenRow {
  id: string;
  userId: string;
  tokenHash: string;
  revoked: boolean;
}

/** The worker tokens with these hashes, in one statement (the coalesced lookup of domain/auth/users.ts). */
export function workerTokensByHash(db: Db, hashes: string[]): Promise<WorkerTokenRow[]> {
  return hotQuery<WorkerTokenRow>(
    db,
    'workerTokensByHash',
    `SELECT id, "userId", "tokenHash", "revokedAt" IS NOT NULL AS revoked FROM "WorkerToken" WHERE "tokenHash" = ANY ($1::text[])`,
    [hashes],
  );
}
