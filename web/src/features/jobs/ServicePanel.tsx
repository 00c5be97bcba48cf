import { useMutation, useQuery } from '@apollo/client/react';
import { useEffect, useState } from 'react';
import { graphql } from '../../gql';
import { formatTime } from '../../lib/format';
import { CopyField } from '../ui/CopyField';
import { StatusBadge } from '../ui/StatusBadge';

const ServiceFields = graphql(`
  fragment ServiceFields on Service {
    id
    url
    apiUrl
    status
    ready
    readyAt
    stoppedAt
    tokenRotatedAt
    requestCount
    errorCount
    meanLatencyMs
    readinessChecks
    readinessFailures
    spec
  }
`);
void ServiceFields;

const JobServiceQuery = graphql(`
  query JobService($id: ID!) {
    job(id: $id) {
      id
      service {
        ...ServiceFields
      }
    }
  }
`);

const RotateServiceToken = graphql(`
  mutation RotateServiceToken($jobId: ID!, $firstOnly: Boolean) {
    rotateServiceToken(jobId: $jobId, firstOnly: $firstOnly) {
      __typename
      ... on ServiceToken {
        token
        service {
          ...ServiceFields
        }
      }
      ... on Error {
        message
      }
    }
  }
`);

const OpenServiceInBrowser = graphql(`
  mutation OpenServiceInBrowser($jobId: ID!) {
    openServiceInBrowser(jobId: $jobId) {
      __typename
      ... on ServiceBrowserLink {
        url
      }
      ... on Error {
        message
      }
    }
  }
`);

const StopService = graphql(`
  mutation StopService($jobId: ID!) {
    stopService(jobId: $jobId) {
      __typename
      ... on Service {
        ...ServiceFields
      }
      ... on Error {
        message
      }
    }
  }
`);

/** Counts are flushed by the API every few seconds; readiness changes come with them. */
const POLL_MS = 3000;

/**
 * A job's hosted endpoint (DESIGN §10): its URL, readiness, requests and latency, the access
 * token (shown once when issued: only its hash is kept; rotating voids the old one), a button
 * that opens it in this browser (a ticket exchanged for a cookie: the token never leaves the
 * API), and Stop. Nothing is rendered for a job without a service.
 */
export function ServicePanel({ jobId, jobStatus }: { jobId: string; jobStatus: string }) {
  // Polled only while a service is up (most jobs have none: one query per job status, then nothing).
  const [live, setLive] = useState(false);
  const q = useQuery(JobServiceQuery, { variables: { id: jobId }, pollInterval: live ? POLL_MS : 0 });
  // The service is created with the plan: a page opened while the job was planning asks again
  // when the job moves on (without this the panel never appeared for it).
  const hasService = !!q.data?.job?.service;
  useEffect(() => {
    if (!hasService) void q.refetch();
  }, [jobStatus]); // eslint-disable-line react-hooks/exhaustive-deps
  const [rotate, rotating] = useMutation(RotateServiceToken);
  const [open, opening] = useMutation(OpenServiceInBrowser);
  const [stop, stopping] = useMutation(StopService);
  const [token, setToken] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const s = q.data?.job?.service;
  const serviceStatus = s?.status;
  useEffect(() => setLive(!!serviceStatus && serviceStatus !== 'STOPPED'), [serviceStatus]);
  if (!s) return null;
  const stopped = s.status === 'STOPPED';
  const requests = Number(s.requestCount);
  const readinessPath = (s.spec as { readiness?: { path?: string } } | null)?.readiness?.path ?? '/';

  const act = async (run: () => Promise<string | null>) => {
    setError(null);
    try {
      setError(await run());
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const issue = (firstOnly: boolean) =>
    act(async () => {
      if (!firstOnly && !confirm('Issue a new token? The current one stops working at once.')) return null;
      const r = (await rotate({ variables: { jobId, firstOnly } })).data?.rotateServiceToken;
      if (r?.__typename !== 'ServiceToken') return r && 'message' in r ? r.message : 'The token was not issued.';
      setToken(r.token);
      return null;
    });
  const openInBrowser = () =>
    act(async () => {
      // Opened before the answer arrives, so the browser does not treat it as an unrequested pop-up.
      const tab = window.open('about:blank', '_blank');
      const r = (await open({ variables: { jobId } })).data?.openServiceInBrowser;
      if (r?.__typename !== 'ServiceBrowserLink') {
        tab?.close();
        return r && 'message' in r ? r.message : 'The service could not be opened.';
      }
      if (tab) {
        tab.opener = null;
        tab.location.href = r.url;
      } else window.location.href = r.url;
      return null;
    });
  const doStop = () =>
    act(async () => {
      if (!confirm('Stop this service? Its URL stops answering and the job ends.')) return null;
      const r = (await stop({ variables: { jobId } })).data?.stopService;
      setToken(null);
      return r && r.__typename !== 'Service' && 'message' in r ? r.message : null;
    });

  return (
    <section className="panel" aria-label="Service" data-testid="service-panel">
      <div className="spread">
        <h2>
          Service <StatusBadge status={s.status} />
        </h2>
        {!stopped && (
          <div className="row">
            <button type="button" onClick={() => void openInBrowser()} disabled={opening.loading}>
              Open in browser
            </button>
            <button type="button" className="danger" onClick={() => void doStop()} disabled={stopping.loading}>
              {stopping.loading ? 'Stopping…' : 'Stop service'}
            </button>
          </div>
        )}
      </div>
      <CopyField value={s.url} label="Service URL" />
      <p className="muted small" style={{ margin: '4px 0 8px' }}>
        On a host of its own, never this dashboard&apos;s: its pages cannot read your session or other services. Programs whose resolver
        does not reach it can use the same app at <code aria-label="Service API URL">{s.apiUrl}</code> (bearer token only).
      </p>
      <dl className="kv" style={{ marginTop: 8 }}>
        <dt>Readiness</dt>
        <dd data-testid="service-readiness">
          {stopped
            ? `Stopped${s.stoppedAt ? ` ${formatTime(s.stoppedAt)}` : ''}: its URL answers 410.`
            : s.ready
              ? `Ready${s.readyAt ? ` since ${formatTime(s.readyAt)}` : ''}: requests reach the app.`
              : `Starting: requests get 503 (with Retry-After) until ${readinessPath} answers 2xx on a worker.`}
        </dd>
        <dt>Requests</dt>
        <dd data-testid="service-requests">
          {requests === 0 ? 'none yet' : `${requests} (${Number(s.errorCount)} failed) · mean latency ${s.meanLatencyMs} ms`}
        </dd>
        <dt>Readiness checks</dt>
        <dd data-testid="service-checks">
          {`${Number(s.readinessChecks)} (${Number(s.readinessFailures)} failed)`}
          <span className="muted small"> · GET {readinessPath}, counted here rather than written into the app&apos;s log</span>
        </dd>
        <dt>Access token</dt>
        <dd data-testid="service-token">
          {token ? (
            <>
              <CopyField value={token} label="Service token" />
              <span className="muted small">
                Shown once: keep it. Requests send <code>Authorization: Bearer …</code>.
              </span>
            </>
          ) : s.tokenRotatedAt ? (
            <span className="muted">Issued {formatTime(s.tokenRotatedAt)}; not shown again.</span>
          ) : (
            <span className="muted">None issued yet.</span>
          )}
          {!stopped && (
            <div style={{ marginTop: 6 }}>
              <button type="button" onClick={() => void issue(!s.tokenRotatedAt)} disabled={rotating.loading}>
                {s.tokenRotatedAt ? 'Rotate token' : 'Issue token'}
              </button>
            </div>
          )}
        </dd>
      </dl>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
