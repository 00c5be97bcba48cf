import { formatDuration, formatTime } from '../../lib/format';
import { NoSandboxBadge, NoSandboxNotice } from '../ui/NoSandboxBadge';
import { SimulatedBadge } from '../ui/SimulatedBadge';
import { StatusBadge } from '../ui/StatusBadge';

export interface AttemptData {
  id: string;
  number: number;
  status: string;
  workerName: string;
  simulatedAccelerator?: string | null;
  /** bwrap | none | none-own-jobs (Attempt.sandbox) */
  sandbox?: string | null;
  leaseExpiresAt: string;
  exitCode?: number | null;
  errorClass?: string | null;
  errorMessage?: string | null;
  createdAt: string;
  startedAt?: string | null;
  finishedAt?: string | null;
  outputs: { path: string; sha256: string; size: number }[];
}

export interface TaskData {
  id: string;
  kind: string;
  /** Why the job has it (Task.role: RUN, SMOKE, STEP, …). */
  role: string;
  name: string;
  status: string;
  statusReason?: string | null;
  command: string;
  attemptCount: number;
  maxAttempts: number;
  createdAt: string;
  finishedAt?: string | null;
  runAfter: string;
  attempts: AttemptData[];
}

/** Tasks with every attempt: where it ran, when, how it ended (LOST/STALE included), and which one's logs are shown. */
export function TasksView({
  tasks,
  selected,
  onSelect,
}: {
  tasks: TaskData[];
  selected: string | null;
  onSelect: (attemptId: string) => void;
}) {
  if (tasks.length === 0) return <p className="muted">No tasks yet: they appear once the plan is prepared.</p>;
  return (
    <div className="stack" data-testid="tasks">
      <NoSandboxNotice attempts={tasks.flatMap((t) => t.attempts)} />
      {tasks.map((t) => (
        <div key={t.id}>
          <div className="spread">
            <span>
              <strong>{t.name}</strong> <span className="muted small">{t.kind.toLowerCase()}</span> <StatusBadge status={t.status} />
            </span>
            <span className="muted small">
              attempts {t.attemptCount}/{t.maxAttempts}
              {t.status === 'QUEUED' && new Date(t.runAfter).getTime() > Date.now() ? ` · retry after ${formatTime(t.runAfter)}` : ''}
            </span>
          </div>
          {t.statusReason && <p className="small muted">{t.statusReason}</p>}
          <code className="small">{t.command}</code>
          {t.attempts.length > 0 && (
            <table style={{ marginTop: 6 }} aria-label={`Attempts of ${t.name}`}>
              <thead>
                <tr>
                  <th>#</th>
                  <th>Worker</th>
                  <th>Status</th>
                  <th>Started</th>
                  <th>Duration</th>
                  <th>Exit</th>
                  <th>Error</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {t.attempts.map((a) => {
                  const took = attemptDuration(a);
                  return (
                    <tr key={a.id} data-attempt={a.id} aria-selected={a.id === selected}>
                      <td>
                        {a.number}
                        {a.number > 1 && <span className="muted small"> retry</span>}
                      </td>
                      <td>
                        {a.workerName} <SimulatedBadge accelerator={a.simulatedAccelerator} /> <NoSandboxBadge sandbox={a.sandbox} />
                      </td>
                      <td>
                        <StatusBadge status={a.status} />
                      </td>
                      <td>{formatTime(a.startedAt ?? a.createdAt)}</td>
                      <td data-testid="attempt-duration">{took === null ? '—' : formatDuration(took)}</td>
                      <td>{a.exitCode ?? '—'}</td>
                      <td title={a.errorMessage ?? undefined}>{a.errorClass ?? (a.errorMessage ? a.errorMessage.slice(0, 60) : '—')}</td>
                      <td>
                        <button type="button" className="link" onClick={() => onSelect(a.id)} aria-pressed={a.id === selected}>
                          {a.id === selected ? 'Showing logs' : 'Logs'}
                        </button>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
        </div>
      ))}
    </div>
  );
}

/** The attempt to show by default: a live one, else the newest attempt of the newest task. */
export function defaultAttempt(tasks: TaskData[]): string | null {
  const all = tasks.flatMap((t) => t.attempts);
  const live = all.filter((a) => a.status === 'RUNNING' || a.status === 'LEASED');
  const pick = live[live.length - 1] ?? [...all].sort((a, b) => a.createdAt.localeCompare(b.createdAt)).pop();
  return pick?.id ?? null;
}

/**
 * How long an attempt ran (so far): from its start, or — when it ended before its first
 * heartbeat marked it started (a short evaluation, a quick failure) — from its lease; null
 * only while it waits for its worker.
 */
export function attemptDuration(
  a: { status: string; createdAt: string; startedAt?: string | null; finishedAt?: string | null },
  now = Date.now(),
): number | null {
  const from = a.startedAt ?? (a.finishedAt ? a.createdAt : null);
  if (!from) return null;
  return Math.max(0, (a.finishedAt ? new Date(a.finishedAt).getTime() : now) - new Date(from).getTime());
}
