/**
 * The one badge vocabulary for whether results can be trusted (api/src/domain/trust/
 * validationBadge.ts, Job.validation): validated, validated by replication, unverified (why),
 * checks pending, not validated (why). The outputs show the job's; the timeline shows each
 * trust check's in the same words (trustCheckBadge).
 */
export type BadgeCode = 'validated' | 'validated-by-replication' | 'unverified' | 'pending' | 'not-validated';

const TONE: Record<BadgeCode, string> = {
  validated: 'ok',
  'validated-by-replication': 'ok',
  unverified: 'warn',
  pending: 'muted',
  'not-validated': 'bad',
};
const LABEL: Record<BadgeCode, string> = {
  validated: 'validated',
  'validated-by-replication': 'validated by replication',
  unverified: 'unverified',
  pending: 'checks pending',
  'not-validated': 'not validated',
};

export function ValidationBadge({
  badge,
  reason,
  inlineReason = false,
}: {
  badge: string;
  reason?: string | null;
  inlineReason?: boolean;
}) {
  const code = (badge in LABEL ? badge : 'pending') as BadgeCode;
  return (
    <>
      <span className={`badge tone-${TONE[code]}`} data-testid="validation-badge" data-badge={code} title={reason ?? undefined}>
        {LABEL[code]}
      </span>
      {inlineReason && reason && (code === 'unverified' || code === 'not-validated') && (
        <span className="small" data-testid="validation-reason">
          : {reason}
        </span>
      )}
    </>
  );
}

/**
 * A trust.check event's decision in the badge's words (null for a step that decides nothing
 * yet). The 'sampled' step without a replica is either "not sampled" (validated by its own
 * checks) or sampled with no independent worker to replicate on (unverified: its report says so).
 */
export function trustCheckBadge(payload: unknown): BadgeCode | null {
  const p = (payload ?? {}) as { step?: string; replicated?: boolean; reason?: string };
  switch (p.step) {
    case 'matched':
    case 'resolved':
      return 'validated-by-replication';
    case 'unchecked':
      return 'unverified';
    case 'unresolved':
      return 'not-validated';
    case 'sampled':
      if (p.replicated) return 'pending';
      return /^Sampled\b/.test(p.reason ?? '') ? 'unverified' : 'validated';
    default:
      return null;
  }
}
