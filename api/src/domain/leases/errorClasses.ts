/**
 * Failures of the machine rather than of the code: the task is retried on another attempt,
 * and the attempt's usage is the contributor's loss, never charged to the user
 * (domain/billing/usage.ts). Any other error class (EXIT_NONZERO, TIMEOUT, OOM,
 * DEPENDENCY, …) is the task's own failure: not retried blindly, and charged.
 * prisma/migrations/20261203170000_usage_lost_cost lists the same classes for its backfill.
 */
export const INFRASTRUCTURE_ERRORS: ReadonlySet<string> = new Set([
  'WORKER_ERROR',
  'DOWNLOAD_FAILED',
  'UPLOAD_FAILED',
  'SANDBOX_ERROR',
  'WORKER_SHUTDOWN',
]);
