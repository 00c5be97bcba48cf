import { useMutation, useQuery, useSubscription } from '@apollo/client/react';
import { useEffect, useState } from 'react';
import { graphql } from '../gql';
import { formatAge, formatTime } from '../lib/format';
import { AddWorker } from '../features/workers/AddWorker';
import { Capabilities } from '../features/workers/Capabilities';
import { NetworkOverview } from '../features/workers/NetworkOverview';
import { WorkerTokens } from '../features/workers/WorkerTokens';
import { SimulatedBadge } from '../features/ui/SimulatedBadge';
import { StatusBadge } from '../features/ui/StatusBadge';
import { Empty, ErrorState, Loading } from '../features/ui/States';

// 25 per page: the cost limit counts currentAttempts × 20 per worker (≈ 36,000 for 25).
const PAGE = 25;

const WorkerFields = graphql(`
  fragment WorkerFields on Worker {
    id
    name
    status
    statusReason
    capabilities
    workloads
    simulatedAccelerator
    slots
    version
    lastSeenAt
    createdAt
    reputation
    validatedCount
    mismatchCount
    currentAttempts {
      id
      number
      status
    }
  }
`);
void WorkerFields;

const WorkersQuery = graphql(`
  query Workers($first: Int, $after: String) {
    workers(first: $first, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        cursor
        node {
          ...WorkerFields
        }
      }
    }
  }
`);

const WorkersChanged = graphql(`
  subscription WorkersChanged {
    workersChanged {
      ...WorkerFields
    }
  }
`);

const PauseWorker = graphql(`
  mutation PauseWorker($id: ID!) {
    pauseWorker(id: $id) {
      __typename
      ... on Worker {
        id
        status
      }
      ... on NotFoundError {
        message
      }
    }
  }
`);

const ResumeWorker = graphql(`
  mutation ResumeWorker($id: ID!) {
    resumeWorker(id: $id) {
      __typename
      ... on Worker {
        id
        status
      }
      ... on NotFoundError {
        message
      }
    }
  }
`);

const DrainWorker = graphql(`
  mutation DrainWorker($id: ID!) {
    drainWorker(id: $id) {
      __typename
      ... on Worker {
        id
        status
      }
      ... on NotFoundError {
        message
      }
    }
  }
`);

const NetworkCapacityQuery = graphql(`
  query NetworkCapacity {
    networkCapacity {
      accelVendor
      count
      accelerators
      maxAccelMemoryMiB
      maxMemoryMiB
      workloads
      torchVersions
      pythonVersions
    }
  }
`);

export default function WorkersPage() {
  const { data, loading, error, refetch, fetchMore } = useQuery(WorkersQuery, { variables: { first: PAGE } });
  const changed = useSubscription(WorkersChanged);
  // The whole network (not only my machines); no subscription covers other owners' workers, so it is polled.
  const network = useQuery(NetworkCapacityQuery, { pollInterval: 15_000, notifyOnNetworkStatusChange: false });
  const [pause] = useMutation(PauseWorker);
  const [resume] = useMutation(ResumeWorker);
  const [drain] = useMutation(DrainWorker);
  const [busy, setBusy] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 10_000);
    return () => clearInterval(t);
  }, []);

  const workers = data?.workers.edges.map((e) => e.node) ?? [];
  // A worker we do not list yet (a new one said hello): reload the list.
  const changedId = changed.data?.workersChanged.id;
  useEffect(() => {
    if (changedId && data && !data.workers.edges.some((e) => e.node.id === changedId)) void refetch();
  }, [changedId, data, refetch]);
  // One of mine changed (came online, paused…): the network counts change with it.
  const changedStatus = changed.data?.workersChanged.status;
  const refetchNetwork = network.refetch;
  useEffect(() => {
    if (changedId) void refetchNetwork().catch(() => {});
  }, [changedId, changedStatus, refetchNetwork]);

  // resume: from PAUSED or DRAINING; drain: the running tasks checkpoint and move to other workers.
  const act = async (id: string, what: 'pause' | 'resume' | 'drain') => {
    setBusy(id);
    setActionError(null);
    try {
      const r =
        what === 'resume'
          ? (await resume({ variables: { id } })).data?.resumeWorker
          : what === 'drain'
            ? (await drain({ variables: { id } })).data?.drainWorker
            : (await pause({ variables: { id } })).data?.pauseWorker;
      if (r && r.__typename !== 'Worker') setActionError(r.message);
    } catch (err) {
      setActionError((err as Error).message);
    } finally {
      setBusy(null);
    }
  };

  const loadMore = () =>
    fetchMore({
      variables: { after: data?.workers.pageInfo.endCursor },
      updateQuery: (prev, { fetchMoreResult }) => ({
        workers: { ...fetchMoreResult.workers, edges: [...prev.workers.edges, ...fetchMoreResult.workers.edges] },
      }),
    });

  return (
    <>
      <h1>Workers</h1>
      <p className="muted">Your machines that run work for the network.</p>
      <section className="panel" aria-label="Network overview">
        <h2>Network overview</h2>
        <p className="muted small" style={{ marginTop: 0 }}>
          Workers online now across the whole network, by class: what a job can be planned for.
        </p>
        {network.loading && !network.data ? (
          <Loading lines={1} />
        ) : network.error && !network.data ? (
          <ErrorState error={network.error} retry={() => void network.refetch()} />
        ) : (
          <NetworkOverview classes={network.data?.networkCapacity ?? []} />
        )}
      </section>
      <section className="panel">
        <h2>My workers {data ? <span className="muted small">({data.workers.totalCount})</span> : null}</h2>
        {actionError && (
          <p className="error-text" role="alert">
            {actionError}
          </p>
        )}
        {loading && !data ? (
          <Loading />
        ) : error && !data ? (
          <ErrorState error={error} retry={() => void refetch()} />
        ) : workers.length === 0 ? (
          <Empty>No workers yet. Add one below: it shows up here as soon as it connects.</Empty>
        ) : (
          <table aria-label="Workers">
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th>Capabilities</th>
                <th>Running</th>
                <th>Last seen</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {workers.map((w) => (
                <tr key={w.id} data-worker={w.name}>
                  <td>
                    <strong>{w.name}</strong> <SimulatedBadge accelerator={w.simulatedAccelerator} />
                    <div className="muted small">
                      v{w.version || '?'} · {w.slots} slot{w.slots === 1 ? '' : 's'}
                    </div>
                    <div className="muted small">{w.workloads.join(', ')}</div>
                    <div
                      className="muted small"
                      data-testid="reputation"
                      title="Results confirmed by another owner's worker raise it; results a tie-breaker found wrong lower it. Below 0.3 a worker gets no checkable work."
                    >
                      trust {w.reputation.toFixed(2)} · {w.validatedCount} confirmed · {w.mismatchCount} wrong
                    </div>
                  </td>
                  <td>
                    <StatusBadge status={w.status} />
                    {w.statusReason && (
                      <div className="muted small" data-testid="status-reason" style={{ maxWidth: 320 }}>
                        {w.statusReason}
                      </div>
                    )}
                  </td>
                  <td style={{ maxWidth: 420 }}>
                    <Capabilities value={w.capabilities} />
                  </td>
                  <td>
                    {w.currentAttempts.length === 0 ? (
                      <span className="muted">idle</span>
                    ) : (
                      w.currentAttempts.map((a) => (
                        <div key={a.id}>
                          attempt #{a.number} <StatusBadge status={a.status} />
                        </div>
                      ))
                    )}
                  </td>
                  <td title={formatTime(w.lastSeenAt)}>{formatAge(w.lastSeenAt)}</td>
                  <td>
                    {w.status !== 'OFFLINE' && (
                      <button
                        type="button"
                        disabled={busy === w.id}
                        onClick={() => void act(w.id, w.status === 'PAUSED' || w.status === 'DRAINING' ? 'resume' : 'pause')}
                      >
                        {w.status === 'PAUSED' || w.status === 'DRAINING' ? 'Resume' : 'Pause'}
                      </button>
                    )}
                    {(w.status === 'ONLINE' || w.status === 'PAUSED') && (
                      <button
                        type="button"
                        disabled={busy === w.id}
                        title="Take the machine back: running tasks save a checkpoint and continue on other workers; what is still running after the worker's grace period is stopped."
                        onClick={() => void act(w.id, 'drain')}
                        style={{ marginLeft: 6 }}
                      >
                        Drain
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {data?.workers.pageInfo.hasNextPage && (
          <button type="button" onClick={() => void loadMore()} style={{ marginTop: 10 }}>
            Load more
          </button>
        )}
      </section>
      <AddWorker />
      <WorkerTokens />
    </>
  );
}
