import type { JobTasksQuery } from '../../gql/graphql';
import { formatCad, formatDuration, formatNumber } from '../../lib/format';
import { JsonView } from '../ui/JsonView';
import { SimulatedBadge } from '../ui/SimulatedBadge';
import { StatusBadge } from '../ui/StatusBadge';
import type { TaskData } from './TasksView';

/** Job.shardGroup as the job page's JobTasks query reads it. */
export type ShardGroupData = NonNullable<NonNullable<JobTasksQuery['job']>['shardGroup']>;

const PHASE_WORDS: Record<string, string> = {
  CHECKING: 'checking the split',
  REJECTED: 'split rejected',
  RUNNING: 'running',
  MERGED: 'merged',
  FAILED: 'failed',
};
const PHASE_TONE: Record<string, string> = { CHECKING: 'info', REJECTED: 'bad', RUNNING: 'info', MERGED: 'ok', FAILED: 'bad' };

const plural = (n: number, word: string) => `${formatNumber(n)} ${word}${n === 1 ? '' : 's'}`;

/**
 * A sharded run as one group: progress n of N (and how many run, wait, were retried or
 * failed), the adaptation check's verdict, each shard with its slice, seed, status and every
 * attempt (worker, duration, error class, a button that shows its logs in the page's log
 * viewer), the merged result, and the cost of all the shards. The attempts come from the
 * page's task list, refetched with the group on each task or attempt event.
 */
export function ShardGroupView({
  group,
  tasks,
  selected,
  onSelect,
}: {
  group: ShardGroupData;
  tasks: readonly TaskData[];
  selected: string | null;
  onSelect: (attemptId: string) => void;
}) {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const g = group;
  const counts = [
    g.running > 0 && `${g.running} running`,
    g.queued > 0 && `${g.queued} queued`,
    g.retried > 0 && `${g.retried} retried`,
    g.failed > 0 && `${g.failed} failed`,
  ].filter(Boolean);
  return (
    <div className="stack" data-testid="shard-group" data-phase={g.phase}>
      <div className="spread">
        <span data-testid="shard-progress">
          <strong>
            {g.done}/{g.total}
          </strong>{' '}
          shards done{counts.length > 0 && <span className="muted"> · {counts.join(' · ')}</span>}
        </span>
        <span className={`badge tone-${PHASE_TONE[g.phase] ?? 'muted'}`} data-testid="shard-phase">
          {PHASE_WORDS[g.phase] ?? g.phase.toLowerCase()}
        </span>
      </div>
      <div
        className="progress"
        role="progressbar"
        aria-label="Shards done"
        aria-valuemin={0}
        aria-valuemax={g.total}
        aria-valuenow={g.done}
      >
        <div style={{ width: `${g.total ? (100 * g.done) / g.total : 0}%` }} />
      </div>
      <p className="small muted" style={{ margin: 0 }}>
        {plural(g.totalUnits, g.unit)} split into {g.total} shards · merged into <code>{g.mergeFile}</code> ({g.mergeRules.join('; ')})
      </p>

      <div data-testid="shard-check" className="small">
        <strong>Check of the split:</strong>{' '}
        {g.check ? (
          <>
            <StatusBadge status={g.check.outcome} /> {g.check.reason}
          </>
        ) : (
          <span className="muted">
            running — the bounded workload unsharded and in shards; the shards start once their merged result agrees.
          </span>
        )}
      </div>

      <table aria-label="Shards" className="shard-table">
        <thead>
          <tr>
            <th>Shard</th>
            <th>Slice</th>
            <th>Status</th>
            <th>Attempts</th>
            <th>Cost</th>
          </tr>
        </thead>
        <tbody>
          {g.shards.map((s) => {
            const task = s.task ? byId.get(s.task.id) : undefined;
            return (
              <tr key={s.index} data-shard={s.index} data-status={s.status}>
                <td title={s.command}>
                  <strong>#{s.index}</strong> <span className="muted small">{s.name}</span>
                </td>
                <td className="small">
                  {plural(s.size, g.unit)}
                  {s.range ? ` [${s.range[0]}, ${s.range[1]})` : ''}
                  {s.seed != null && <span className="muted"> · seed {s.seed}</span>}
                </td>
                <td>
                  <StatusBadge status={s.status} />
                </td>
                <td>
                  {task && task.attempts.length > 0 ? (
                    <ul className="shard-attempts" aria-label={`Attempts of shard ${s.index}`}>
                      {task.attempts.map((a) => {
                        const end = a.finishedAt ? new Date(a.finishedAt).getTime() : Date.now();
                        return (
                          <li key={a.id} data-attempt={a.id} data-status={a.status}>
                            #{a.number}
                            {a.number > 1 && <span className="muted"> retry</span>} on {a.workerName}{' '}
                            <SimulatedBadge accelerator={a.simulatedAccelerator} /> <StatusBadge status={a.status} />
                            {a.startedAt && <span className="muted"> {formatDuration(end - new Date(a.startedAt).getTime())}</span>}
                            {a.errorClass && (
                              <span className="error-text" title={a.errorMessage ?? undefined}>
                                {' '}
                                {a.errorClass}
                              </span>
                            )}{' '}
                            <button type="button" className="link" onClick={() => onSelect(a.id)} aria-pressed={a.id === selected}>
                              {a.id === selected ? 'Showing logs' : 'Logs'}
                            </button>
                          </li>
                        );
                      })}
                    </ul>
                  ) : (
                    <span className="muted small">{s.status === 'NOT_RUN' ? 'not run' : 'none yet'}</span>
                  )}
                </td>
                <td className="small">{s.attemptCount > 0 ? formatCad(s.costCad) : '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>

      {g.merged != null && (
        <div data-testid="shard-merged" className="small">
          <strong>Merged result</strong> (<code>{g.mergeFile}</code>):
          <JsonView value={g.merged} />
        </div>
      )}

      <p data-testid="shard-cost" className="small" style={{ margin: 0 }}>
        <strong>
          Cost of all {g.total} shards: {formatCad(g.costCad)}
        </strong>
        <span className="muted">
          {' '}
          · the check {formatCad(g.checkCostCad)}
          {g.lostCostCad > 0 && ` · ${formatCad(g.lostCostCad)} of lost work not charged`}
        </span>
      </p>
    </div>
  );
}
