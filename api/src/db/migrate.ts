/**
 * Applies prisma/migrations/<name>/migration.sql in name order, each in its own
 * transaction, recording it in "_chatgpu_migrations". Serves PostgreSQL and PGlite.
 *
 * Locking: a session-level advisory lock is held for the whole run, so two API
 * processes starting together apply each migration exactly once (the second waits,
 * then finds nothing to do). A migration whose file changed after it was applied is
 * refused: migrations are append-only.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { inRepo } from '../paths.js';

export interface MigrationConnection {
  /** Runs one or more statements without parameters. */
  exec(sql: string): Promise<void>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
}

export const migrationsDir = inRepo('prisma/migrations');

/** Advisory lock key for migrations: an arbitrary constant ("cgpu" in ASCII). */
const MIGRATION_LOCK = 0x63677075;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir = migrationsDir): Promise<Migration[]> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

export async function applyMigrations(conn: MigrationConnection, dir = migrationsDir): Promise<string[]> {
  const migrations = await readMigrations(dir);
  await conn.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await conn.exec(`CREATE TABLE IF NOT EXISTS "_chatgpu_migrations" (
      name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const applied = new Map(
      (await conn.query<{ name: string; checksum: string }>('SELECT name, checksum FROM "_chatgpu_migrations"')).map((r) => [
        r.name,
        r.checksum,
      ]),
    );
    const done: string[] = [];
    for (const m of migrations) {
      const previous = applied.get(m.name);
      if (previous !== undefined) {
        if (previous !== m.checksum) {
          throw new Error(`Migration ${m.name} was changed after it was applied; add a new migration instead.`);
        }
        continue;
      }
      await conn.exec('BEGIN');
      try {
        await conn.exec(m.sql);
        await conn.query('INSERT INTO "_chatgpu_migrations" (name, checksum) VALUES ($1, $2)', [m.name, m.checksum]);
        await conn.exec('COMMIT');
      } catch (err) {
        await conn.exec('ROLLBACK');
        throw new Error(`Migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      done.push(m.name);
    }
    return done;
  } finally {
    await conn.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}
