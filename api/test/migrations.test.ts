import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { pgMigrationConnection } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrate.js';
import { diffSql } from '../src/db/schemaEngine.js';
import { adminUrl, createTestDatabase } from './helpers/db.js';

const run = promisify(execFile);

async function emptyDatabase(): Promise<string> {
  const url = await createTestDatabase();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
  await c.end();
  return url;
}

/**
 * pg_dump without comments and settings, with the columns of each table sorted: a column
 * added by a later migration lands at the end of its table, which is the same schema.
 */
async function schemaDump(url: string): Promise<string> {
  const { stdout } = await run('pg_dump', ['--schema-only', '--no-owner', '--no-privileges', '-T', '_chatgpu_migrations', url]);
  const lines = stdout.split('\n').filter((l) => !l.startsWith('--') && !/^SET |^SELECT pg_catalog|^\\(un)?restrict /.test(l));
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    out.push(lines[i]!);
    if (/^CREATE TABLE .* \($/.test(lines[i]!)) {
      const cols: string[] = [];
      while (i + 1 < lines.length && lines[i + 1] !== ');') cols.push(lines[++i]!.replace(/,$/, ''));
      out.push(...cols.sort());
    }
  }
  return out.join('\n');
}

describe('migrations', () => {
  it('reproduce prisma/schema.prisma exactly (pg_dump of migrated db == db built from the schema)', async () => {
    const migrated = await emptyDatabase();
    const c1 = new pg.Client({ connectionString: migrated });
    await c1.connect();
    expect((await applyMigrations(pgMigrationConnection(c1))).length).toBeGreaterThan(0);
    await c1.end();

    const fromSchema = await emptyDatabase();
    const schemaPath = path.resolve('prisma/schema.prisma');
    const sql = await diffSql(adminUrl(), null, { path: schemaPath, content: await readFile(schemaPath, 'utf8') });
    const c2 = new pg.Client({ connectionString: fromSchema });
    await c2.connect();
    await c2.query(sql);
    await c2.end();

    const [a, b] = await Promise.all([schemaDump(migrated), schemaDump(fromSchema)]);
    expect(a).toContain('CREATE TABLE public."Attempt"');
    expect(a).toEqual(b);
  });

  it('are applied once even when two processes migrate concurrently, and refuse an edited migration', async () => {
    const url = await emptyDatabase();
    const clients = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
    await Promise.all(clients.map((c) => c.connect()));
    const results = await Promise.all(clients.map((c) => applyMigrations(pgMigrationConnection(c))));
    expect(results.map((r) => r.length).sort()).toEqual([0, results.flat().length]);
    const c = clients[0]!;
    await c.query(`UPDATE "_chatgpu_migrations" SET checksum = 'x'`);
    await expect(applyMigrations(pgMigrationConnection(c))).rejects.toThrow(/was changed after it was applied/);
    await Promise.all(clients.map((cl) => cl.end()));
  });
});
