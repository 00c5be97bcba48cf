import { describe, expect, it } from 'vitest';
import {
  decideReplication,
  DEFAULT_TRUST_POLICY,
  isEligible,
  randomDraw,
  replicationShare,
  reputationOf,
  tieBreak,
  tieBreakerReputation,
} from './reputation.js';

const w = (validatedCount: number, mismatchCount = 0) => ({ validatedCount, mismatchCount });

describe('reputation', () => {
  it('starts at 0.5 and rises with confirmed results, towards 1', () => {
    expect(reputationOf(w(0))).toBe(0.5);
    expect(reputationOf(w(3))).toBeCloseTo(0.8, 12);
    expect(reputationOf(w(10))).toBeCloseTo(11 / 12, 12);
    const seq = [0, 1, 5, 20, 100].map((n) => reputationOf(w(n)));
    expect([...seq].sort((a, b) => a - b)).toEqual(seq);
    expect(seq.at(-1)!).toBeLessThan(1);
  });

  it('one mismatch puts a new worker under the threshold; a long-confirmed worker survives one, not five', () => {
    expect(reputationOf(w(0, 1))).toBeCloseTo(1 / 7, 12);
    expect(isEligible(w(0, 1))).toBe(false);
    expect(isEligible(w(0))).toBe(true);
    expect(isEligible(w(20, 1))).toBe(true);
    expect(reputationOf(w(20, 1))).toBeCloseTo(21 / 27, 12);
    expect(isEligible(w(10, 5))).toBe(false);
  });

  it('replicates every result of a new worker, fewer as it is confirmed, never under the floor', () => {
    expect(replicationShare(w(0))).toBe(1);
    expect(replicationShare(w(2))).toBe(1);
    expect(replicationShare(w(3))).toBeCloseTo(0.4, 12);
    expect(replicationShare(w(10))).toBeCloseTo(2 / 12, 12);
    expect(replicationShare(w(1000))).toBe(DEFAULT_TRUST_POLICY.minShare);
    // A mismatch raises the share at once.
    expect(replicationShare(w(10, 1))).toBeGreaterThan(replicationShare(w(10)));
    expect(replicationShare(w(10, 3))).toBe(1);
  });

  it('replicates exactly when the draw is under the share', () => {
    expect(decideReplication(w(3), 0.39)).toMatchObject({ replicate: true, draw: 0.39 });
    expect(decideReplication(w(3), 0.41).replicate).toBe(false);
    expect(decideReplication(w(0), 0.999999).replicate).toBe(true);
    expect(decideReplication(w(1000), 0.05).replicate).toBe(false);
    expect(decideReplication(w(1000), 0.049).replicate).toBe(true);
  });

  it('draws uniformly in [0, 1): over many draws the replicated share is the policy share', () => {
    const draws = Array.from({ length: 20_000 }, randomDraw);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    const share = replicationShare(w(10));
    const replicated = draws.filter((d) => decideReplication(w(10), d).replicate).length / draws.length;
    expect(Math.abs(replicated - share)).toBeLessThan(0.02);
  });

  it('the tie-breaker sides with the result it agrees with; agreeing with both keeps the original', () => {
    expect(tieBreak(true, false)).toBe('original');
    expect(tieBreak(false, true)).toBe('replica');
    expect(tieBreak(true, true)).toBe('original');
    expect(tieBreak(false, false)).toBe('unresolved');
  });
});

describe('who may break a tie', () => {
  it('at least the more trusted disputant, up to the trusted level; never under the threshold', () => {
    expect(tieBreakerReputation(0.5, 0.5)).toBe(0.5);
    expect(tieBreakerReputation(0.5, 0.667)).toBe(0.667);
    expect(tieBreakerReputation(0.95, 0.5)).toBe(DEFAULT_TRUST_POLICY.trustedReputation);
    expect(tieBreakerReputation(0.1, 0.2)).toBe(DEFAULT_TRUST_POLICY.minReputation);
  });
});
