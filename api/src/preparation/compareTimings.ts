/**
 * Timing statistics for "is the candidate faster?" (docs/architecture.md §4: optimizations are kept only when
 * repeated measurements say faster).
 *
 * "faster" needs both: a one-sided Mann-Whitney U test (candidate times stochastically smaller,
 * p < alpha = 0.01) and a bootstrap confidence interval (level 1 − alpha) of the speedup — median
 * accepted time / median candidate time — lying wholly above 1. The test says the difference is
 * not noise; the interval says how big it is. Below `minSamples` per side no decision is made.
 * Speedups over 10× are flagged as suspicious (a candidate that skips work is the usual cause).
 *
 * No library: no maintained npm statistics package has a Mann-Whitney U test (simple-statistics and
 * jStat have neither it nor a bootstrap), and both pieces are short. The exact null distribution is
 * used without ties for up to 50 × 50 samples (as scipy does for small samples), otherwise the normal
 * approximation with tie and continuity corrections; the tests check p-values against scipy.
 * The bootstrap draws from a seeded generator, so the same samples give the same interval.
 */

export interface TimingOptions {
  /** Leading samples of each series to drop as warm-up (default 1). */
  warmup?: number;
  /** Minimum samples per side after warm-up (default 8). */
  minSamples?: number;
  /** Significance level of the U test; the interval's level is 1 − alpha (default 0.01). */
  alpha?: number;
  /** Bootstrap resamples (default 4000). */
  resamples?: number;
  /** Seed of the bootstrap's generator (default 1). */
  seed?: number;
  /** Speedups above this are flagged as suspicious (default 10). */
  suspiciousSpeedup?: number;
}

export type TimingDecision = 'faster' | 'not-faster' | 'insufficient-samples';

export interface TimingComparison {
  decision: TimingDecision;
  /** Median accepted time / median candidate time (> 1: candidate faster). */
  speedup: number | null;
  /** Bootstrap interval of the speedup at level 1 − alpha. */
  interval: [number, number] | null;
  confidence: number;
  pValue: number | null;
  u: number | null;
  method: 'exact' | 'normal' | null;
  nBaseline: number;
  nCandidate: number;
  medianBaseline: number | null;
  medianCandidate: number | null;
  suspicious: boolean;
  reasons: string[];
}

export function compareTimings(baseline: readonly number[], candidate: readonly number[], opts: TimingOptions = {}): TimingComparison {
  const warmup = opts.warmup ?? 1;
  const minSamples = opts.minSamples ?? 8;
  const alpha = opts.alpha ?? 0.01;
  const base = baseline.slice(warmup).filter(Number.isFinite);
  const cand = candidate.slice(warmup).filter(Number.isFinite);
  const res: TimingComparison = {
    decision: 'insufficient-samples',
    speedup: null,
    interval: null,
    confidence: 1 - alpha,
    pValue: null,
    u: null,
    method: null,
    nBaseline: base.length,
    nCandidate: cand.length,
    medianBaseline: base.length ? median(base) : null,
    medianCandidate: cand.length ? median(cand) : null,
    suspicious: false,
    reasons: [],
  };
  if (base.length < minSamples || cand.length < minSamples) {
    res.reasons.push(`need at least ${minSamples} timings per side after ${warmup} warm-up; have ${base.length} and ${cand.length}`);
    return res;
  }
  res.speedup = res.medianBaseline! / res.medianCandidate!;
  const mw = mannWhitneyU(base, cand);
  res.u = mw.u;
  res.pValue = mw.p;
  res.method = mw.method;
  res.interval = bootstrapSpeedupInterval(base, cand, 1 - alpha, opts.resamples ?? 4000, opts.seed ?? 1);
  const significant = mw.p < alpha;
  const above = res.interval[0] > 1;
  res.decision = significant && above ? 'faster' : 'not-faster';
  if (!significant) res.reasons.push(`Mann-Whitney U: p = ${mw.p.toPrecision(3)} ≥ ${alpha}`);
  if (!above) res.reasons.push(`speedup interval [${res.interval[0].toFixed(3)}, ${res.interval[1].toFixed(3)}] includes or lies below 1`);
  const limit = opts.suspiciousSpeedup ?? 10;
  if (res.speedup > limit) {
    res.suspicious = true;
    res.reasons.push(`speedup ${res.speedup.toFixed(1)}× exceeds ${limit}×: check the candidate does the same work`);
  }
  return res;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * One-sided Mann-Whitney U test of H1: `x` (accepted) tends to be larger than `y` (candidate).
 * U counts pairs with x > y (ties count ½); p = P(U ≥ u) under H0.
 */
export function mannWhitneyU(x: readonly number[], y: readonly number[]): { u: number; p: number; method: 'exact' | 'normal' } {
  const n1 = x.length;
  const n2 = y.length;
  // ranks of the pooled sample, ties get their average rank
  const pooled = [...x.map((v) => ({ v, g: 0 })), ...y.map((v) => ({ v, g: 1 }))].sort((a, b) => a.v - b.v);
  const ranks = new Array<number>(pooled.length);
  const tieSizes: number[] = [];
  for (let i = 0; i < pooled.length;) {
    let j = i;
    while (j + 1 < pooled.length && pooled[j + 1]!.v === pooled[i]!.v) j++;
    const r = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) ranks[k] = r;
    if (j > i) tieSizes.push(j - i + 1);
    i = j + 1;
  }
  let r1 = 0;
  pooled.forEach((p, i) => {
    if (p.g === 0) r1 += ranks[i]!;
  });
  const u = r1 - (n1 * (n1 + 1)) / 2;
  if (tieSizes.length === 0 && n1 <= 50 && n2 <= 50) {
    return { u, p: exactUpperTail(n1, n2, u), method: 'exact' };
  }
  const n = n1 + n2;
  const mu = (n1 * n2) / 2;
  const tieTerm = tieSizes.reduce((acc, t) => acc + (t * t * t - t), 0);
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  if (sigma === 0) return { u, p: 1, method: 'normal' };
  const z = (u - mu - 0.5) / sigma;
  return { u, p: 0.5 * erfc(z / Math.SQRT2), method: 'normal' };
}

/** P(U ≥ u) for sample sizes m, n without ties, by counting rank arrangements. */
function exactUpperTail(m: number, n: number, u: number): number {
  // counts[j][k]: number of arrangements of i x's and j y's with U = k, built up over i
  let prev: Float64Array[] = [];
  for (let j = 0; j <= n; j++) prev.push(Float64Array.of(1)); // i = 0: U = 0 only
  for (let i = 1; i <= m; i++) {
    const cur: Float64Array[] = [Float64Array.of(1)]; // j = 0
    for (let j = 1; j <= n; j++) {
      // the largest value is an x (adds j to U: it beats all j y's) or a y (adds nothing)
      const a = prev[j]!; // (i-1, j), shifted by j
      const b = cur[j - 1]!; // (i, j-1)
      const out = new Float64Array(i * j + 1);
      for (let k = 0; k < a.length; k++) out[k + j]! += a[k]!;
      for (let k = 0; k < b.length; k++) out[k]! += b[k]!;
      cur.push(out);
    }
    prev = cur;
  }
  const dist = prev[n]!;
  let total = 0;
  let tail = 0;
  const uCeil = Math.ceil(u - 1e-9);
  for (let k = 0; k < dist.length; k++) {
    total += dist[k]!;
    if (k >= uCeil) tail += dist[k]!;
  }
  return tail / total;
}

/** Complementary error function, |relative error| < 1.2e-7 (Numerical Recipes' erfcc). */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** Percentile bootstrap interval of median(base) / median(cand), resampling each side. */
export function bootstrapSpeedupInterval(
  base: readonly number[],
  cand: readonly number[],
  level: number,
  resamples: number,
  seed: number,
): [number, number] {
  const rand = mulberry32(seed);
  const stats = new Float64Array(resamples);
  const bs = new Float64Array(base.length);
  const cs = new Float64Array(cand.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < bs.length; i++) bs[i] = base[Math.floor(rand() * base.length)]!;
    for (let i = 0; i < cs.length; i++) cs[i] = cand[Math.floor(rand() * cand.length)]!;
    stats[r] = sortedMedian(bs.sort()) / sortedMedian(cs.sort());
  }
  stats.sort();
  const lo = quantileSorted(stats, (1 - level) / 2);
  const hi = quantileSorted(stats, 1 - (1 - level) / 2);
  return [lo, hi];
}

function sortedMedian(s: Float64Array): number {
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function quantileSorted(s: Float64Array, q: number): number {
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

/** A small, fast, seedable 32-bit generator (mulberry32); uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
