const TONES: Record<string, string> = {
  SUCCEEDED: 'ok',
  ONLINE: 'ok',
  ACCEPTED: 'ok',
  ANSWERED: 'ok',
  COMPLETED: 'ok',
  FAILED: 'bad',
  LOST: 'bad',
  STALE: 'bad',
  STOPPED: 'bad',
  REJECTED: 'bad',
  OFFLINE: 'muted',
  UNHEALTHY: 'bad',
  QUARANTINED: 'bad',
  RUNNING: 'info',
  LEASED: 'info',
  PREPARING: 'info',
  VALIDATING: 'info',
  PLANNING: 'info',
  NEEDS_INPUT: 'warn',
  PAUSED: 'warn',
  DRAINING: 'warn',
  OPEN: 'warn',
  QUEUED: 'muted',
  WAITING: 'warn',
  CANCELLED: 'muted',
  DRAFT: 'muted',
  PENDING: 'info',
  UNCERTAIN: 'warn',
  DONE: 'ok',
};

export function toneOf(status: string): string {
  return TONES[status] ?? 'muted';
}

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge tone-${toneOf(status)}`} data-status={status}>
      {status.replace(/_/g, ' ').toLowerCase()}
    </span>
  );
}
