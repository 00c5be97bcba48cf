/** Small statistics and formatting helpers shared by the benchmarks. */

/** The q-quantile (0..1) of the samples, nearest-rank. */
export function quantile(samples: number[], q: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export function summarize(samples: number[]): { n: number; p50: number; p99: number; max: number; mean: number } {
  const mean = samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length : NaN;
  return { n: samples.length, p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), max: quantile(samples, 1), mean };
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes of one machine. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return out;
}
