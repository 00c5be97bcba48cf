/**
 * The spacing of the worker calls' coalesced statements (the token lookup, the heartbeat's
 * touch): a few milliseconds more for a call under load, for far fewer statements. At 1,000
 * heartbeats/s: ≈ 5 inputs per statement instead of 2, API CPU per heartbeat −18 %, PostgreSQL
 * CPU −32 %, p50 +4 ms (bench/heartbeats.ts, bench/README.md).
 */
export const WORKER_CALL_SPACING_MS = 5;

/**
 * Requests coalesced into one statement: a request queues its input, and one call of `run`
 * answers every queued input. A run starts at once when none is running and the last one
 * started at least `spacingMs` ago; the inputs that arrive meanwhile go together in the next —
 * so a lone request after a quiet spell waits for nothing, and under load (10,000 heartbeating
 * workers) the API issues one statement per `spacingMs` (or per round trip, if longer) instead
 * of one per request. An input queued while a run is in flight is never answered by that run:
 * it sees the database as of a statement that started after it arrived (a revoked token is
 * refused on the next call).
 */
export class Coalescer<I, O> {
  private queue: { input: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private running = false;
  private lastStart = -Infinity;
  private readonly max: number;
  private readonly spacingMs: number;

  /** `run` answers a batch, one output per input in the same order; at most `max` inputs per run. */
  constructor(
    private readonly run: (batch: I[]) => Promise<O[]>,
    opts: { max?: number; spacingMs?: number } = {},
  ) {
    this.max = opts.max ?? 2000;
    this.spacingMs = opts.spacingMs ?? 0;
  }

  submit(input: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.running || this.queue.length === 0) return;
    this.running = true;
    const wait = this.lastStart + this.spacingMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    this.lastStart = performance.now();
    const batch = this.queue.splice(0, this.max);
    try {
      const out = await this.run(batch.map((p) => p.input));
      batch.forEach((p, i) => p.resolve(out[i]!));
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      this.running = false;
      void this.flush();
    }
  }
}

/** One coalescer per database client (per API process; ids repeat across databases), made with the first caller's resources. */
export function perClient<R extends { prisma: object }, T>(make: (r: R) => T): (r: R) => T {
  const byClient = new WeakMap<object, T>();
  return (r) => {
    let v = byClient.get(r.prisma);
    if (v === undefined) byClient.set(r.prisma, (v = make(r)));
    return v;
  };
}
