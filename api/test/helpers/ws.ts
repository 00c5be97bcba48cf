import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** A graphql-ws client on 127.0.0.1 that collects results of one subscription. */
export function subscribe(httpUrl: string, token: string | undefined, query: string, variables: Record<string, unknown> = {}) {
  const client: Client = createClient({
    url: httpUrl.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
  });
  const results: any[] = [];
  const errors: any[] = [];
  let resolveFirst: () => void;
  const first = new Promise<void>((r) => (resolveFirst = r));
  const waiters: { pred: (r: any[]) => boolean; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters])
      if (w.pred(results)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  const done = new Promise<void>((resolve) => {
    client.subscribe(
      { query, variables },
      {
        next: (v) => {
          if (v.errors) errors.push(...v.errors);
          if (v.data) results.push(v.data);
          resolveFirst();
          check();
        },
        error: (e) => {
          errors.push(...(Array.isArray(e) ? e : [e]));
          resolveFirst();
          resolve();
        },
        complete: () => resolve(),
      },
    );
  });
  return {
    results,
    errors,
    first,
    done,
    until(pred: (r: any[]) => boolean, timeoutMs = 10_000): Promise<void> {
      if (pred(results)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`timed out; got ${JSON.stringify(results).slice(0, 500)} errors ${JSON.stringify(errors).slice(0, 300)}`)),
          timeoutMs,
        );
        waiters.push({ pred, resolve: () => (clearTimeout(t), resolve()) });
      });
    },
    close: () => client.dispose(),
  };
}
