/**
 * Writes prisma/migrations/<timestamp>_<name>/migration.sql: the SQL that takes the
 * datamodel of the latest migration (its schema.prisma snapshot) to the current
 * prisma/schema.prisma, and saves the new snapshot beside it.
 * api/test/migrations.test.ts then proves the chain reproduces the schema exactly.
 *
 *   npx tsx scripts/migration-new.ts add_something
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { migrationsDir, readMigrations } from '../api/src/db/migrate.js';
import { diffSql } from '../api/src/db/schemaEngine.js';

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: npx tsx scripts/migration-new.ts <snake_case_name>');
  process.exit(2);
}
const schemaPath = path.resolve('prisma/schema.prisma');
const latest = (await readMigrations()).at(-1);
const from = latest ? { path: schemaPath, content: await readFile(path.join(migrationsDir, latest.name, 'schema.prisma'), 'utf8') } : null;
const sql = await diffSql(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', from, {
  path: schemaPath,
  content: await readFile(schemaPath, 'utf8'),
});
if (!/^\s*(CREATE|ALTER|DROP)/m.test(sql)) {
  console.log('No schema changes: nothing written.');
} else {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const dir = path.join(migrationsDir, `${stamp}_${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'migration.sql'), sql);
  await copyFile(schemaPath, path.join(dir, 'schema.prisma'));
  console.log(`Wrote ${path.relative(process.cwd(), dir)}/migration.sql`);
}
