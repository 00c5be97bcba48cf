/**
 * How long a task waits before its next attempt, after an attempt that did not fail on its
 * own code: a lost lease (the tick) or an infrastructure error (completeAttempt). One rule
 * for both: exponential in the number of attempts made so far — base, 2×base, 4×base, … —
 * capped at 10 minutes.
 */
export const MAX_RETRY_BACKOFF_SEC = 600;

export function retryBackoffSec(baseSec: number, attemptsMade: number): number {
  return Math.min(baseSec * 2 ** Math.max(attemptsMade - 1, 0), MAX_RETRY_BACKOFF_SEC);
}

/** When the retry may be claimed. */
export function retryAfter(now: Date, baseSec: number, attemptsMade: number): Date {
  return new Date(now.getTime() + retryBackoffSec(baseSec, attemptsMade) * 1000);
}
