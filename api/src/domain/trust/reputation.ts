/**
 * Trust in a worker's results (docs/architecture.md §11), the pure rules:
 *
 *   reputation  = (validated + 1) / (validated + w·mismatches + 2)
 *                 — a Beta(1, 1) prior (a new worker is at 0.5) where one result found wrong
 *                 weighs as much as w results confirmed (w = mismatchWeight, 5): a new worker
 *                 caught once drops to 1/7 ≈ 0.14, under the threshold; a worker with 20
 *                 confirmed results and one mismatch stays at 21/27 ≈ 0.78.
 *   share       = 1 while the worker has fewer than newWorkerChecks confirmed results (every
 *                 checkable result of a new worker is replicated), then 2·(1 − reputation),
 *                 bounded to [minShare, 1]: 0.4 after 3 confirmations, 0.17 after 10, minShare
 *                 (0.05) from about 40 on; a mismatch raises it at once.
 *   replicate   ⇔ draw < share, the draw uniform in [0, 1) from the API's CSPRNG when the result
 *                 arrives — never derived from anything the worker knows (its attempt id, its
 *                 token), so a worker cannot tell which of its results will be checked. It is
 *                 stored with the decision (ResultCheck, one per task), which makes it once.
 *   eligible    ⇔ reputation ≥ minReputation (0.3): below it a worker gets no checkable work
 *                 (the claim, db/sql/claimTasks.ts, compares the stored column).
 *   tie-breaker ⇔ reputation ≥ min(trustedReputation, the higher of the two disputants'): a
 *                 newcomer cannot outvote a well-confirmed worker (two liars with the same broken
 *                 installation agree with each other), and a network of newcomers is not stuck.
 */
import { randomInt } from 'node:crypto';
import { DEFAULT_TRUST_POLICY, type TrustPolicy } from '../../config.js';

// The policy's knobs and defaults are settings (config.ts, TRUST_* variables); re-exported for the rules' callers.
export { DEFAULT_TRUST_POLICY, type TrustPolicy };

export interface TrustRecord {
  validatedCount: number;
  mismatchCount: number;
}

export function reputationOf(w: TrustRecord, policy: TrustPolicy = DEFAULT_TRUST_POLICY): number {
  return (w.validatedCount + 1) / (w.validatedCount + policy.mismatchWeight * w.mismatchCount + 2);
}

/** The share of this worker's checkable results that is replicated on another owner's worker. */
export function replicationShare(w: TrustRecord, policy: TrustPolicy = DEFAULT_TRUST_POLICY): number {
  if (w.validatedCount < policy.newWorkerChecks) return 1;
  return Math.min(1, Math.max(policy.minShare, 2 * (1 - reputationOf(w, policy))));
}

/** A uniform draw in [0, 1) from the CSPRNG (48 bits). */
export function randomDraw(): number {
  return randomInt(2 ** 48 - 1) / 2 ** 48;
}

export interface ReplicationDecision {
  reputation: number;
  share: number;
  draw: number;
  replicate: boolean;
}

export function decideReplication(w: TrustRecord, draw: number, policy: TrustPolicy = DEFAULT_TRUST_POLICY): ReplicationDecision {
  const share = replicationShare(w, policy);
  return { reputation: reputationOf(w, policy), share, draw, replicate: draw < share };
}

export function isEligible(w: TrustRecord, policy: TrustPolicy = DEFAULT_TRUST_POLICY): boolean {
  return reputationOf(w, policy) >= policy.minReputation;
}

/** The least reputation of a tie-breaker's worker between two disputants (see the file comment). */
export function tieBreakerReputation(a: number, b: number, policy: TrustPolicy = DEFAULT_TRUST_POLICY): number {
  return Math.max(policy.minReputation, Math.min(policy.trustedReputation, Math.max(a, b)));
}

/**
 * The tie-breaker's verdict over the original (a), the replica (b) and the third run (c), from
 * the three pairwise comparisons: the side the third run agrees with is right, the other wrong.
 * Agreeing with both (the two differ only just past the tolerance) keeps the original; agreeing
 * with neither leaves it unresolved.
 */
export function tieBreak(cMatchesA: boolean, cMatchesB: boolean): 'original' | 'replica' | 'unresolved' {
  if (cMatchesA) return 'original';
  if (cMatchesB) return 'replica';
  return 'unresolved';
}
