import { Worker } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';
import { afterAll } from 'vitest';

export interface EnvelopeItem {
  header: Record<string, any>;
  payload: any;
}

/** One structured log as the SDK sent it (an element of a `log` item's `items`). */
export interface SentLog {
  timestamp: number;
  level: string;
  body: string;
  attributes: Record<string, { value: unknown; type: string }>;
}

interface ProxiedRequest {
  id: number;
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
}
interface ProxiedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The collector's HTTP server: hands each request (its body read) to the test's thread and writes back its answer. */
const PROXY = `
const { parentPort } = require('node:worker_threads');
const { createServer } = require('node:http');
let next = 1;
const waiting = new Map();
parentPort.on('message', (m) => {
  const res = waiting.get(m.id);
  if (!res) return;
  waiting.delete(m.id);
  res.writeHead(m.status, m.headers).end(m.body);
});
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const id = next++;
    waiting.set(id, res);
    parentPort.postMessage({ id, method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
`;

export const SENTRY_TOKEN = 'sntryu_test_token';
export const SENTRY_ORG = 'chatgpu-test';

/** One error event as the SDK sent it (an `event` item's payload). */
export interface SentError {
  event_id: string;
  timestamp: number;
  level?: string;
  message?: string | { formatted?: string; message?: string };
  exception?: { values?: { type?: string; value?: string }[] };
  tags?: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

/**
 * A local Sentry on 127.0.0.1, both halves:
 *   - ingest: accepts envelopes at /api/<project>/envelope/ as the real @sentry/node
 *     transport sends them and parses their items;
 *   - the web API the supervisor's search_logs reads: GET /api/0/organizations/<org>/events/
 *     ?field=…&query=… (Bearer token), Sentry's Discover/Explore answer shape ({ data, meta }),
 *     newest first, with the requested fields:
 *       dataset=ourlogs answers from the `log` items collected, matching `key:value` terms
 *       against attributes and `message:"*text*"` against the body;
 *       dataset=errors answers from the `event` items (error events), matching `key:value`
 *       terms against tags and `message:"*text*"` against the message and title; `title` is
 *       Sentry's ("Type: value" of the exception), `id` the event id, a tag is its own field.
 * `setDown(true)` makes the API answer 503 (ingest keeps collecting), as an outage would;
 * `setDown('errors')` only the queries of that dataset.
 */
export async function startSentryCollector() {
  const items: EnvelopeItem[] = [];
  const apiCalls: URL[] = [];
  let down: boolean | 'ourlogs' | 'errors' = false;
  const logs = (): SentLog[] => items.filter((i) => i.header.type === 'log').flatMap((i) => i.payload?.items ?? []);
  const errors = (): SentError[] => items.filter((i) => i.header.type === 'event' && i.payload).map((i) => i.payload as SentError);
  const rowsOf = (dataset: string | null): Row[] | null =>
    dataset === 'ourlogs' ? logs().map(logRow) : dataset === 'errors' ? errors().map(errorRow) : null;
  /** One request, answered here from what was collected (the thread below only carries it). */
  const handle = (req: ProxiedRequest): ProxiedResponse => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const json = (status: number, body: unknown): ProxiedResponse => ({
      status,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (req.method === 'GET' && url.pathname === `/api/0/organizations/${SENTRY_ORG}/events/`) {
      apiCalls.push(url);
      if (down === true || down === url.searchParams.get('dataset'))
        return { status: 503, headers: { 'content-type': 'text/plain' }, body: 'Service Unavailable' };
      if (req.headers.authorization !== `Bearer ${SENTRY_TOKEN}`) return json(401, { detail: 'Invalid token' });
      const all = rowsOf(url.searchParams.get('dataset'));
      if (!all) return json(400, { detail: 'only ourlogs and errors here' });
      const fields = url.searchParams.getAll('field');
      const match = parseQuery(url.searchParams.get('query') ?? '');
      const limit = Number(url.searchParams.get('per_page') ?? 100);
      const start = url.searchParams.get('start') ? Date.parse(url.searchParams.get('start')!) / 1000 : -Infinity;
      const end = url.searchParams.get('end') ? Date.parse(url.searchParams.get('end')!) / 1000 : Infinity;
      const rows = all
        .filter((r) => r.timestamp >= start && r.timestamp <= end && match(r))
        .sort((a, b) => b.timestamp - a.timestamp)
        .slice(0, limit)
        .map((r) => Object.fromEntries(fields.map((f) => [f, r.field(f)])));
      return json(200, { data: rows, meta: { fields: Object.fromEntries(fields.map((f) => [f, 'string'])) } });
    }
    let body = Buffer.from(req.body);
    if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
    const lines = body.toString('utf8').split('\n');
    for (let i = 1; i + 1 < lines.length + 1; i += 2) {
      if (!lines[i]) continue;
      try {
        items.push({ header: JSON.parse(lines[i]!), payload: lines[i + 1] ? JSON.parse(lines[i + 1]!) : null });
      } catch {
        /* binary attachment: ignore */
      }
    }
    return json(200, {});
  };
  // The HTTP server runs in a thread of its own, where no Sentry client is: in this process the
  // API's client traces every incoming request, and tracing the collector's own would send a span
  // per envelope received, which sends an envelope… until the client's queue overflows and drops
  // what the tests look for.
  const thread = new Worker(PROXY, { eval: true });
  thread.on('message', (m: ProxiedRequest | { port: number }) => void ('id' in m && thread.postMessage({ id: m.id, ...handle(m) })));
  const port = await new Promise<number>((resolve, reject) => {
    thread.once('message', (m: { port?: number }) => (m.port ? resolve(m.port) : reject(new Error('no port'))));
    thread.once('error', reject);
  });
  afterAll(async () => void (await thread.terminate()));
  return {
    dsn: `http://publickey@127.0.0.1:${port}/42`,
    /** The API's settings for this fake (SENTRY_API_URL …). */
    apiEnv: { SENTRY_API_URL: `http://127.0.0.1:${port}`, SENTRY_AUTH_TOKEN: SENTRY_TOKEN, SENTRY_ORG, SENTRY_PROJECT: '42' },
    items,
    logs,
    /** Every error event sent (`event` items). */
    errors,
    /** Every span sent, streamed (span v2 items, as the API sends them) or inside a transaction, with plain attribute values. */
    spans: (): { name: string; attributes: Record<string, unknown> }[] => [
      ...items
        .filter((i) => i.header.type === 'span')
        .flatMap((i) => (i.payload?.items ?? []) as { name: string; attributes?: Record<string, { value: unknown }> }[])
        .map((sp) => ({
          name: sp.name,
          attributes: Object.fromEntries(Object.entries(sp.attributes ?? {}).map(([k, v]) => [k, v.value])),
        })),
      ...items
        .filter((i) => i.header.type === 'transaction')
        .map((i) => ({
          name: i.payload.transaction as string,
          attributes: (i.payload.contexts?.trace?.data ?? {}) as Record<string, unknown>,
        })),
    ],
    apiCalls,
    /** true: the whole web API answers 503; a dataset's name: only that dataset's queries do. */
    setDown: (d: boolean | 'ourlogs' | 'errors') => void (down = d),
  };
}

/** A collected log or error event as the web API sees it: its time, its searchable text, its fields. */
interface Row {
  timestamp: number;
  text: string[];
  /** A `key:value` term's key (an attribute of a log, a tag of an error event). */
  key(k: string): string;
  field(f: string): unknown;
}

function logRow(l: SentLog): Row {
  const attr = (k: string) => l.attributes?.[k]?.value ?? null;
  return {
    timestamp: l.timestamp,
    text: [l.body],
    key: (k) => String(attr(k) ?? ''),
    field: (f) =>
      f === 'timestamp' ? new Date(l.timestamp * 1000).toISOString() : f === 'message' ? l.body : f === 'severity' ? l.level : attr(f),
  };
}

function errorRow(e: SentError): Row {
  const ex = e.exception?.values?.at(-1);
  const message = typeof e.message === 'string' ? e.message : (e.message?.formatted ?? e.message?.message ?? '');
  const title = ex ? `${ex.type ?? 'Error'}: ${ex.value ?? ''}` : message || '<unlabeled event>';
  const tag = (k: string) => (e.tags?.[k] === undefined || e.tags?.[k] === null ? null : String(e.tags[k]));
  const fields: Record<string, unknown> = {
    id: e.event_id,
    timestamp: new Date(e.timestamp * 1000).toISOString(),
    title,
    message: message || title,
    level: e.level ?? 'error',
  };
  return {
    timestamp: e.timestamp,
    text: [message, title],
    key: (k) => String(k in fields && k !== 'message' ? fields[k] : (tag(k) ?? '')),
    field: (f) => (f in fields ? fields[f] : tag(f)),
  };
}

/** `key:value` terms (attributes or tags) and `message:"*text*"` (a case-insensitive substring), ANDed. */
function parseQuery(q: string): (r: Row) => boolean {
  const terms = [...q.matchAll(/(\w+):("(?:[^"\\]|\\.)*"|\S+)/g)].map(
    ([, k, v]) => [k!, v!.startsWith('"') ? (JSON.parse(v!) as string) : v!] as const,
  );
  return (r) =>
    terms.every(([k, v]) => {
      if (k === 'message') return r.text.some((t) => t.toLowerCase().includes(v.replace(/^\*|\*$/g, '').toLowerCase()));
      return r.key(k) === v;
    });
}
