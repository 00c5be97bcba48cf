/**
 * One Apollo client per session token: HTTP for queries and mutations, graphql-ws on the
 * same /graphql path for subscriptions. The socket is opened eagerly and retried forever
 * so the connection banner reflects the API's reachability, and every reconnect bumps
 * `epoch`, which live pages use to resynchronise (refetch what they may have missed).
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { isSubscriptionOperation } from '@apollo/client/utilities';
import { createClient, type Client } from 'graphql-ws';
import { useSyncExternalStore } from 'react';

export type ConnectionState = 'connecting' | 'connected' | 'disconnected';
export interface Connection {
  state: ConnectionState;
  /** Increments on each successful (re)connection after the first. */
  epoch: number;
  /** True once the socket has been up at least once (before that, "connecting" is not an outage). */
  everConnected: boolean;
  /** Failed connection attempts since the last success. */
  failures: number;
}

let connection: Connection = { state: 'connecting', epoch: 0, everConnected: false, failures: 0 };
const listeners = new Set<() => void>();
function setConnection(next: Partial<Connection>) {
  connection = { ...connection, ...next };
  for (const l of [...listeners]) l();
}
export function useConnection(): Connection {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => connection,
  );
}

function wsUrl(): string {
  const u = new URL('/graphql', location.href);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.toString();
}

export interface Session {
  client: ApolloClient;
  ws: Client | null;
  dispose(): void;
}

export function createSession(token: string | null): Session {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const http = new HttpLink({ uri: '/graphql', headers });
  let ws: Client | null = null;
  let link: ApolloLink = http;
  connection = { state: 'connecting', epoch: 0, everConnected: false, failures: 0 };
  if (token) {
    ws = createClient({
      url: wsUrl(),
      connectionParams: { authorization: `Bearer ${token}` },
      lazy: false,
      keepAlive: 10_000,
      retryAttempts: Number.POSITIVE_INFINITY,
      shouldRetry: () => true,
      // 0.5 s, 1 s, 2 s … capped at 5 s, with jitter: a restarting API is found quickly.
      retryWait: (retries) => new Promise((r) => setTimeout(r, Math.min(5000, 500 * 2 ** retries) + Math.random() * 300)),
      on: {
        connecting: () => setConnection({ state: connection.everConnected ? 'disconnected' : 'connecting' }),
        connected: () =>
          setConnection({
            state: 'connected',
            everConnected: true,
            failures: 0,
            epoch: connection.everConnected ? connection.epoch + 1 : connection.epoch,
          }),
        closed: () => setConnection({ state: connection.everConnected ? 'disconnected' : 'connecting', failures: connection.failures + 1 }),
      },
    });
    link = ApolloLink.split(({ query }) => isSubscriptionOperation(query), new GraphQLWsLink(ws), http);
  }
  const client = new ApolloClient({
    link,
    cache: new InMemoryCache({
      typePolicies: {
        // Lists without ids are values of their parent, replaced whole on refetch.
        Job: { fields: { tasks: { merge: false }, questions: { merge: false }, plans: { merge: false }, events: { merge: false } } },
        Task: { fields: { attempts: { merge: false } } },
        Worker: { fields: { currentAttempts: { merge: false } } },
        User: { fields: { apiTokens: { merge: false }, workerTokens: { merge: false } } },
      },
    }),
    defaultOptions: { watchQuery: { fetchPolicy: 'cache-and-network' } },
  });
  return {
    client,
    ws,
    dispose() {
      void ws?.dispose();
      client.stop();
      void client.clearStore();
    },
  };
}

let active: { token: string | null; session: Session } | null = null;

/**
 * The session for this token, created once: signing in or out replaces it (and closes
 * the old socket). Idempotent, so React may call it again while rendering.
 */
export function sessionFor(token: string | null): Session {
  if (active && active.token === token) return active.session;
  active?.session.dispose();
  active = { token, session: createSession(token) };
  return active.session;
}
