/**
 * Prisma client factory: a real PostgreSQL server (DATABASE_URL, driver adapter for
 * `pg`) or the embedded PGlite in the data folder. Same schema, same SQL.
 *
 * LISTEN/NOTIFY: on PostgreSQL one dedicated connection holds every LISTEN of this
 * process and re-subscribes after a reconnect; on PGlite the instance's own listen().
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client.js';
import { applyMigrations, type MigrationConnection } from './migrate.js';
import { resumeLeasesAfterDatabaseRestart } from './sql/schedulerState.js';
import { databaseUnavailable } from './unavailable.js';

import type { Db } from './types.js';

export type { Db, Prisma, Tx } from './types.js';

/**
 * A hot-path statement (a worker-token lookup, a heartbeat's touch) without Prisma's work per
 * call: on a client made by openDatabase it goes straight to the driver — on PostgreSQL a
 * named prepared statement (parsed once per pooled connection, planned for its values on each
 * run, as Prisma's are), on PGlite its query. Per
 * statement on this machine: ≈ 0.06 ms of API CPU against ≈ 0.2–0.3 ms through `$queryRaw`
 * (bench/README.md, goal c). On a transaction's client (or any other) it is Prisma's raw
 * query, so it still runs inside that transaction.
 *
 * `text` numbers its parameters $1, $2, …; a Date value is sent as its ISO text, as Prisma
 * sends it, so `$n::timestamp` holds UTC whatever the process's time zone. Rows come as the
 * driver parses them: select no timestamp column (the drivers read those differently) —
 * compare in SQL, or select it as `epochMs(…)` and read it with fromEpochMs.
 */
export function hotQuery<T>(db: Db, name: string, text: string, values: unknown[]): Promise<T[]> {
  const sent = values.map(isoDates);
  const direct = directQuery.get(db);
  return direct ? (direct(name, text, sent) as Promise<T[]>) : db.$queryRawUnsafe<T[]>(text, ...sent);
}

type DirectQuery = (name: string, text: string, values: unknown[]) => Promise<unknown[]>;
const directQuery = new WeakMap<object, DirectQuery>();

/** A statement inside a hotTransaction: `text` numbered $1, $2, …, as hotQuery's. */
export type HotTx = <T>(name: string, text: string, values: unknown[]) => Promise<T[]>;

export interface HotTransactionOptions {
  /** The longest any statement may run (PostgreSQL's statement_timeout; Prisma's transaction timeout otherwise). */
  timeoutMs: number;
  /** The longest to wait for a pooled connection. */
  maxWaitMs: number;
}

type DirectTransaction = <R>(fn: (q: HotTx) => Promise<R>, opts: HotTransactionOptions) => Promise<R>;
const directTransaction = new WeakMap<object, DirectTransaction>();

/**
 * A short hot-path transaction (a batch of completions) without Prisma's interactive
 * transaction: on PostgreSQL, BEGIN on a pooled connection, `fn`'s statements as named prepared
 * statements (hotQuery's), COMMIT — or ROLLBACK when `fn` throws. The row locks it takes are held
 * for the statements and the COMMIT only, not for Prisma's hops between them. On PGlite (one
 * connection, shared with Prisma) it is Prisma's interactive transaction with the same statements.
 */
export function hotTransaction<R>(db: PrismaClient, fn: (q: HotTx) => Promise<R>, opts: HotTransactionOptions): Promise<R> {
  const direct = directTransaction.get(db);
  if (direct) return direct(fn, opts);
  return db.$transaction((tx) => fn(<T>(name: string, text: string, values: unknown[]) => hotQuery<T>(tx, name, text, values)), {
    timeout: opts.timeoutMs,
    maxWait: opts.maxWaitMs,
  });
}

const isoDates = (v: unknown) => (v instanceof Date ? v.toISOString() : v);

/** SQL: timestamp `expr` as epoch milliseconds — how a hot statement returns a time (hotQuery). */
export const epochMs = (expr: string) => `(EXTRACT(EPOCH FROM ${expr}) * 1000)::float8`;

/** An epochMs column back as a Date (null stays null). */
export function fromEpochMs<N extends number | null>(ms: N): N extends number ? Date : Date | null {
  return (ms === null ? null : new Date(Number(ms))) as N extends number ? Date : Date | null;
}

/** hotTransaction on a PostgreSQL pool (exported for its tests). */
export async function pgTransaction<R>(pool: pg.Pool, fn: (q: HotTx) => Promise<R>, opts: HotTransactionOptions): Promise<R> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<never>((_, reject) => {
    // pg's own words for its pool's connection timeout, so it counts as an outage (503, retry).
    timer = setTimeout(
      () => reject(new Error(`timeout exceeded when trying to connect (no pooled connection free within ${opts.maxWaitMs} ms)`)),
      opts.maxWaitMs,
    );
  });
  const connecting = pool.connect();
  let client: pg.PoolClient;
  try {
    client = await Promise.race([connecting, waited]);
  } catch (err) {
    connecting.then(
      (c) => c.release(),
      () => {},
    ); // came too late: back to the pool
    throw err;
  } finally {
    clearTimeout(timer);
  }
  let broken: Error | undefined;
  // A checked-out client has no error listener of the pool's: a connection lost between two
  // statements would be an uncaught 'error' event. Record it; the next statement fails anyway.
  const onError = (err: Error) => (broken = err);
  client.on('error', onError);
  try {
    // Both limits: a statement, and the wait between two (a stalled API holding row locks).
    const ms = Math.max(1, Math.round(opts.timeoutMs));
    await client.query(`BEGIN; SET LOCAL statement_timeout = ${ms}; SET LOCAL idle_in_transaction_session_timeout = ${ms}`);
    const r = await fn(
      async <T>(name: string, text: string, values: unknown[]) =>
        (await client.query({ name, text, values: values.map(isoDates) })).rows as T[],
    );
    await client.query('COMMIT');
    return r;
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e)); // a connection that cannot roll back is not reused
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

export interface Database {
  kind: 'postgres' | 'pglite';
  prisma: PrismaClient;
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
  poolSize?: number;
  /**
   * PostgreSQL only: how long to wait, with backoff, for a server that refuses connections or is
   * still starting (a container started before its database, a restart) before giving up (default 0).
   */
  waitSec?: number;
  /**
   * PostgreSQL only: the scheduler's lease length. When given, every new pool connection first
   * gives leases that ran out while the server was restarting a fresh lease
   * (sql/schedulerState.ts, resumeLeasesAfterDatabaseRestart).
   */
  leaseSec?: number;
  /** The API's clock (leases are written with it); default the wall clock. */
  now?: () => Date;
  log?: (msg: string) => void;
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts) : openPglite(opts);
}

async function openPostgres(url: string, opts: DatabaseOptions): Promise<Database> {
  const client = await connectWhenUp(url, opts.waitSec ?? 0, opts.log);
  if (opts.migrate === false) await client.end();
  else {
    try {
      await applyMigrations(pgMigrationConnection(client));
    } finally {
      await client.end();
    }
  }
  // 20 connections: long-polls hold none, but bursts of heartbeats and completions plus the
  // tick's transaction starved a pool of 10 in the heartbeat benchmark (bench/README.md).
  const leaseSec = opts.leaseSec;
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 20,
    // No JIT: every statement here is a short OLTP one, and the claim's planner estimate (a
    // LATERAL per owner) passes jit_above_cost, so PostgreSQL spent 1.2 s compiling a 20 ms
    // claim (bench/claimScale.ts --explain 1). Custom plans always: a named statement
    // (hotQuery) is planned for its values like every other statement, never switched to a
    // generic plan after five runs — a generic plan of the lease renewal joins in another
    // order and waits on a row lock the custom one never takes (races.test.ts).
    // UTC sessions: every column is a `timestamp` holding UTC, and a `timestamptz` written into one
    // (a default of CURRENT_TIMESTAMP, a recordset column) is converted in the session's zone — a
    // server set to another zone (a Homebrew PostgreSQL takes the machine's) shifted retry times
    // and usage periods by hours.
    options: '-c jit=off -c plan_cache_mode=force_custom_plan -c TimeZone=UTC',
    ...(leaseSec ? { onConnect: (c: pg.ClientBase) => resumeOnConnect(c, opts.now?.() ?? new Date(), leaseSec, opts.log) } : {}),
  });
  pool.on('error', (err) => opts.log?.(`postgres pool error: ${err.message}`));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  directQuery.set(prisma, async (name, text, values) => (await pool.query({ name, text, values })).rows);
  directTransaction.set(prisma, (fn, o) => pgTransaction(pool, fn, o));
  const listener = new PgListener(url, opts.log);
  return {
    kind: 'postgres',
    prisma,
    listen: (channel, cb) => listener.listen(channel, cb),
    notify: async (channel, payload) => {
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    close: async () => {
      await listener.close();
      await prisma.$disconnect();
      await pool.end().catch(() => {});
    },
  };
}

/**
 * A new pool connection resumes the leases a database restart interrupted before it is used.
 * An outage error fails the connection (it is unusable anyway); any other error is logged and
 * the connection handed out as it is: the rest of the API must not depend on this statement.
 */
async function resumeOnConnect(client: pg.ClientBase, now: Date, leaseSec: number, log?: (msg: string) => void): Promise<void> {
  try {
    const resumed = await resumeLeasesAfterDatabaseRestart(client, now, leaseSec);
    if (resumed) log?.(`PostgreSQL restarted: ${resumed} lease(s) that ran out meanwhile get a fresh lease`);
  } catch (err) {
    if (databaseUnavailable(err)) throw err;
    log?.(`resuming leases after a database restart failed: ${(err as Error).message}`);
  }
}

/**
 * The first connection, waiting out an outage (databaseUnavailable: refused, starting up,
 * shutting down, too many clients) with backoff up to `waitSec`; any other error (a wrong
 * password, a missing database) fails at once. Gives up with one sentence naming the server.
 */
async function connectWhenUp(url: string, waitSec: number, log?: (msg: string) => void): Promise<pg.Client> {
  const deadline = Date.now() + waitSec * 1000;
  let delayMs = 250;
  let logged = 0;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      if (logged) log?.('PostgreSQL is up: starting');
      return client;
    } catch (err) {
      await client.end().catch(() => {});
      const why = databaseUnavailable(err);
      if (!why) throw err;
      const where = serverOf(url);
      if (Date.now() + delayMs > deadline) {
        throw new Error(
          `PostgreSQL at ${where} is not reachable (${why})${waitSec ? ` after waiting ${waitSec} s` : ''}: start it, or set DATABASE_WAIT_SEC to wait longer.`,
          { cause: err },
        );
      }
      // One line at the start and then every ~10 s, not one per try.
      if (Date.now() - logged >= 10_000) {
        log?.(`waiting for PostgreSQL at ${where} (${why}); giving up in ${Math.ceil((deadline - Date.now()) / 1000)} s`);
        logged = Date.now();
      }
      await new Promise((r) => setTimeout(r, delayMs));
      delayMs = Math.min(delayMs * 2, 2000);
    }
  }
}

/** host:port/database of a connection URL, without credentials. */
function serverOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}${u.pathname}`;
}

export function pgMigrationConnection(client: pg.Client): MigrationConnection {
  return {
    exec: async (sql) => {
      await client.query(sql);
    },
    query: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[],
  };
}

/** One connection carrying every LISTEN of this process; reconnects with backoff. */
class PgListener {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private closed = false;
  private retryMs = 100;
  /** LISTEN/UNLISTEN one at a time: pg deprecates (pg@9 removes) queries overlapping on one client. */
  private queue: Promise<unknown> = Promise.resolve();

  private query(client: pg.Client, sql: string): Promise<unknown> {
    const q = this.queue.then(() => client.query(sql));
    this.queue = q.catch(() => {});
    return q;
  }

  constructor(
    private readonly url: string,
    private readonly log?: (msg: string) => void,
  ) {}

  private async connect(): Promise<pg.Client> {
    if (this.client) return this.client;
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.url });
      client.on('notification', (n) => {
        for (const h of this.handlers.get(n.channel) ?? []) h(n.payload ?? '');
      });
      client.on('error', (err) => {
        this.log?.(`listener connection lost: ${err.message}`);
        this.client = undefined;
        this.connecting = undefined;
        void this.reconnect();
      });
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
      this.client = client;
      this.retryMs = 100;
      return client;
    })();
    try {
      return await this.connecting;
    } catch (err) {
      this.connecting = undefined;
      throw err;
    }
  }

  private async reconnect(): Promise<void> {
    while (!this.closed && !this.client) {
      await new Promise((r) => setTimeout(r, this.retryMs));
      this.retryMs = Math.min(this.retryMs * 2, 5000);
      try {
        await this.connect();
      } catch {
        /* retry */
      }
    }
  }

  async listen(channel: string, cb: (payload: string) => void): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    const isNew = !set;
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(cb);
    const client = await this.connect();
    if (isNew) await this.query(client, `LISTEN ${quoteIdent(channel)}`);
    return async () => {
      set.delete(cb);
      if (set.size === 0 && this.handlers.get(channel) === set) {
        this.handlers.delete(channel);
        if (this.client) await this.query(this.client, `UNLISTEN ${quoteIdent(channel)}`).catch(() => {});
      }
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => {});
  }
}

function quoteIdent(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

async function openPglite(opts: DatabaseOptions): Promise<Database> {
  const dir = path.join(opts.dataDir, 'pglite');
  await mkdir(dir, { recursive: true });
  const lite = await PGlite.create(dir);
  if (opts.migrate !== false) {
    await applyMigrations({
      exec: async (sql) => {
        await lite.exec(sql);
      },
      query: async <T>(sql: string, params?: unknown[]) => (await lite.query<T>(sql, params)).rows,
    });
  }
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(lite) });
  directQuery.set(prisma, async (_name, text, values) => (await lite.query(text, values)).rows);
  return {
    kind: 'pglite',
    prisma,
    listen: async (channel, cb) => {
      const unsub = await lite.listen(channel, cb);
      return async () => unsub();
    },
    notify: async (channel, payload) => {
      await lite.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    close: async () => {
      await prisma.$disconnect();
      await lite.close();
    },
  };
}
