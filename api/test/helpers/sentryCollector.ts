import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

export const SENTRY_TOKEN = 'sntryu_test_token';
export const SENTRY_ORG = 'chatgpu-test';

/**
 * A local Sentry on 127.0.0.1, both halves:
 *   - ingest: accepts envelopes at /api/<project>/envelope/ as the real @sentry/node
 *     transport sends them and parses their items;
 *   - the web API the supervisor's search_logs reads: GET /api/0/organizations/<org>/events/
 *     ?dataset=ourlogs&field=…&query=… (Bearer token) answers from the `log` items collected,
 *     matching `key:value` attribute terms and `message:"*text*"`, newest first, with the
 *     requested fields — Sentry's Explore answer shape ({ data, meta }).
 * `setDown(true)` makes the API answer 503 (ingest keeps collecting), as an outage would.
 */
export async function startSentryCollector() {
  const items: EnvelopeItem[] = [];
  const apiCalls: URL[] = [];
  let down = false;
  const logs = (): SentLog[] => items.filter((i) => i.header.type === 'log').flatMap((i) => i.payload?.items ?? []);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === `/api/0/organizations/${SENTRY_ORG}/events/`) {
      apiCalls.push(url);
      if (down) return void res.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
      if (req.headers.authorization !== `Bearer ${SENTRY_TOKEN}`) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":"Invalid token"}');
      if (url.searchParams.get('dataset') !== 'ourlogs') return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"detail":"only ourlogs here"}');
      const fields = url.searchParams.getAll('field');
      const match = parseQuery(url.searchParams.get('query') ?? '');
      const limit = Number(url.searchParams.get('per_page') ?? 100);
      const rows = logs()
        .filter(match)
        .sort((a, b) => b.timestamp - a.timestamp)
        .slice(0, limit)
        .map((l) => Object.fromEntries(fields.map((f) => [f, fieldOf(l, f)])));
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: rows, meta: { fields: Object.fromEntries(fields.map((f) => [f, 'string'])) } }));
    }
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
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
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  return {
    dsn: `http://publickey@127.0.0.1:${port}/42`,
    /** The API's settings for this fake (SENTRY_API_URL …). */
    apiEnv: { SENTRY_API_URL: `http://127.0.0.1:${port}`, SENTRY_AUTH_TOKEN: SENTRY_TOKEN, SENTRY_ORG, SENTRY_PROJECT: '42' },
    items,
    logs,
    /** Every span sent, streamed (span v2 items, as the API sends them) or inside a transaction, with plain attribute values. */
    spans: (): { name: string; attributes: Record<string, unknown> }[] => [
      ...items
        .filter((i) => i.header.type === 'span')
        .flatMap((i) => (i.payload?.items ?? []) as { name: string; attributes?: Record<string, { value: unknown }> }[])
        .map((sp) => ({ name: sp.name, attributes: Object.fromEntries(Object.entries(sp.attributes ?? {}).map(([k, v]) => [k, v.value])) })),
      ...items.filter((i) => i.header.type === 'transaction').map((i) => ({ name: i.payload.transaction as string, attributes: (i.payload.contexts?.trace?.data ?? {}) as Record<string, unknown> })),
    ],
    apiCalls,
    setDown: (d: boolean) => void (down = d),
  };
}

function fieldOf(l: SentLog, f: string): unknown {
  if (f === 'timestamp') return new Date(l.timestamp * 1000).toISOString();
  if (f === 'message') return l.body;
  if (f === 'severity') return l.level;
  return l.attributes?.[f]?.value ?? null;
}

/** `key:value` terms (attributes) and `message:"*text*"` (a case-insensitive substring), ANDed. */
function parseQuery(q: string): (l: SentLog) => boolean {
  const terms = [...q.matchAll(/(\w+):("(?:[^"\\]|\\.)*"|\S+)/g)].map(([, k, v]) => [k!, v!.startsWith('"') ? JSON.parse(v!) as string : v!] as const);
  return (l) =>
    terms.every(([k, v]) => {
      if (k === 'message') return l.body.toLowerCase().includes(v.replace(/^\*|\*$/g, '').toLowerCase());
      return String(l.attributes?.[k]?.value ?? '') === v;
    });
}
