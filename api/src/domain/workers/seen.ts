/**
 * Heartbeats' worker touches, coalesced: a heartbeat queues its worker, and one statement
 * (db/sql/touchWorkers.ts) marks every queued worker seen. A flush starts at once when none
 * is running, and the heartbeats that arrive while one runs go together in the next — no
 * timer, so a lone heartbeat waits for nothing, and under load (10,000 workers) the API
 * issues one UPDATE per round trip instead of one per heartbeat. One per database client
 * (per API process).
 */
import type { Prisma } from '../../db/client.js';
import { touchWorkers, type TouchedWorker } from '../../db/sql/touchWorkers.js';

/** At most this many workers per statement. */
const MAX_FLUSH = 2000;

interface Pending {
  id: string;
  tokenId: string;
  resolve: (w: TouchedWorker | null) => void;
  reject: (e: unknown) => void;
}

class Seen {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(
    private readonly prisma: Prisma,
    private readonly now: () => Date,
  ) {}

  touch(id: string, tokenId: string): Promise<TouchedWorker | null> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id, tokenId, resolve, reject });
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = true;
    const batch = this.queue.splice(0, MAX_FLUSH);
    try {
      // A worker queued twice in one flush (two heartbeats at once) is touched once.
      const unique = [...new Map(batch.map((p) => [`${p.id}/${p.tokenId}`, p])).values()];
      const rows = await touchWorkers(this.prisma, unique, this.now());
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const p of batch) p.resolve(byId.get(p.id) ?? null);
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      this.flushing = false;
      void this.flush();
    }
  }
}

const byClient = new WeakMap<object, Seen>();

/** Marks this worker seen (with the other heartbeats in flight); null when it is not this token's worker. */
export function markSeen(r: { prisma: Prisma; now(): Date }, workerId: string, tokenId: string): Promise<TouchedWorker | null> {
  let s = byClient.get(r.prisma);
  if (!s) byClient.set(r.prisma, (s = new Seen(r.prisma, () => r.now())));
  return s.touch(workerId, tokenId);
}
