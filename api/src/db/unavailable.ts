/**
 * Whether an error means "the database is restarting or unreachable right now" — an
 * outage that a client should wait out and retry (HTTP 503 + Retry-After, GraphQL
 * `UNAVAILABLE`) — rather than a fault of this request (masked 500, reported).
 *
 * The forms, as seen by stopping and cutting a real PostgreSQL under this process:
 * - pg's own errors (db.notify, LISTEN, and what @prisma/adapter-pg passes through
 *   unwrapped): a server error with SQLSTATE 57P01 "terminating connection due to
 *   administrator command", 57P02 crash shutdown, 57P03 "the database system is
 *   starting up / shutting down", class 08 (connection exception), 53300 "too many
 *   clients" (the pool storming back after a restart); a socket error (ECONNREFUSED
 *   with syscall "connect", ECONNRESET…); or a plain Error "Connection terminated
 *   unexpectedly" when the socket closes under a query.
 * - Prisma's wrappers: PrismaClientKnownRequestError P1001 (can't reach), P1002
 *   (timed out reaching), P1017 (server closed the connection), or any code (P2010
 *   for raw queries) whose `meta.driverAdapterError.cause` is one of the above: kind
 *   DatabaseNotReachable / ConnectionClosed / SocketTimeout / TooManyConnections, or
 *   kind "postgres" with the SQLSTATE in `code`.
 * A connection to a host name with several addresses fails with an AggregateError of
 * those socket errors; its first one decides.
 * A socket error only counts when it carries `syscall` (as the driver's do): the
 * "aborted" ECONNRESET of a client that hung up mid-upload has none and is not an outage.
 */

/** What clients are told to wait before retrying (Retry-After, GraphQL `retryAfter`). */
export const UNAVAILABLE_RETRY_AFTER_SEC = 2;

const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1017']);
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
const PG_MESSAGES =
  /^(Connection terminated\b|Client has encountered a connection error and is not queryable|timeout exceeded when trying to connect)/;

/**
 * Why the database is unavailable, in a few words ("57P01 terminating connection due
 * to administrator command", "ECONNREFUSED"), or null when `err` is not an outage.
 */
export function databaseUnavailable(err: unknown): string | null {
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): string | null => {
    if (!e || typeof e !== 'object' || depth > 6 || seen.has(e)) return null;
    seen.add(e);
    const o = e as {
      code?: unknown;
      message?: unknown;
      syscall?: unknown;
      severity?: unknown;
      kind?: unknown;
      name?: unknown;
      clientVersion?: unknown;
    };
    // fetch() to some other service (a model API) failing is not the database.
    if (o.name === 'TypeError' && o.message === 'fetch failed') return null;
    const code = typeof o.code === 'string' ? o.code : undefined;
    const message = typeof o.message === 'string' ? o.message : '';
    // A PostgreSQL server error (pg's DatabaseError, or the adapter's "postgres" kind).
    if (code && SQLSTATES.has(code) && (typeof o.severity === 'string' || o.kind === 'postgres')) return `${code} ${message}`.trim();
    if (code && /^08[0-9A-Z]{3}$/.test(code) && (typeof o.severity === 'string' || o.kind === 'postgres'))
      return `${code} ${message}`.trim();
    if (code && SOCKET_CODES.has(code) && typeof o.syscall === 'string') return code;
    if (typeof o.kind === 'string' && ADAPTER_KINDS.has(o.kind)) return o.kind;
    if (typeof o.clientVersion === 'string' && code && PRISMA_CODES.has(code)) return `${code} ${firstLine(message)}`;
    if (o.name === 'Error' && !code && PG_MESSAGES.test(message)) return message;
    // Prisma keeps the driver's error under meta.driverAdapterError (its cause is the mapped pg error).
    const meta = (e as { meta?: { driverAdapterError?: unknown } }).meta;
    return (
      visit(meta?.driverAdapterError, depth + 1) ??
      visit((e as { cause?: unknown }).cause, depth + 1) ??
      visit((e as { originalError?: unknown }).originalError, depth + 1) ??
      // Node's AggregateError from a host name with several addresses (localhost: ::1 and 127.0.0.1).
      visit((e as { errors?: unknown[] }).errors?.[0], depth + 1)
    );
  };
  return visit(err, 0);
}

function firstLine(message: string): string {
  return (
    message
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .pop() ?? ''
  );
}

/**
 * Runs `fn`, and again with backoff (250 ms doubling to 2 s) while it fails with a database
 * outage, for up to `maxMs`; any other error, or the outage outlasting `maxMs`, is thrown.
 * For housekeeping that must not be lost to a restart of PostgreSQL (releasing an agent lock).
 */
export async function retryThroughOutage<T>(fn: () => Promise<T>, maxMs: number): Promise<T> {
  const deadline = Date.now() + maxMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 2000)) {
    try {
      return await fn();
    } catch (err) {
      if (!databaseUnavailable(err) || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
