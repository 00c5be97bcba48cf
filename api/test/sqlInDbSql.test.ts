/**
 * Every SQL statement of the API lives in api/src/db/ (db/sql/<statement>.ts, one statement per
 * file with its locking reasoning; db/client.ts and the migrator): use cases call those functions
 * and write no SQL themselves (issue 35, after graphile-worker's src/sql/). A search of the tree.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/processes.js';

const SQL = [
  { what: 'a raw query', re: /\$(queryRaw|executeRaw)(Unsafe)?\b/ },
  { what: 'a tagged SQL template', re: /\b(P|Prisma)\.sql`/ },
  { what: 'SQL text', re: /(\bSELECT\b[^'`]*\bFROM\s+"[A-Z]|\bUPDATE\s+"[A-Z]\w*"\s+\w*\s*SET\b|\bINSERT\s+INTO\s+"|\bDELETE\s+FROM\s+")/ },
];

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (e === 'generated' || e === 'db') continue;
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (/\.ts$/.test(e) && !/\.test\.ts$/.test(e)) out.push(p);
  }
  return out;
}

const sqlIn = (text: string) =>
  text.split('\n').flatMap((line, i) => SQL.filter((s) => s.re.test(line)).map((s) => `${i + 1}: ${s.what}: ${line.trim().slice(0, 120)}`));

describe('SQL lives in db/sql', () => {
  it('the search finds each shape of SQL', () => {
    expect(sqlIn('const [lock] = await tx.$queryRaw<{ ok: boolean }[]>`SELECT 1`;')).toHaveLength(1);
    expect(sqlIn('await db.$executeRawUnsafe(text);')).toHaveLength(1);
    expect(sqlIn('const statement = P.sql`WITH i AS (')).toHaveLength(1);
    expect(sqlIn('  SELECT a.id FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId"')).toHaveLength(1);
    expect(sqlIn('  UPDATE "Task" t SET status = i."taskStatus"')).toHaveLength(1);
    expect(sqlIn('  INSERT INTO "JobEvent" ("jobId", kind, payload)')).toHaveLength(1);
    expect(sqlIn("const label = 'Select a worker from the list';")).toEqual([]);
  });

  it('no file of api/src outside db/ writes SQL', () => {
    const root = path.join(repoRoot, 'api/src');
    const found = files(root).flatMap((f) => sqlIn(readFileSync(f, 'utf8')).map((x) => `${path.relative(root, f)}:${x}`));
    expect(found).toEqual([]);
  });
});
