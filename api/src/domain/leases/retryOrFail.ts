/**
 * Retry or fail: what happens to a task whose current attempt ended without success. One rule
 * for every path that ends an attempt that way — a completion (completeAttempts.ts) and an
 * expired lease (scheduler/tick.ts):
 *
 *   the code failed (any other error class) → FAILED, never retried blindly
 *   lost (its lease ran out)                → retried while the attempts counted against the
 *                                             user (attemptCount − infraFailures) < maxAttempts
 *   infrastructure (INFRASTRUCTURE_ERRORS:  → retried, NOT counted against maxAttempts: the
 *     the worker could not run it)            worker failed, not the user's code; bounded by
 *                                             infraRetries so a task no worker can start ends
 *
 * A lost lease stays counted: the program itself can take its worker down (memory, a full disk),
 * and then a retry budget of its own is what keeps it from taking down every worker in turn.
 * The wait before a retry is retryBackoff.ts's, in the number of attempts made so far.
 */
import { INFRASTRUCTURE_ERRORS } from './errorClasses.js';
import { retryAfter, retryBackoffSec } from './retryBackoff.js';

export type AttemptEnd = { kind: 'lost' } | { kind: 'failed'; errorClass: string };

export interface RetryTask {
  attemptCount: number;
  maxAttempts: number;
  infraFailures: number;
}

export type RetryDecision =
  | {
      retry: true;
      /** Whether this attempt counts as an infrastructure failure (Task.infraFailures + 1). */
      infrastructure: boolean;
      runAfter: Date;
      waitSec: number;
      /** The next attempt's number among those counted against maxAttempts. */
      nextCounted: number;
    }
  | { retry: false; infrastructure: boolean; /** why it was not retried, when retries ran out */ exhausted: string | null };

export function isInfrastructureFailure(end: AttemptEnd): boolean {
  return end.kind === 'failed' && INFRASTRUCTURE_ERRORS.has(end.errorClass);
}

/** Attempts of this task counted against its maxAttempts (infrastructure failures are not). */
export function countedAttempts(t: RetryTask): number {
  return t.attemptCount - t.infraFailures;
}

export function retryOrFail(t: RetryTask, end: AttemptEnd, now: Date, cfg: { retryBaseSec: number; infraRetries: number }): RetryDecision {
  const infrastructure = isInfrastructureFailure(end);
  if (end.kind === 'failed' && !infrastructure) return { retry: false, infrastructure, exhausted: null };
  const counted = countedAttempts(t) - (infrastructure ? 1 : 0);
  if (infrastructure && t.infraFailures + 1 > cfg.infraRetries) {
    return {
      retry: false,
      infrastructure,
      exhausted: `giving up after ${t.infraFailures + 1} infrastructure failures (no worker could run it)`,
    };
  }
  if (!infrastructure && counted >= t.maxAttempts)
    return { retry: false, infrastructure, exhausted: `giving up after ${t.maxAttempts} attempts` };
  return {
    retry: true,
    infrastructure,
    runAfter: retryAfter(now, cfg.retryBaseSec, t.attemptCount),
    waitSec: retryBackoffSec(cfg.retryBaseSec, t.attemptCount),
    nextCounted: counted + 1,
  };
}
