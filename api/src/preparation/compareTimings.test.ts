import { describe, expect, it } from 'vitest';
import { compareTimings, mannWhitneyU, mulberry32 } from './compareTimings.js';

/** Normal samples from a seeded generator (Box-Muller). */
function normal(n: number, mean: number, sd: number, seed: number): number[] {
  const r = mulberry32(seed);
  return Array.from({ length: n }, () => mean + sd * Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r()));
}

describe('mannWhitneyU', () => {
  // reference values from scipy.stats.mannwhitneyu(x, y, alternative='greater')
  it('matches scipy exactly without ties', () => {
    const x = [10.2, 10.5, 9.9, 10.8, 10.1, 10.4, 10.0, 10.6, 10.3, 10.7];
    const y = [9.1, 9.4, 8.8, 9.6, 9.0, 9.3, 8.9, 9.5, 9.2, 10.35];
    const r = mannWhitneyU(x, y);
    expect(r.method).toBe('exact');
    expect(r.u).toBe(95);
    expect(r.p).toBeCloseTo(0.00010283833813245577, 12);
    expect(mannWhitneyU([5.1, 4.9, 5.3, 5.0], [4.0, 5.2, 4.1, 3.9, 4.5]).p).toBeCloseTo(0.05555555555555555, 12);
  });
  it('matches scipy asymptotically with ties', () => {
    const r = mannWhitneyU([2, 3, 3, 4, 4, 5, 6, 6, 7, 8, 9, 9], [1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 7]);
    expect(r.method).toBe('normal');
    expect(r.u).toBe(94.5);
    expect(r.p).toBeCloseTo(0.040956791927288065, 6);
  });
});

describe('compareTimings', () => {
  it('equal distributions are not "faster"', () => {
    for (let seed = 1; seed <= 5; seed++) {
      const r = compareTimings(normal(30, 100, 5, seed), normal(30, 100, 5, seed + 100));
      expect(r.decision).toBe('not-faster');
      expect(r.interval![0]).toBeLessThanOrEqual(1.05);
    }
  });
  it('a clear 20 % improvement is "faster", with its interval', () => {
    const r = compareTimings(normal(30, 100, 5, 7), normal(30, 80, 4, 8));
    expect(r.decision).toBe('faster');
    expect(r.pValue!).toBeLessThan(0.01);
    expect(r.speedup!).toBeGreaterThan(1.2);
    expect(r.speedup!).toBeLessThan(1.3);
    expect(r.interval![0]).toBeGreaterThan(1);
    expect(r.interval![0]).toBeLessThan(1.25);
    expect(r.interval![1]).toBeGreaterThan(1.25);
    expect(r.suspicious).toBe(false);
  });
  it('a slower candidate is not faster', () => {
    expect(compareTimings(normal(20, 80, 4, 1), normal(20, 100, 5, 2)).decision).toBe('not-faster');
  });
  it('refuses to decide below the minimum sample count (after warm-up)', () => {
    const r = compareTimings([100, 100, 101, 99, 100, 102, 98, 100], [50, 50, 51, 49, 50, 52, 48, 50]);
    expect(r.decision).toBe('insufficient-samples');
    expect(r.nBaseline).toBe(7);
    expect(r.reasons[0]).toMatch(/at least 8/);
  });
  it('flags speedups over 10× as suspicious', () => {
    const r = compareTimings(normal(20, 100, 2, 3), normal(20, 5, 0.1, 4));
    expect(r.decision).toBe('faster');
    expect(r.suspicious).toBe(true);
  });
  it('is reproducible: same samples, same interval', () => {
    const a = normal(25, 100, 5, 11);
    const b = normal(25, 90, 5, 12);
    expect(compareTimings(a, b)).toEqual(compareTimings(a, b));
  });
  it('discards warm-up runs', () => {
    const base = [500, ...normal(20, 100, 1, 1)];
    const r = compareTimings(base, [400, ...normal(20, 100, 1, 2)], { warmup: 1 });
    expect(r.nBaseline).toBe(20);
    expect(r.decision).toBe('not-faster');
  });
});
