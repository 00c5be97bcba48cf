/**
 * Once per test run: a template database with every migration applied, named by the
 * migrations' checksums so a changed migration gets a fresh template. Each test file
 * clones it (`CREATE DATABASE … TEMPLATE …`, see helpers/db.ts): fast and isolated.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { pgMigrationConnection } from '../src/db/client.js';
import { applyMigrations, readMigrations } from '../src/db/migrate.js';

export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export default async function setup(project: TestProject): Promise<void> {
  const digest = createHash('sha256');
  for (const m of await readMigrations()) digest.update(m.name).update(m.checksum);
  const template = `chatgpu_tpl_${digest.digest('hex').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`Tests need PostgreSQL at ${ADMIN_URL} (run \`npm test\`, which starts it): ${(err as Error).message}`);
  }
  try {
    // Serialize template creation between concurrent test runs.
    await admin.query('SELECT pg_advisory_lock(7411)');
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (exists.rowCount === 0) {
      await admin.query(`CREATE DATABASE ${template}_build`).catch(async () => {
        await admin.query(`DROP DATABASE ${template}_build WITH (FORCE)`);
        await admin.query(`CREATE DATABASE ${template}_build`);
      });
      const url = new URL(ADMIN_URL);
      url.pathname = `/${template}_build`;
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      await applyMigrations(pgMigrationConnection(c));
      await c.end();
      await admin.query(`ALTER DATABASE ${template}_build RENAME TO ${template}`);
    }
    // Drop databases left behind by crashed runs (older than an hour).
    const stale = await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE 't\\_%' AND datname ~ '^t_[0-9]+_'`);
    for (const row of stale.rows as { datname: string }[]) {
      const ts = Number(row.datname.split('_')[1]);
      if (Date.now() - ts > 3600_000) await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
    }
  } finally {
    await admin.query('SELECT pg_advisory_unlock(7411)').catch(() => {});
    await admin.end();
  }
  project.provide('pgAdminUrl', ADMIN_URL);
  project.provide('pgTemplate', template);
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}
