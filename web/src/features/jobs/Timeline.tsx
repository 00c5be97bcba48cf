import { formatClock, formatTime } from '../../lib/format';
import { JsonView } from '../ui/JsonView';
import { toneOf } from '../ui/StatusBadge';
import { trustCheckBadge, ValidationBadge } from '../ui/ValidationBadge';
import { describeEvent } from './describeEvent';
import type { JobEventItem } from './useJobActivity';

const STAGES: { key: string; label: string; statuses: string[] }[] = [
  { key: 'submitted', label: 'Submitted', statuses: ['DRAFT'] },
  { key: 'planning', label: 'Planning', statuses: ['PLANNING', 'NEEDS_INPUT'] },
  { key: 'preparing', label: 'Preparation', statuses: ['PREPARING'] },
  { key: 'running', label: 'Run', statuses: ['RUNNING'] },
  { key: 'validating', label: 'Validation', statuses: ['VALIDATING'] },
  { key: 'done', label: 'Done', statuses: ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'] },
];

/** The stages the job went through, each with the time it was first reached (from job.status events). */
export function StageBar({ status, events, createdAt }: { status: string; events: JobEventItem[]; createdAt: string }) {
  const reached = new Map<string, string>([['submitted', createdAt]]);
  for (const e of events) {
    if (e.kind !== 'job.status') continue;
    const s = (e.payload as { status?: string } | null)?.status;
    const stage = STAGES.find((st) => s && st.statuses.includes(s));
    if (stage && !reached.has(stage.key)) reached.set(stage.key, e.createdAt);
  }
  // NEEDS_INPUT after the run started is the run supervisor's question: the run waits.
  const askedDuringRun = status === 'NEEDS_INPUT' && reached.has('running');
  const current = askedDuringRun ? 'running' : STAGES.find((st) => st.statuses.includes(status))?.key;
  const currentIdx = STAGES.findIndex((s) => s.key === current);
  return (
    <ol className="row" aria-label="Stages" style={{ listStyle: 'none', padding: 0, margin: '8px 0 0', gap: 6 }}>
      {STAGES.map((s, i) => {
        const at = reached.get(s.key);
        const isCurrent = s.key === current;
        const tone = isCurrent ? toneOf(status) : at || i < currentIdx ? 'ok' : 'muted';
        return (
          <li
            key={s.key}
            aria-current={isCurrent ? 'step' : undefined}
            className={`tone-${tone}`}
            style={{ fontWeight: isCurrent ? 700 : 400 }}
          >
            {i > 0 && <span className="muted"> → </span>}
            {isCurrent && status === 'NEEDS_INPUT'
              ? `${s.label} (waiting for you)`
              : s.key === 'done' && isCurrent
                ? status.toLowerCase()
                : s.label}
            {at && <span className="muted small"> {formatClock(at)}</span>}
          </li>
        );
      })}
    </ol>
  );
}

export function EventTimeline({ events, loading, error }: { events: JobEventItem[]; loading: boolean; error: string | null }) {
  if (loading && events.length === 0) return <p className="muted">Loading events…</p>;
  if (error && events.length === 0) return <p className="error-text">Could not load events: {error}</p>;
  if (events.length === 0) return <p className="muted">Nothing has happened yet.</p>;
  return (
    <ol className="timeline" aria-label="Timeline, oldest first" data-testid="timeline">
      {events.map((e) => (
        <li key={e.id} data-kind={e.kind}>
          <time className="muted small" dateTime={e.createdAt} title={formatTime(e.createdAt)}>
            {formatClock(e.createdAt)}
          </time>
          <details>
            <summary>
              {e.kind === 'trust.check' && trustCheckBadge(e.payload) && (
                <>
                  <ValidationBadge badge={trustCheckBadge(e.payload)!} />{' '}
                </>
              )}
              {describeEvent(e.kind, e.payload)}
            </summary>
            <div className="small" style={{ marginTop: 4 }}>
              <span className="muted">{e.kind}</span>
              <JsonView value={e.payload} />
            </div>
          </details>
        </li>
      ))}
    </ol>
  );
}
