/**
 * Everything live on a job page, from one `jobEvents` subscription: the job event log
 * (timeline, agent activity), and log/metric batches routed to per-attempt stores.
 *
 * Resynchronisation: events are fetched first over HTTP, then the subscription starts
 * `after` the newest one (the server replays what happened in between). graphql-ws
 * resubscribes by itself after a reconnect; on each reconnect (`epoch`) we also fetch
 * events after the newest we hold, refetch the job and its tasks, and let every open log
 * and metric store catch up from its last seq, so nothing missed while offline is lost.
 */
import { useApolloClient } from '@apollo/client/react';
import { useCallback, useEffect, useRef, useState } from 'react';
import { graphql } from '../../gql';
import { useConnection } from '../../lib/apollo';
import { LogStore, type LogLine } from '../logs/LogStore';
import { MetricStore, type MetricPointIn } from '../metrics/MetricStore';
import { EVENTS_PAGE, LOG_PAGE, METRIC_PAGE } from './pageSizes';

export interface JobEventItem {
  id: string;
  kind: string;
  payload: unknown;
  createdAt: string;
}

export const JobEventsQuery = graphql(`
  query JobEvents($id: ID!, $after: String, $first: Int) {
    job(id: $id) {
      id
      events(after: $after, first: $first) {
        id
        kind
        payload
        createdAt
      }
    }
  }
`);

const JobActivitySubscription = graphql(`
  subscription JobActivity($jobId: ID!, $after: String) {
    jobEvents(jobId: $jobId, after: $after) {
      __typename
      ... on JobEventEnvelope {
        event {
          id
          kind
          payload
          createdAt
        }
      }
      ... on LogLinesEvent {
        attemptId
        lines {
          seq
          stream
          text
          ts
        }
      }
      ... on MetricPointsEvent {
        attemptId
        points {
          seq
          name
          step
          value
        }
      }
    }
  }
`);

const AttemptLogPage = graphql(`
  query AttemptLogPage($attemptId: ID!, $afterSeq: Int, $first: Int) {
    attempt(id: $attemptId) {
      id
      logs(afterSeq: $afterSeq, first: $first) {
        seq
        stream
        text
        ts
      }
    }
  }
`);

const AttemptMetricPage = graphql(`
  query AttemptMetricPage($attemptId: ID!, $afterSeq: Int, $first: Int) {
    attempt(id: $attemptId) {
      id
      metricPoints(afterSeq: $afterSeq, first: $first) {
        seq
        name
        step
        value
      }
    }
  }
`);

const newer = (a: string, b: string | null) => b === null || BigInt(a) > BigInt(b);
const byId = (a: { id: string }, b: { id: string }) => (BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0);

/**
 * The events of `items` not in `seen` (added to it), in id order. NOTIFY order is not id order
 * (events commit in different transactions, and a claim announces its lease events without waiting),
 * so an event older than the newest one shown still belongs in the timeline: dropping by "older than
 * the last id" lost such events until a reload.
 */
export function takeUnseen<E extends { id: string }>(items: readonly E[], seen: Set<string>): E[] {
  const fresh: E[] = [];
  for (const e of items) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    fresh.push(e);
  }
  return fresh.sort(byId);
}

/** `fresh` (in id order, none already in `list`) merged into `list`, which is in id order. Pure. */
export function mergeEvents<E extends { id: string }>(list: readonly E[], fresh: readonly E[]): E[] {
  if (fresh.length === 0) return list as E[];
  const last = list[list.length - 1];
  // The usual case appends; a late one is put in its place.
  return !last || byId(fresh[0]!, last) > 0 ? [...list, ...fresh] : [...list, ...fresh].sort(byId);
}

export function useJobActivity(jobId: string, onEvent: (e: JobEventItem) => void, onResync: () => void) {
  const client = useApolloClient();
  const { epoch } = useConnection();
  const [events, setEvents] = useState<JobEventItem[]>([]);
  const [status, setStatus] = useState<{ loading: boolean; error: string | null }>({ loading: true, error: null });
  const lastId = useRef<string | null>(null);
  const seen = useRef(new Set<string>());
  const logStores = useRef(new Map<string, LogStore>());
  const metricStores = useRef(new Map<string, MetricStore>());
  const handlers = useRef({ onEvent, onResync });
  handlers.current = { onEvent, onResync };

  const addEvents = useCallback((items: readonly JobEventItem[], live: boolean) => {
    const fresh = takeUnseen(items, seen.current);
    if (fresh.length === 0) return;
    // The newest id is where a replay starts (`after`).
    if (newer(fresh[fresh.length - 1]!.id, lastId.current)) lastId.current = fresh[fresh.length - 1]!.id;
    setEvents((prev) => mergeEvents(prev, fresh));
    if (live) for (const e of fresh) handlers.current.onEvent(e);
  }, []);

  const fetchEventsAfter = useCallback(async () => {
    for (;;) {
      const r = await client.query({
        query: JobEventsQuery,
        variables: { id: jobId, after: lastId.current, first: EVENTS_PAGE },
        fetchPolicy: 'no-cache',
      });
      const page = r.data?.job?.events ?? [];
      const before = lastId.current;
      addEvents(page, before !== null);
      if (page.length < EVENTS_PAGE) return;
    }
  }, [client, jobId, addEvents]);

  // Initial load, then the live subscription (restarted if the server ends it with an error).
  useEffect(() => {
    // The stores live as long as the hook (the refs are never reassigned): the cleanup disposes the ones this job made.
    const logs = logStores.current;
    const metrics = metricStores.current;
    let cancelled = false;
    let sub: { unsubscribe(): void } | null = null;
    let retry: ReturnType<typeof setTimeout> | undefined;
    lastId.current = null;
    seen.current = new Set();
    setEvents([]);
    setStatus({ loading: true, error: null });

    const start = () => {
      if (cancelled) return;
      sub = client
        .subscribe({ query: JobActivitySubscription, variables: { jobId, after: lastId.current ?? '0' }, fetchPolicy: 'no-cache' })
        .subscribe({
          next: (r) => {
            const a = r.data?.jobEvents;
            if (!a) {
              if (r.error) restart();
              return;
            }
            if (a.__typename === 'JobEventEnvelope') addEvents([a.event], true);
            else if (a.__typename === 'LogLinesEvent') logStores.current.get(a.attemptId)?.push(a.lines as LogLine[]);
            else if (a.__typename === 'MetricPointsEvent') metricStores.current.get(a.attemptId)?.push(a.points as MetricPointIn[]);
          },
          error: () => restart(),
          complete: () => {},
        });
    };
    const restart = () => {
      sub?.unsubscribe();
      clearTimeout(retry);
      retry = setTimeout(() => {
        void fetchEventsAfter().catch(() => {});
        for (const s of logStores.current.values()) void s.catchUp();
        for (const s of metricStores.current.values()) void s.catchUp();
        start();
      }, 1500);
    };

    fetchEventsAfter()
      .then(() => !cancelled && setStatus({ loading: false, error: null }))
      .catch((err: Error) => !cancelled && setStatus({ loading: false, error: err.message }))
      .finally(start);
    return () => {
      cancelled = true;
      clearTimeout(retry);
      sub?.unsubscribe();
      for (const s of logs.values()) s.dispose();
      logs.clear();
      metrics.clear();
    };
  }, [client, jobId, addEvents, fetchEventsAfter]);

  // After a reconnect: fetch what we missed.
  useEffect(() => {
    if (epoch === 0) return;
    void fetchEventsAfter().catch(() => {});
    for (const s of logStores.current.values()) void s.catchUp();
    for (const s of metricStores.current.values()) void s.catchUp();
    handlers.current.onResync();
  }, [epoch, fetchEventsAfter]);

  const logStore = useCallback(
    (attemptId: string): LogStore => {
      let s = logStores.current.get(attemptId);
      if (!s) {
        s = new LogStore(async (afterSeq) => {
          const r = await client.query({
            query: AttemptLogPage,
            variables: { attemptId, afterSeq, first: LOG_PAGE },
            fetchPolicy: 'no-cache',
          });
          return r.data?.attempt?.logs ?? [];
        }, LOG_PAGE);
        logStores.current.set(attemptId, s);
        void s.catchUp();
      }
      return s;
    },
    // jobId: a new function for another job, so a consumer's effect keyed on it starts over (the stores were cleared).
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [client, jobId],
  );

  const metricStore = useCallback(
    (attemptId: string): MetricStore => {
      let s = metricStores.current.get(attemptId);
      if (!s) {
        s = new MetricStore(async (afterSeq) => {
          const r = await client.query({
            query: AttemptMetricPage,
            variables: { attemptId, afterSeq, first: METRIC_PAGE },
            fetchPolicy: 'no-cache',
          });
          return r.data?.attempt?.metricPoints ?? [];
        }, METRIC_PAGE);
        metricStores.current.set(attemptId, s);
        void s.catchUp();
      }
      return s;
    },
    // jobId: a new function for another job, so a consumer's effect keyed on it starts over (the stores were cleared).
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [client, jobId],
  );

  return { events, status, logStore, metricStore };
}
