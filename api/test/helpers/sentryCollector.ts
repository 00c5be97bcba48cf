import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll } from 'vitest';

export interface EnvelopeItem {
  header: Record<string, any>;
  payload: any;
}

/**
 * A local Sentry collector on 127.0.0.1: accepts envelopes at /api/<project>/envelope/
 * as the real @sentry/node transport sends them and parses their items.
 */
export async function startSentryCollector() {
  const items: EnvelopeItem[] = [];
  const server = createServer((req, res) => {
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
  return { dsn: `http://publickey@127.0.0.1:${port}/42`, items };
}
