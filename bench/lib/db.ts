/**
 * Databases for the benchmarks: each run gets fresh, empty databases on the local
 * PostgreSQL (the API migrates its own on start, graphile-worker installs its schema on
 * its first run) and drops them afterwards. Loads target 127.0.0.1 only.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Refuses anything but a loopback PostgreSQL: the benchmarks put real load on it. */
export function checkLocal(url: string): string {
  const host = new URL(url).hostname;
  if (!LOOPBACK.has(host)) throw new Error(`The benchmarks only run against a local PostgreSQL (127.0.0.1), not ${host}.`);
  return url;
}

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(adminUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A fresh empty database `bench_<ms>_<hex>_<label>`; drop() removes it (also with open connections). */
export async function createDatabase(adminUrl: string, label: string): Promise<BenchDatabase> {
  checkLocal(adminUrl);
  const name = `bench_${Date.now()}_${randomBytes(3).toString('hex')}_${label.replace(/\W/g, '')}`;
  await withAdmin(adminUrl, async (c) => {
    // Databases left by an interrupted run (older than an hour).
    const stale = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname ~ '^bench_[0-9]+_'`);
    for (const { datname } of stale.rows) {
      if (Date.now() - Number(datname.split('_')[1]) > 3600_000) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
    await c.query(`CREATE DATABASE ${name}`);
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => withAdmin(adminUrl, async (c) => void (await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

export async function postgresInfo(adminUrl: string): Promise<{ version: string; settings: Record<string, string> }> {
  return withAdmin(adminUrl, async (c) => {
    const v = await c.query<{ v: string }>(`SELECT current_setting('server_version') AS v`);
    const s = await c.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('max_connections', 'shared_buffers', 'synchronous_commit', 'fsync')`,
    );
    const settings: Record<string, string> = {};
    for (const r of s.rows) settings[r.name] = r.unit === '8kB' ? `${(Number(r.setting) * 8) / 1024}MB` : r.setting;
    return { version: v.rows[0]?.v ?? '?', settings };
  });
}
