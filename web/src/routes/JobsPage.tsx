import { useQuery } from '@apollo/client/react';
import { useEffect, useState } from 'react';
import { graphql } from '../gql';
import type { JobStatus } from '../gql/graphql';
import { formatAge, formatCad, formatDuration } from '../lib/format';
import { Link, navigate, useLocation } from '../lib/router';
import { StatusBadge } from '../features/ui/StatusBadge';
import { Empty, ErrorState, Loading } from '../features/ui/States';

const PAGE = 20;
const FAILED = new Set(['FAILED', 'STOPPED', 'CANCELLED']);

/** The start of a text on one line, cut at a word: "train it for 2 epochs and give me…". */
function excerpt(text: string, max = 90): string {
  const one = text.replace(/\s+/g, ' ').trim();
  if (one.length <= max) return one;
  const cut = one.slice(0, max);
  return `${cut.slice(0, cut.lastIndexOf(' ') > max * 0.6 ? cut.lastIndexOf(' ') : max)}…`;
}
const STATUSES: JobStatus[] = [
  'DRAFT',
  'PLANNING',
  'NEEDS_INPUT',
  'PREPARING',
  'RUNNING',
  'VALIDATING',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'STOPPED',
];

const JobsQuery = graphql(`
  query Jobs($first: Int, $after: String, $last: Int, $before: String, $status: [JobStatus!]) {
    jobs(first: $first, after: $after, last: $last, before: $before, status: $status) {
      totalCount
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
      edges {
        cursor
        node {
          id
          title
          request
          status
          statusReason
          startedAt
          finishedAt
          headlineMetric {
            name
            value
            source
          }
          estimate {
            durationSec
          }
          costCad
          spendingCapCad
          createdAt
          updatedAt
        }
      }
    }
  }
`);

/** Newest first; the filter and the page cursor live in the URL so back/forward and reload keep them. */
export default function JobsPage() {
  const { query } = useLocation();
  const status = (query.get('status') ?? '').split(',').filter((s): s is JobStatus => (STATUSES as string[]).includes(s));
  const after = query.get('after');
  const before = query.get('before');
  const variables = before
    ? { last: PAGE, before, status: status.length ? status : null }
    : { first: PAGE, after, status: status.length ? status : null };
  const { data, loading, error, refetch } = useQuery(JobsQuery, { variables, pollInterval: 0 });
  const [, tick] = useState(0);
  useEffect(() => {
    // Ages ("3m ago") move on without refetching.
    const t = setInterval(() => tick((n) => n + 1), 15_000);
    return () => clearInterval(t);
  }, []);

  const go = (params: Record<string, string | null>) => {
    const q = new URLSearchParams(query);
    for (const [k, v] of Object.entries(params))
      if (v) q.set(k, v);
      else q.delete(k);
    const s = q.toString();
    navigate(`/jobs${s ? `?${s}` : ''}`);
  };

  const conn = data?.jobs;
  return (
    <>
      <div className="spread">
        <div>
          <h1>Jobs</h1>
          <p className="muted" data-testid="jobs-count">
            {conn ? `${conn.totalCount} job${conn.totalCount === 1 ? '' : 's'}${status.length ? ' with this status' : ''}` : '\u00a0'}
          </p>
        </div>
        <div className="row">
          <label htmlFor="statusFilter" style={{ margin: 0 }}>
            Status
          </label>
          <select
            id="statusFilter"
            value={status[0] ?? ''}
            onChange={(e) => go({ status: e.target.value || null, after: null, before: null })}
          >
            <option value="">All</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace('_', ' ').toLowerCase()}
              </option>
            ))}
          </select>
          <Link to="/jobs/new" className="button primary" style={{ background: 'var(--accent)', color: '#fff' }}>
            New job
          </Link>
        </div>
      </div>
      <section className="panel">
        {loading && !conn ? (
          <Loading />
        ) : error && !conn ? (
          <ErrorState error={error} retry={() => void refetch()} />
        ) : !conn || conn.edges.length === 0 ? (
          <Empty>
            {status.length ? 'No jobs with this status.' : 'No jobs yet.'} <Link to="/jobs/new">Submit your first job</Link>.
          </Empty>
        ) : (
          <table aria-label="Jobs">
            <thead>
              <tr>
                <th>Job</th>
                <th>Status</th>
                <th>Result</th>
                <th>Age</th>
                <th>Duration</th>
                <th>Cost</th>
                <th>Cap</th>
              </tr>
            </thead>
            <tbody>
              {conn.edges.map(({ node: j }) => (
                <tr key={j.id} className="clickable" onClick={() => navigate(`/jobs/${encodeURIComponent(j.id)}`)}>
                  <td className="job-cell">
                    <Link to={`/jobs/${encodeURIComponent(j.id)}`} onClick={(e) => e.stopPropagation()}>
                      {j.title}
                    </Link>
                    <div className="muted small excerpt" data-testid="request-excerpt" title={j.request}>
                      {excerpt(j.request)}
                    </div>
                  </td>
                  <td>
                    <StatusBadge status={j.status} />
                    {FAILED.has(j.status) && j.statusReason && (
                      <div className="small failure" data-testid="failure-reason" title={j.statusReason}>
                        {excerpt(j.statusReason, 110)}
                      </div>
                    )}
                  </td>
                  <td data-testid="headline-metric">
                    {j.headlineMetric ? (
                      <span title={`from the ${j.headlineMetric.source}`}>
                        {j.headlineMetric.name} <strong>{Number(j.headlineMetric.value.toPrecision(4))}</strong>
                      </span>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td title={j.createdAt}>{formatAge(j.createdAt)}</td>
                  <td data-testid="job-duration">
                    {j.startedAt ? (
                      formatDuration((j.finishedAt ? new Date(j.finishedAt).getTime() : Date.now()) - new Date(j.startedAt).getTime())
                    ) : (
                      <span className="muted">—</span>
                    )}
                    {j.status === 'RUNNING' && j.estimate && j.startedAt && (
                      <div className="muted small" data-testid="job-eta">
                        about {formatDuration(Math.max(0, j.estimate.durationSec * 1000 - (Date.now() - new Date(j.startedAt).getTime())))}{' '}
                        left
                      </div>
                    )}
                  </td>
                  <td>{formatCad(j.costCad)}</td>
                  <td>{j.spendingCapCad == null ? <span className="muted">no cap</span> : formatCad(j.spendingCapCad)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {conn && (conn.pageInfo.hasNextPage || conn.pageInfo.hasPreviousPage || after || before) && (
          <div className="spread" style={{ marginTop: 10 }}>
            <button
              type="button"
              disabled={!(before ? conn.pageInfo.hasPreviousPage : after)}
              onClick={() => go({ before: conn.pageInfo.startCursor, after: null })}
            >
              ← Newer
            </button>
            <button
              type="button"
              disabled={!(before ? true : conn.pageInfo.hasNextPage)}
              onClick={() => go({ after: conn.pageInfo.endCursor, before: null })}
            >
              Older →
            </button>
          </div>
        )}
      </section>
    </>
  );
}
