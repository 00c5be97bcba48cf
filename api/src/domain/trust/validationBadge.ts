/**
 * One vocabulary for whether a job's results can be trusted, shared by the API
 * (Job.validation), the outputs' badge and the timeline's trust checks (the dashboard maps a
 * trust.check event to the same words: web/src/features/ui/ValidationBadge.tsx):
 *
 *   validated                 the job passed its acceptance checks (exit code, files, thresholds,
 *                             the evaluation of its checkpoint); its result was not sampled for
 *                             replication, or is not checkable
 *   validated-by-replication  as above, and a replica on another owner's worker agreed
 *                             (MATCHED, or RESOLVED by a tie-breaker)
 *   unverified                it passed its checks, but a sampled result could not be replicated
 *                             (UNCHECKED: no independent worker, the replica failed): why is said
 *   pending                   it has not ended yet
 *   not-validated             it ended without passing (FAILED, CANCELLED, STOPPED): the reason
 *
 * Pure and read-only: the job's status and its ResultCheck rows in, the badge out.
 */
export type ValidationBadgeCode = 'validated' | 'validated-by-replication' | 'unverified' | 'pending' | 'not-validated';

export interface ValidationBadge {
  badge: ValidationBadgeCode;
  /** The badge's words: "validated", "validated by replication", "unverified", "checks pending", "not validated". */
  label: string;
  /** Why, in a sentence (the check's report, the job's reason); null when the label says it all. */
  reason: string | null;
}

export const BADGE_LABELS: Record<ValidationBadgeCode, string> = {
  validated: 'validated',
  'validated-by-replication': 'validated by replication',
  unverified: 'unverified',
  pending: 'checks pending',
  'not-validated': 'not validated',
};

export function validationBadge(
  job: { status: string; statusReason: string | null },
  checks: readonly { status: string; report: string | null }[],
): ValidationBadge {
  const make = (badge: ValidationBadgeCode, reason: string | null): ValidationBadge => ({ badge, label: BADGE_LABELS[badge], reason });
  if (['FAILED', 'CANCELLED', 'STOPPED'].includes(job.status)) return make('not-validated', job.statusReason);
  if (job.status !== 'SUCCEEDED') return make('pending', null);
  const unchecked = checks.find((c) => c.status === 'UNCHECKED');
  if (unchecked) return make('unverified', unchecked.report ?? "a sampled result could not be replicated on another owner's worker");
  const agreed = checks.filter((c) => c.status === 'MATCHED' || c.status === 'RESOLVED');
  if (agreed.length)
    return make(
      'validated-by-replication',
      agreed
        .map((c) => c.report)
        .filter(Boolean)
        .join(' ') || null,
    );
  return make(
    'validated',
    checks.length ? 'It passed its acceptance checks; its result was not sampled for replication.' : 'It passed its acceptance checks.',
  );
}
