/**
 * Heartbeats' worker touches, coalesced (domain/coalesce.ts): the heartbeats in flight are
 * marked seen by one statement (db/sql/touchWorkers.ts) — under load (10,000 workers) one
 * UPDATE per round trip instead of one per heartbeat. One per database client (per API process).
 */
import type { Prisma } from '../../db/client.js';
import { touchWorkers, type TouchedWorker } from '../../db/sql/touchWorkers.js';
import { Coalescer, perClient, WORKER_CALL_SPACING_MS } from '../coalesce.js';

/** At most this many workers per statement. */
const MAX_FLUSH = 2000;

type Touch = { id: string; tokenId: string };

const seenFor = perClient(
  (r: { prisma: Prisma; now(): Date }) =>
    new Coalescer<Touch, TouchedWorker | null>(
      async (batch) => {
        // A worker queued twice in one flush (two heartbeats at once) is touched once.
        const unique = [...new Map(batch.map((p) => [`${p.id}/${p.tokenId}`, p])).values()];
        const rows = await touchWorkers(r.prisma, unique, r.now());
        const byId = new Map(rows.map((w) => [w.id, w]));
        return batch.map((p) => byId.get(p.id) ?? null);
      },
      { max: MAX_FLUSH, spacingMs: WORKER_CALL_SPACING_MS },
    ),
);

/** Marks this worker seen (with the other heartbeats in flight); null when it is not this token's worker. */
export function markSeen(r: { prisma: Prisma; now(): Date }, workerId: string, tokenId: string): Promise<TouchedWorker | null> {
  return seenFor(r).submit({ id: workerId, tokenId });
}
