/**
 * ApiClient.download against a real HTTP server on 127.0.0.1 that breaks transfers off the way
 * a lost connection does: the download resumes with a Range request instead of starting over,
 * restarts when the server ignores the range, and retries a corrupted transfer; a 503 with
 * Retry-After (the API's database restarting) is retried when the server says.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient, TransportError } from './client.js';

const blob = randomBytes(3 * 1024 * 1024 + 17);
const sha = createHash('sha256').update(blob).digest('hex');
const dir = await mkdtemp(path.join(tmpdir(), 'client-download-'));

type Plan = (req: IncomingMessage, res: ServerResponse, n: number) => void;
let plan: Plan = () => {};
const seen: { range: string | undefined; auth: string | undefined }[] = [];
let sent = 0;
const server = createServer((req, res) => {
  seen.push({ range: req.headers.range, auth: req.headers.authorization });
  plan(req, res, seen.length);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await rm(dir, { recursive: true, force: true });
});

/** Sends `bytes` as the body (counting them), then either ends or cuts the connection. */
function send(res: ServerResponse, status: number, headers: Record<string, string | number>, bytes: Buffer, cutAfter?: number) {
  res.writeHead(status, headers);
  const part = cutAfter === undefined ? bytes : bytes.subarray(0, cutAfter);
  sent += part.length;
  res.write(part, () => {
    if (cutAfter === undefined) res.end();
    else setTimeout(() => res.socket?.destroy(), 50);
  });
}

/** The API's answer to a GET with an optional `Range: bytes=N-`. */
function serve(req: IncomingMessage, res: ServerResponse, cutAfter?: number) {
  const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  const start = m ? Number(m[1]) : 0;
  const body = blob.subarray(start);
  if (m)
    send(res, 206, { 'content-length': body.length, 'content-range': `bytes ${start}-${blob.length - 1}/${blob.length}` }, body, cutAfter);
  else send(res, 200, { 'content-length': blob.length }, body, cutAfter);
}

const quiet = { info: () => {}, warn: () => {} };

async function download(name: string) {
  seen.length = 0;
  sent = 0;
  const dest = path.join(dir, name);
  await new ApiClient(url, 'cgw_test', quiet).download(sha, dest, AbortSignal.timeout(30_000));
  expect((await readFile(dest)).equals(blob)).toBe(true);
  expect((await readdir(dir)).filter((f) => f.endsWith('.part'))).toEqual([]);
}

describe('ApiClient.download', () => {
  it('resumes a broken transfer where it stopped (Range) instead of starting over', async () => {
    plan = (req, res, n) => serve(req, res, n === 1 ? 2 * 1024 * 1024 : n === 2 ? 512 * 1024 : undefined);
    await download('resumed.bin');
    expect(seen.length).toBe(3);
    expect(seen[0]!.range).toBeUndefined();
    expect(seen[1]!.range).toMatch(/^bytes=\d+-$/);
    expect(Number(seen[2]!.range!.slice(6, -1))).toBeGreaterThan(Number(seen[1]!.range!.slice(6, -1)));
    expect(seen.every((s) => s.auth === 'Bearer cgw_test')).toBe(true);
    // Bytes the server wrote before a cut may never arrive; a restart from zero would cost
    // the 2 MiB of the first transfer again, on top of the whole blob.
    expect(sent).toBeLessThan(blob.length + 2 * 1024 * 1024);
  });

  it('starts over when the server answers a range with the whole blob (200)', async () => {
    plan = (req, res, n) => (n === 1 ? serve(req, res, 1024 * 1024) : send(res, 200, { 'content-length': blob.length }, blob));
    await download('restarted.bin');
    expect(seen.length).toBe(2);
    expect(seen[1]!.range).toMatch(/^bytes=/);
  });

  it('retries a transfer whose bytes do not hash to the blob name, keeping nothing of it', async () => {
    const bad = Buffer.from(blob);
    bad[12345] = bad[12345]! ^ 0xff;
    plan = (req, res, n) => (n === 1 ? send(res, 200, { 'content-length': bad.length }, bad) : serve(req, res));
    await download('verified.bin');
    expect(seen.map((s) => s.range)).toEqual([undefined, undefined]);
  });
});

describe('ApiClient retries', () => {
  const doc = parse('query { ok }') as TypedDocumentNode<{ ok: boolean }, Record<string, never>>;

  it("waits what a 503's Retry-After says instead of an exponential backoff grown during the outage", async () => {
    // 12 answers "503, retry after 0 s" (the API's database restarting), then the answer. The
    // exponential backoff alone (100 ms doubling to 10 s) would wait over a minute for these.
    plan = (_req, res, n) => {
      if (n <= 12) {
        res.writeHead(503, { 'retry-after': '0', 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ errors: [{ message: 'The database is unavailable', extensions: { code: 'UNAVAILABLE' } }] }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { ok: true } }));
    };
    seen.length = 0;
    const r = await new ApiClient(url, 'cgw_test', quiet).request(doc, {}, { signal: AbortSignal.timeout(30_000) });
    expect(r).toEqual({ ok: true });
    expect(seen.length).toBe(13);
  }, 15_000);

  it('without a Retry-After a 503 is retried with the backoff, and an abort ends the retries', async () => {
    plan = (_req, res) => {
      res.writeHead(503);
      res.end();
    };
    seen.length = 0;
    const err = await new ApiClient(url, 'cgw_test', quiet)
      .request(doc, {}, { signal: AbortSignal.timeout(1_000) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).retryAfterMs).toBeNull();
    // 100, 200, 400 ms … within one second: a handful of tries, not a busy loop.
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.length).toBeLessThan(10);
  });
});

describe('ApiClient.upload', () => {
  /** Collects a PUT's body, then answers with `status` (and for the n-th request, what `answer` says). */
  const receive =
    (answer: (n: number, body: Buffer, req: IncomingMessage, res: ServerResponse) => void): Plan =>
    (req, res, n) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => answer(n, Buffer.concat(chunks), req, res));
    };
  const file = path.join(dir, 'output.bin');

  it('streams the file to /blobs/<sha256> with its length, token and attempt, and answers its sha256', async () => {
    await (await import('node:fs/promises')).writeFile(file, blob);
    const got: { url?: string; body?: Buffer; headers?: IncomingMessage['headers'] } = {};
    plan = receive((_n, body, req, res) => {
      Object.assign(got, { url: req.url, body, headers: req.headers, method: req.method });
      res.writeHead(201).end();
    });
    seen.length = 0;
    const r = await new ApiClient(url, 'cgw_test', quiet).upload(file, AbortSignal.timeout(30_000), 'attempt-1');
    expect(r).toEqual({ sha256: sha, size: blob.length });
    expect(got.url).toBe(`/blobs/${sha}`);
    expect(got.body!.equals(blob)).toBe(true);
    expect(got.headers!['content-length']).toBe(String(blob.length));
    expect(got.headers!.authorization).toBe('Bearer cgw_test');
    expect(got.headers!['x-chatgpu-attempt']).toBe('attempt-1');
  });

  it('retries a 503 and a connection cut mid-body, then succeeds; a refusal (4xx) is an error with its reason, not retried', async () => {
    plan = (req, res, n) => {
      if (n === 1) return void (res.writeHead(503, { 'retry-after': '0' }), res.end());
      if (n === 2) return void req.once('data', () => req.socket.destroy());
      receive((_m, body, _req, r) => r.writeHead(body.equals(blob) ? 201 : 400).end())(req, res, n);
    };
    seen.length = 0;
    await new ApiClient(url, 'cgw_test', quiet).upload(file, AbortSignal.timeout(30_000));
    expect(seen.length).toBe(3);

    // A refusal is an answer, not a transport failure: it ends the upload with its reason.
    plan = receive((_n, _body, _req, res) => res.writeHead(413).end('Blob too large'));
    seen.length = 0;
    const err = await new ApiClient(url, 'cgw_test', quiet).upload(file, AbortSignal.timeout(30_000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { code?: string }).code).toBe('UPLOAD_FAILED');
    expect((err as Error).message).toMatch(/HTTP 413 Blob too large/);
    expect(seen.length).toBe(1);
  });
});
