/**
 * Job status machine (DESIGN.md §4):
 *
 *   DRAFT → PLANNING ⇄ NEEDS_INPUT → PREPARING → RUNNING → VALIDATING → SUCCEEDED
 *   any non-terminal → FAILED (with a reason) | CANCELLED (user) | STOPPED (spending cap)
 *
 * Terminal states never change again.
 */
import type { JobStatus } from '../../generated/prisma/enums.js';

export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'];

export function isTerminalJobStatus(s: JobStatus): boolean {
  return TERMINAL_JOB_STATUSES.includes(s);
}
