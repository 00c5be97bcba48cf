/**
 * The job's statuses, defined once. The transitions between them are in jobLifecycle.ts.
 * Final statuses never change again (invariant 10).
 */
import { JobStatus } from '../../generated/prisma/enums.js';

export const JOB_STATUSES = Object.values(JobStatus) as readonly JobStatus[];

export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'];

export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = JOB_STATUSES.filter((s) => !FINAL_JOB_STATUSES.includes(s));

export function isFinalJobStatus(s: JobStatus): boolean {
  return FINAL_JOB_STATUSES.includes(s);
}
