/**
 * Requests coalesced into one statement: a request queues its input, and one call of `run`
 * answers every queued input. A run starts at once when none is running; the inputs that
 * arrive while one runs go together in the next — no timer, so a lone request waits for
 * nothing, and under load (10,000 heartbeating workers) the API issues one statement per
 * round trip instead of one per request. An input queued while a run is in flight is never
 * answered by that run: it sees the database as of a statement that started after it arrived
 * (a revoked token is refused on the next call).
 */
export class Coalescer<I, O> {
  private queue: { input: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private running = false;

  /** `run` answers a batch, one output per input in the same order. */
  constructor(
    private readonly run: (batch: I[]) => Promise<O[]>,
    private readonly max = 2000,
  ) {}

  submit(input: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.running || this.queue.length === 0) return;
    this.running = true;
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
