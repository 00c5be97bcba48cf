/**
 * The `chatgpu` command's only way to the server: the public API. GraphQL over HTTP
 * with a Bearer token, graphql-ws subscriptions on the same /graphql path (the token
 * in connectionParams), and content-addressed blobs at /blobs/<sha256>.
 *
 * Outages are waited out, not passed on: a call that meets connection refused/reset,
 * HTTP 502/503/504 or a GraphQL UNAVAILABLE error is sent again after a backoff (the
 * server's Retry-After when it gives one), printing one line per wait, until the API
 * has been unavailable for `retry.forMs` (shared by concurrent calls: one outage, one
 * clock); then one clear error. What is sent again:
 * - queries, blob downloads and blob uploads (content-addressed: an upload of bytes
 *   already stored is a no-op), and mutations the caller marks `idempotent` (a repeat
 *   changes nothing: cancelJob, answerQuestion — the repeat is refused as already done);
 * - any other mutation only when the request never reached the server (connection
 *   refused, DNS not answering); when it may have been applied (reset mid-request, a
 *   503 answer), the call fails with MaybeAppliedError so the caller can look before
 *   sending it again (submit.ts does this for createJob, which the server does not dedupe).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** An error the user should see as one sentence (no stack). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export interface GraphQLErrorShape {
  message: string;
  extensions?: { code?: string; [k: string]: unknown };
}

/** A GraphQL error answer (not a transport failure). */
export class ApiError extends CliError {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const NET_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'timed out',
  UND_ERR_SOCKET: 'connection closed',
};

/** Network failures worth waiting out (the API restarting, a proxy in between restarting). */
const TRANSIENT_NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EAI_AGAIN', 'UND_ERR_SOCKET']);
/** Of those, the ones where no byte of the request reached the server. */
const UNSENT_NET_CODES = new Set(['ECONNREFUSED', 'EAI_AGAIN']);

/** The first Node/undici error code in an error's cause chain. */
function netCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (/^E[A-Z_]+$/.test(code) || code.startsWith('UND_ERR_'))) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Why a fetch() failed at the network level, in a few words; null when it did not. */
export function networkReason(err: unknown): string | null {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: string }).code;
    if (code && NET_CODES[code]) return NET_CODES[code]!;
    if (code && /^E[A-Z]+$/.test(code)) return code;
    if ((e as Error).name === 'TimeoutError') return 'timed out';
    e = (e as { cause?: unknown }).cause;
  }
  if (err instanceof TypeError && /fetch failed/i.test(err.message)) return 'network error';
  return null;
}

/** A failure that may clear by itself: the API or its database is restarting or unreachable. */
class TransientError extends Error {
  constructor(
    /** In a few words, for the wait line ("connection refused", "the database is unavailable", "HTTP 502"). */
    readonly reason: string,
    /** Whether the request may have reached the server (and been applied). */
    readonly sent: boolean,
    /** The server's Retry-After, when it gave one. */
    readonly retryAfterMs: number | null = null,
    /** The underlying network failure (no HTTP answer at all). */
    readonly network = false,
  ) {
    super(reason);
    this.name = 'TransientError';
  }
}

/**
 * A call that is not safe to repeat met an outage after it may have reached the server:
 * whether it was applied is unknown. The caller looks, then decides (submit.ts).
 */
export class MaybeAppliedError extends CliError {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'MaybeAppliedError';
  }
}

export interface RetryOptions {
  /** How long an outage is waited out before giving up (0: fail at once). */
  forMs: number;
  /** Prints a wait line (default: stderr). */
  notice?: (line: string) => void;
}

export const DEFAULT_RETRY_MS = 120_000;
const BACKOFF_MS = [1000, 2000, 4000, 8000];

function retryAfterMs(res: Response): number | null {
  const v = res.headers.get('retry-after');
  if (!v) return null;
  const sec = Number(v);
  if (Number.isFinite(sec) && sec >= 0) return sec * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
}

function seconds(ms: number): string {
  return ms >= 120_000 && ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${Math.round(ms / 1000)} s`;
}

export function unreachable(server: string, reason: string): CliError {
  return new CliError(
    `Cannot reach the ChatGPU server at ${server} (${reason}): start it with \`npm start\`, or point --server or CHATGPU_URL at a running one.`,
  );
}

export function sha256Hex(buf: Uint8Array): string {
  return createHash('sha256').update(buf).digest('hex');
}

export interface SubscriptionHandlers<T> {
  next(data: T): void;
  error(err: unknown): void;
  complete(): void;
}

export class ApiClient {
  private readonly retry: Required<RetryOptions>;
  /** When the current outage began (null: the last call got through). Shared by concurrent calls. */
  private outageSince: number | null = null;
  /** Concurrent calls waiting out the same outage print one line per wait, not one each. */
  private quietUntil = 0;

  /** Where the token came from, for error messages ("the token from ~/.config/…"). */
  constructor(
    readonly server: string,
    readonly token: string | null,
    readonly tokenSource = 'the token',
    retry: RetryOptions = { forMs: DEFAULT_RETRY_MS },
  ) {
    this.retry = { forMs: retry.forMs, notice: retry.notice ?? ((line) => void process.stderr.write(`${line}\n`)) };
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...extra };
  }

  /** One HTTP exchange; a transient network failure becomes TransientError, any other one the unreachable error. */
  private async send(url: string, init: RequestInit & { timeoutMs?: number }): Promise<Response> {
    const { timeoutMs = 60_000, ...rest } = init;
    try {
      return await fetch(url, { ...rest, signal: rest.signal ?? AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      const reason = networkReason(err);
      const code = netCode(err);
      if (reason && code && TRANSIENT_NET_CODES.has(code)) throw new TransientError(reason, !UNSENT_NET_CODES.has(code), null, true);
      if (reason) throw unreachable(this.server, reason);
      throw err;
    }
  }

  /** A response body; the connection failing while it arrives is transient like any other. */
  private async readText(res: Response): Promise<string> {
    try {
      return await res.text();
    } catch (err) {
      const code = netCode(err);
      if (code && TRANSIENT_NET_CODES.has(code)) throw new TransientError(networkReason(err) ?? code, true, null, true);
      throw err;
    }
  }

  /** 502/503/504: the API (or the proxy in front of it) is restarting, or its database is unavailable. */
  private async transientStatus(res: Response): Promise<TransientError | null> {
    if (res.status !== 502 && res.status !== 503 && res.status !== 504) return null;
    const text = await res.text().catch(() => '');
    let code: unknown;
    try {
      const b = JSON.parse(text) as { error?: { code?: string }; errors?: GraphQLErrorShape[] };
      code = b.error?.code ?? b.errors?.[0]?.extensions?.code;
    } catch {
      /* a proxy's HTML page */
    }
    return new TransientError(code === 'UNAVAILABLE' ? 'the database is unavailable' : `HTTP ${res.status}`, true, retryAfterMs(res));
  }

  /**
   * Runs `attempt` until it gets through, waiting out outages (see the header): a call
   * that is not `idempotent` is sent again only when it never reached the server.
   */
  private async withRetry<T>(what: string, idempotent: boolean, attempt: () => Promise<T>): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        const value = await attempt();
        this.outageSince = null;
        return value;
      } catch (err) {
        if (!(err instanceof TransientError)) throw err;
        const now = Date.now();
        this.outageSince ??= now;
        if (!idempotent && err.sent) {
          throw new MaybeAppliedError(
            `The API became unavailable (${err.reason}) during ${what}; it may or may not have been applied.`,
            err.reason,
          );
        }
        const remaining = this.retry.forMs - (now - this.outageSince);
        if (remaining <= 0) throw this.gaveUp(err);
        const waitMs = Math.min(remaining, Math.max(err.retryAfterMs ?? 0, BACKOFF_MS[Math.min(i, BACKOFF_MS.length - 1)]!));
        if (now >= this.quietUntil) {
          this.retry.notice(`API unavailable (${err.reason}); retrying in ${Math.max(1, Math.round(waitMs / 1000))}s`);
          this.quietUntil = now + waitMs;
        }
        await new Promise((r) => setTimeout(r, waitMs));
      }
    }
  }

  private gaveUp(err: TransientError): CliError {
    const waited = this.retry.forMs > 0 ? ` (waited ${seconds(this.retry.forMs)}; CHATGPU_RETRY_SEC sets how long)` : '';
    if (err.network) {
      return new CliError(
        `Cannot reach the ChatGPU server at ${this.server} (${err.reason})${waited}: start it with \`npm start\`, or point --server or CHATGPU_URL at a running one.`,
      );
    }
    return new CliError(`The ChatGPU server at ${this.server} is unavailable (${err.reason})${waited}; try again later.`);
  }

  /**
   * Runs a query or mutation; GraphQL errors become ApiError with a clear message.
   * Queries wait out outages; a mutation does only with `idempotent` (else see MaybeAppliedError).
   */
  async gql<T = any>(query: string, variables: Record<string, unknown> = {}, opts: { idempotent?: boolean } = {}): Promise<T> {
    const idempotent = opts.idempotent ?? !/^\s*(#[^\n]*\n\s*)*mutation\b/.test(query);
    const name = /^\s*(?:query|mutation)\s+(\w+)/.exec(query)?.[1];
    return this.withRetry(name ? `the ${name} request` : 'the request', idempotent, async () => {
      const res = await this.send(`${this.server}/graphql`, {
        method: 'POST',
        headers: this.headers({ 'content-type': 'application/json', accept: 'application/json' }),
        body: JSON.stringify({ query, variables }),
      });
      const text = await this.readText(res);
      let body: { data?: T; errors?: GraphQLErrorShape[] };
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        if (res.status === 502 || res.status === 503 || res.status === 504)
          throw new TransientError(`HTTP ${res.status}`, true, retryAfterMs(res));
        throw new CliError(`The server at ${this.server} did not answer like a ChatGPU API (HTTP ${res.status} from /graphql).`);
      }
      const unavailable = body.errors?.find((e) => e.extensions?.code === 'UNAVAILABLE');
      if (unavailable) {
        const hint = Number(unavailable.extensions?.retryAfter);
        throw new TransientError('the database is unavailable', true, retryAfterMs(res) ?? (Number.isFinite(hint) ? hint * 1000 : null));
      }
      if (body.errors?.length) throw this.toApiError(body.errors);
      if (res.status === 502 || res.status === 503 || res.status === 504)
        throw new TransientError(`HTTP ${res.status}`, true, retryAfterMs(res));
      if (!res.ok || !body.data) throw new CliError(`The server at ${this.server} answered HTTP ${res.status} without data.`);
      return body.data;
    });
  }

  /**
   * Sends a mutation that is not safe to repeat, waiting out outages like any call: after
   * an outage that may have let it through, `applied()` (queries, which wait out the
   * outage themselves) looks for its effect; what it finds is the answer, else the
   * mutation is sent again — within the same bound as every other call.
   */
  async gqlOnce<T = any>(query: string, variables: Record<string, unknown>, applied: () => Promise<T | null>): Promise<T> {
    const started = Date.now();
    for (let i = 0; ; i++) {
      try {
        return await this.gql<T>(query, variables, { idempotent: false });
      } catch (err) {
        if (!(err instanceof MaybeAppliedError)) throw err;
        const found = await applied();
        if (found) return found;
        const remaining = this.retry.forMs - (Date.now() - started);
        if (remaining <= 0) throw this.gaveUp(new TransientError(err.reason, true));
        const waitMs = Math.min(remaining, BACKOFF_MS[Math.min(i, BACKOFF_MS.length - 1)]!);
        this.retry.notice(`API unavailable (${err.reason}); not applied; sending it again in ${Math.max(1, Math.round(waitMs / 1000))}s`);
        await new Promise((r) => setTimeout(r, waitMs));
      }
    }
  }

  toApiError(errors: readonly GraphQLErrorShape[]): ApiError {
    const first = errors[0]!;
    const code = first.extensions?.code;
    if (code === 'UNAUTHENTICATED') {
      return new ApiError(
        this.token
          ? `The server at ${this.server} rejected ${this.tokenSource}: run \`chatgpu login\`, or pass a valid --token or CHATGPU_TOKEN.`
          : `The server at ${this.server} needs a token: run \`chatgpu login\`, or pass --token or CHATGPU_TOKEN.`,
        code,
      );
    }
    return new ApiError(`The server refused: ${first.message}`, code);
  }

  /** Uploads bytes as a blob (the API is idempotent: an existing blob is fine). */
  /**
   * Uploads bytes as a blob, waiting out outages: the upload is whole or refused (the
   * server writes a temporary file and renames it), so sending it again restarts it cleanly.
   */
  async putBlob(bytes: Uint8Array, sha256 = sha256Hex(bytes)): Promise<string> {
    return this.withRetry(`the upload of blob ${sha256.slice(0, 12)}…`, true, async () => {
      const res = await this.send(`${this.server}/blobs/${sha256}`, {
        method: 'PUT',
        headers: this.headers({ 'content-type': 'application/octet-stream' }),
        body: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) as Uint8Array<ArrayBuffer>,
        timeoutMs: 30 * 60_000,
      });
      if (res.ok) {
        await res.arrayBuffer().catch(() => undefined);
        return sha256;
      }
      const transient = await this.transientStatus(res);
      if (transient) throw transient;
      const err = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      if (res.status === 401) throw this.toApiError([{ message: 'unauthenticated', extensions: { code: 'UNAUTHENTICATED' } }]);
      throw new CliError(`Uploading blob ${sha256.slice(0, 12)}… failed (HTTP ${res.status}): ${err?.error?.message ?? res.statusText}`);
    });
  }

  /** Downloads a blob and checks that its bytes hash to its name (waiting out outages). */
  async getBlob(sha256: string): Promise<Buffer> {
    return this.withRetry(`the download of blob ${sha256.slice(0, 12)}…`, true, async () => {
      const res = await this.send(`${this.server}/blobs/${sha256}`, { method: 'GET', headers: this.headers(), timeoutMs: 30 * 60_000 });
      if (res.status === 401) throw this.toApiError([{ message: 'unauthenticated', extensions: { code: 'UNAUTHENTICATED' } }]);
      const transient = await this.transientStatus(res);
      if (transient) throw transient;
      if (!res.ok) {
        const err = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
        throw new CliError(
          `Downloading blob ${sha256.slice(0, 12)}… failed (HTTP ${res.status}): ${err?.error?.message ?? res.statusText}`,
        );
      }
      let bytes: Buffer;
      try {
        bytes = Buffer.from(await res.arrayBuffer());
      } catch (err) {
        const code = netCode(err);
        if (code && TRANSIENT_NET_CODES.has(code)) throw new TransientError(networkReason(err) ?? code, true, null, true);
        throw err;
      }
      const got = sha256Hex(bytes);
      if (got !== sha256)
        throw new CliError(`Downloaded blob ${sha256.slice(0, 12)}… is corrupt (its bytes hash to ${got.slice(0, 12)}…).`);
      return bytes;
    });
  }

  /**
   * Streams a blob into the file `dest` (a `.part` file renamed into place once its bytes hash
   * to its name), waiting out outages like getBlob; a transfer that breaks off resumes where it
   * stopped (`Range: bytes=N-`), so a big checkpoint is never held in memory nor fetched twice.
   * Returns its size.
   */
  async downloadBlob(sha256: string, dest: string): Promise<number> {
    const tmp = `${dest}.part`;
    await rm(tmp, { force: true });
    let have = 0;
    let hash = createHash('sha256');
    let broken = false;
    try {
      const size = await this.withRetry(`the download of blob ${sha256.slice(0, 12)}…`, true, async () => {
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
        const res = await this.send(`${this.server}/blobs/${sha256}`, {
          method: 'GET',
          headers: this.headers(have > 0 ? { range: `bytes=${have}-` } : {}),
          timeoutMs: 6 * 3600_000,
        });
        if (res.status === 401) throw this.toApiError([{ message: 'unauthenticated', extensions: { code: 'UNAUTHENTICATED' } }]);
        const transient = await this.transientStatus(res);
        if (transient) throw transient;
        if (!res.ok || !res.body) {
          const err = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
          throw new CliError(
            `Downloading blob ${sha256.slice(0, 12)}… failed (HTTP ${res.status}): ${err?.error?.message ?? res.statusText}`,
          );
        }
        if (have > 0 && res.status !== 206) {
          have = 0;
          hash = createHash('sha256');
        }
        let received = have;
        const tap = new Transform({ transform: (c: Buffer, _e, cb) => (hash.update(c), (received += c.length), cb(null, c)) });
        try {
          await pipeline(Readable.fromWeb(res.body as never), tap, createWriteStream(tmp, { flags: have > 0 ? 'a' : 'w' }));
        } catch (err) {
          broken = true;
          throw new TransientError(networkReason(err) ?? netCode(err) ?? 'the transfer broke off', true, null, true);
        }
        const got = hash.digest('hex');
        if (got !== sha256)
          throw new CliError(`Downloaded blob ${sha256.slice(0, 12)}… is corrupt (its bytes hash to ${got.slice(0, 12)}…).`);
        return received;
      });
      await rename(tmp, dest);
      return size;
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /** A graphql-ws client on the same /graphql path; the caller disposes it. */
  wsClient(onClosed?: (event: unknown) => void): Client {
    return createClient({
      url: this.server.replace(/^http/, 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      connectionParams: this.token ? { authorization: `Bearer ${this.token}` } : {},
      retryAttempts: 0,
      lazy: true,
      keepAlive: 20_000,
      on: onClosed ? { closed: onClosed } : {},
    });
  }

  /** Subscribes; returns a function that unsubscribes. GraphQL errors arrive in `error` as ApiError. */
  subscribe<T>(ws: Client, query: string, variables: Record<string, unknown>, h: SubscriptionHandlers<T>): () => void {
    return ws.subscribe<T>(
      { query, variables },
      {
        next: (v) => {
          if (v.errors?.length) h.error(this.toApiError(v.errors as GraphQLErrorShape[]));
          else if (v.data) h.next(v.data as T);
        },
        error: (e) => {
          if (Array.isArray(e) && e.length && typeof e[0]?.message === 'string') h.error(this.toApiError(e as GraphQLErrorShape[]));
          else h.error(e);
        },
        complete: () => h.complete(),
      },
    );
  }
}

/** Mutation results are unions: the wanted type, or an Error with a message. */
export function unwrap<T extends { __typename: string }>(
  result: T | { __typename: string; message?: string; code?: string },
  want: string,
): T {
  if (result.__typename === want) return result as T;
  const r = result as { __typename: string; message?: string };
  throw new ApiError(r.message ?? `Unexpected answer: ${r.__typename}.`, r.__typename);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A job id as the API wants it: the global id (what `chatgpu jobs` shows), or a raw
 * uuid, which is turned into the global id.
 */
export function toJobId(raw: string): string {
  const s = raw.trim();
  if (UUID.test(s)) return Buffer.from(`Job:${s.toLowerCase()}`).toString('base64');
  return s;
}

/**
 * `toJobId`, refusing (exit 2) what cannot be a job id at all — a typo, or the id of a
 * task or a worker — instead of letting the server answer "no such job".
 */
export function jobIdArg(raw: string, command: string): string {
  const id = toJobId(raw);
  const decoded = /^[A-Za-z0-9+/]+=*$/.test(id) ? Buffer.from(id, 'base64').toString('utf8') : '';
  const m = /^([A-Za-z]+):(.*)$/.exec(decoded);
  if (m && m[1] === 'Job' && UUID.test(m[2]!)) return id;
  const what = m && UUID.test(m[2]!) ? `is a ${m[1]} id, not a job's` : 'is not a job id';
  throw new CliError(`${JSON.stringify(raw)} ${what} (chatgpu jobs lists your jobs' ids); see chatgpu ${command} --help.`, 2);
}
