/**
 * The `chatgpu` command's only way to the server: the public API. GraphQL over HTTP
 * with a Bearer token, graphql-ws subscriptions on the same /graphql path (the token
 * in connectionParams), and content-addressed blobs at /blobs/<sha256>.
 */
import { createHash } from 'node:crypto';
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
  /** Where the token came from, for error messages ("the token from ~/.config/…"). */
  constructor(
    readonly server: string,
    readonly token: string | null,
    readonly tokenSource = 'the token',
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...extra };
  }

  private async send(url: string, init: RequestInit & { timeoutMs?: number }): Promise<Response> {
    const { timeoutMs = 60_000, ...rest } = init;
    try {
      return await fetch(url, { ...rest, signal: rest.signal ?? AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      const reason = networkReason(err);
      if (reason) throw unreachable(this.server, reason);
      throw err;
    }
  }

  /** Runs a query or mutation; GraphQL errors become ApiError with a clear message. */
  async gql<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const res = await this.send(`${this.server}/graphql`, {
      method: 'POST',
      headers: this.headers({ 'content-type': 'application/json', accept: 'application/json' }),
      body: JSON.stringify({ query, variables }),
    });
    const text = await res.text();
    let body: { data?: T; errors?: GraphQLErrorShape[] };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new CliError(`The server at ${this.server} did not answer like a ChatGPU API (HTTP ${res.status} from /graphql).`);
    }
    if (body.errors?.length) throw this.toApiError(body.errors);
    if (!res.ok || !body.data) throw new CliError(`The server at ${this.server} answered HTTP ${res.status} without data.`);
    return body.data;
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
  async putBlob(bytes: Uint8Array, sha256 = sha256Hex(bytes)): Promise<string> {
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
    const err = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    if (res.status === 401) throw this.toApiError([{ message: 'unauthenticated', extensions: { code: 'UNAUTHENTICATED' } }]);
    throw new CliError(`Uploading blob ${sha256.slice(0, 12)}… failed (HTTP ${res.status}): ${err?.error?.message ?? res.statusText}`);
  }

  /** Downloads a blob and checks that its bytes hash to its name. */
  async getBlob(sha256: string): Promise<Buffer> {
    const res = await this.send(`${this.server}/blobs/${sha256}`, { method: 'GET', headers: this.headers(), timeoutMs: 30 * 60_000 });
    if (res.status === 401) throw this.toApiError([{ message: 'unauthenticated', extensions: { code: 'UNAUTHENTICATED' } }]);
    if (!res.ok) {
      const err = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      throw new CliError(`Downloading blob ${sha256.slice(0, 12)}… failed (HTTP ${res.status}): ${err?.error?.message ?? res.statusText}`);
    }
    const bytes = Buffer.from(await res.arrayBuffer());
    const got = sha256Hex(bytes);
    if (got !== sha256) throw new CliError(`Downloaded blob ${sha256.slice(0, 12)}… is corrupt (its bytes hash to ${got.slice(0, 12)}…).`);
    return bytes;
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
export function unwrap<T extends { __typename: string }>(result: T | { __typename: string; message?: string; code?: string }, want: string): T {
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
