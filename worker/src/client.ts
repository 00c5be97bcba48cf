/**
 * The worker's only way out: HTTPS/HTTP requests to the API with its token (outbound
 * connections only). Transport failures (refused, reset, 5xx, 429) are retried with
 * exponential backoff and jitter until `signal` aborts; a GraphQL error is not retried.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export class TransportError extends Error {
  constructor(
    message: string,
    /** The server's Retry-After, when it answered 503 with one (its database is restarting). */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

/**
 * A 5xx or 429 answer as a TransportError (retried). A 503's Retry-After (the API's database
 * is restarting: it answers, it cannot serve yet) is kept, so the retry comes when the server
 * said rather than after an exponential backoff grown during the outage (up to 10 s, longer
 * than a short lease).
 */
function httpTransportError(res: Response): TransportError | null {
  return statusTransportError(res.status, res.headers.get('retry-after'));
}

function statusTransportError(status: number, retryAfter: string | null): TransportError | null {
  if (status < 500 && status !== 429) return null;
  const sec = retryAfter === null ? NaN : Number(retryAfter);
  return new TransportError(`HTTP ${status}`, Number.isFinite(sec) && sec >= 0 ? Math.min(sec, 60) * 1000 : null);
}

/**
 * PUTs a file's bytes, streamed from disk with node:http(s). Not fetch with a web-stream body: on
 * Node 20 that took a 128 MiB output 3.67 s to a local API against 2.92 s this way, and 1.83 s
 * against 1.26 s in a quieter moment (means of 4 alternating rounds, each with its sha256 pass, on a
 * 2-core machine at load average 14, then 6.5: bench/uploadProbe.ts) — time the user waits between
 * the program's end and the job's.
 * Answers the status, Retry-After and (for an error) the body's start; a connection that breaks
 * before any answer is a TransportError (retried).
 */
function putFile(
  url: string,
  file: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<{ status: number; retryAfter: string | null; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const fail = (err: Error) => reject(new TransportError(err.message));
    let answer: { status: number; retryAfter: string | null; body: string } | undefined;
    const answered = () => resolve(answer!);
    const req = (u.protocol === 'https:' ? https : http).request(u, { method: 'PUT', headers, ...(signal ? { signal } : {}) }, (res) => {
      const ra = res.headers['retry-after'];
      answer = { status: res.statusCode ?? 0, retryAfter: typeof ra === 'string' ? ra : null, body: '' };
      res.setEncoding('utf8');
      res.on('data', (c: string) => (answer!.body = (answer!.body + c).slice(0, 2000)));
      res.on('end', answered);
      res.on('close', answered);
    });
    // An answer before the whole body went (a refusal) may break the request: the answer is what counts.
    req.on('error', (err) => (answer ? answered() : fail(err)));
    const src = createReadStream(file, { highWaterMark: 1024 * 1024 });
    src.on('error', (err) => (req.destroy(), reject(err)));
    req.on('close', () => src.destroy()); // an aborted or refused request: the file is not read on
    src.pipe(req);
  });
}

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

export class ApiClient {
  private readonly printed = new WeakMap<object, string>();
  /** Called when the API becomes unreachable or reachable again. */
  onConnectivity?: (up: boolean) => void;
  private up = true;

  constructor(
    readonly server: string,
    readonly token: string,
    private readonly log: Logger,
  ) {}

  private setUp(up: boolean) {
    if (up !== this.up) {
      this.up = up;
      this.log[up ? 'info' : 'warn'](up ? 'API reachable again.' : `API unreachable (${this.server}); retrying with backoff.`);
      this.onConnectivity?.(up);
    }
  }

  /**
   * Retries `fn` on TransportError with backoff (100 ms → 10 s; a 503's Retry-After when the
   * server gave one) until it succeeds or `signal` aborts.
   */
  async withRetry<T>(fn: () => Promise<T>, opts: { signal?: AbortSignal; retry?: boolean } = {}): Promise<T> {
    let delay = 100;
    for (;;) {
      try {
        const r = await fn();
        this.setUp(true);
        return r;
      } catch (err) {
        if (!(err instanceof TransportError) || opts.retry === false || opts.signal?.aborted) throw err;
        this.setUp(false);
        const wait = err.retryAfterMs ?? delay;
        await sleep(wait + Math.random() * wait * 0.3, opts.signal);
        if (err.retryAfterMs === null) delay = Math.min(delay * 2, 10_000);
      }
    }
  }

  async request<R, V>(
    doc: TypedDocumentNode<R, V>,
    variables: V,
    opts: { signal?: AbortSignal; retry?: boolean; timeoutMs?: number } = {},
  ): Promise<R> {
    let query = this.printed.get(doc as object);
    if (!query) this.printed.set(doc as object, (query = print(doc)));
    return this.withRetry(async () => {
      let res: Response;
      const timeout = AbortSignal.timeout(opts.timeoutMs ?? 60_000);
      try {
        res = await fetch(`${this.server}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
          body: JSON.stringify({ query, variables }),
          signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
        });
      } catch (err) {
        throw new TransportError((err as Error).message);
      }
      const transport = httpTransportError(res);
      if (transport) throw transport;
      let body: { data?: R; errors?: { message: string; extensions?: { code?: string } }[] };
      try {
        body = (await res.json()) as typeof body;
      } catch (err) {
        throw new TransportError(`bad response: ${(err as Error).message}`);
      }
      if (body.errors?.length) {
        const e = body.errors[0]!;
        throw new ApiError(e.message, e.extensions?.code ?? 'ERROR');
      }
      return body.data as R;
    }, opts);
  }

  /**
   * Downloads a blob into `dest` (atomically: a `.part` file renamed into place), verifying
   * its sha256. A transfer that breaks off resumes where it stopped (`Range: bytes=N-`, the
   * API answers 206), so a big checkpoint is not fetched again from the start; a server that
   * answers the whole blob instead (200) restarts it. The API may redirect a large blob to a
   * presigned URL of its object store; fetch follows it (dropping the token: another origin).
   */
  async download(sha256: string, dest: string, signal?: AbortSignal): Promise<void> {
    await mkdir(path.dirname(dest), { recursive: true });
    const tmp = `${dest}.${process.pid}.part`;
    await rm(tmp, { force: true });
    let have = 0;
    let hash = createHash('sha256');
    let broken = false;
    try {
      await this.withRetry(
        async () => {
          if (broken) {
            // What reached the disk before the break (a write in flight may not have): rehash it.
            broken = false;
            have = await stat(tmp).then(
              (s) => s.size,
              () => 0,
            );
            hash = createHash('sha256');
            if (have > 0) for await (const c of createReadStream(tmp, { end: have - 1 })) hash.update(c as Buffer);
          }
          let res: Response;
          try {
            res = await fetch(`${this.server}/blobs/${sha256}`, {
              headers: { authorization: `Bearer ${this.token}`, ...(have > 0 ? { range: `bytes=${have}-` } : {}) },
              ...(signal ? { signal } : {}),
            });
          } catch (err) {
            throw new TransportError((err as Error).message);
          }
          const transport = httpTransportError(res);
          if (transport) throw transport;
          if (!res.ok || !res.body) throw new ApiError(`download of ${sha256} failed: HTTP ${res.status}`, 'DOWNLOAD_FAILED');
          if (have > 0 && res.status !== 206) {
            have = 0;
            hash = createHash('sha256');
          }
          const tap = new Transform({ transform: (c: Buffer, _e, cb) => (hash.update(c), cb(null, c)) });
          try {
            await pipeline(Readable.fromWeb(res.body as never), tap, createWriteStream(tmp, { flags: have > 0 ? 'a' : 'w' }));
          } catch (err) {
            broken = true;
            throw new TransportError((err as Error).message);
          }
          if (hash.digest('hex') !== sha256) {
            await rm(tmp, { force: true });
            have = 0;
            hash = createHash('sha256');
            throw new TransportError(`blob ${sha256} arrived corrupted`);
          }
        },
        signal ? { signal } : {},
      );
      await rename(tmp, dest);
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /**
   * Uploads a file as a blob; returns its sha256 and size. An output names its attempt
   * (`X-ChatGPU-Attempt`): the API accepts as an attempt's outputs only blobs uploaded so.
   */
  async upload(file: string, signal?: AbortSignal, attemptId?: string): Promise<{ sha256: string; size: number }> {
    const hash = createHash('sha256');
    await pipeline(createReadStream(file), hash);
    const sha256 = hash.digest('hex');
    const size = (await stat(file)).size;
    await this.withRetry(
      async () => {
        const res = await putFile(
          `${this.server}/blobs/${sha256}`,
          file,
          {
            authorization: `Bearer ${this.token}`,
            'content-type': 'application/octet-stream',
            'content-length': String(size),
            ...(attemptId ? { 'x-chatgpu-attempt': attemptId } : {}),
          },
          signal,
        );
        const transport = statusTransportError(res.status, res.retryAfter);
        if (transport) throw transport;
        if (res.status >= 300)
          throw new ApiError(`upload of ${path.basename(file)} failed: HTTP ${res.status} ${res.body}`, 'UPLOAD_FAILED');
      },
      signal ? { signal } : {},
    );
    return { sha256, size };
  }
}
