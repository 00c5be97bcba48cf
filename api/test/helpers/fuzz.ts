/**
 * Shared parts of the fuzz suites (api/test/fuzz-*.test.ts):
 *
 * - `fuzzParams(name)`: fast-check's run parameters. A fixed seed and a bounded number of
 *   runs in `npm test`; a longer run with CHATGPU_FUZZ_RUNS=<multiplier> (every suite's
 *   run count times it) and CHATGPU_FUZZ_SEED=<int> (a failure prints its seed and path,
 *   which replay it: fast-check's `seed` + `path`).
 * - `hostileString()` and `hostilePath()`: strings that break naive code (NUL and control
 *   characters, lone surrogates, right-to-left overrides, huge lengths, `..`, absolute and
 *   Windows paths, percent-encoding, SQL and shell metacharacters, non-BMP characters).
 * - `snapshotter()`: the database (row count and a hash of every table, except the columns a
 *   read legitimately touches: lastUsedAt/lastSeenAt, and `ignoreColumns`) and the blob store (every file under
 *   it, its size and name), so a refused call can be checked to have written nothing.
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll } from 'vitest';

/** Columns that any authenticated read updates (advisory timestamps); never part of a write check. */
const VOLATILE_COLUMNS = ['lastUsedAt', 'lastSeenAt'];

function multiplier(): number {
  const m = Number(process.env.CHATGPU_FUZZ_RUNS ?? '1');
  return Number.isFinite(m) && m > 0 ? m : 1;
}

/** A test's time limit, scaled with CHATGPU_FUZZ_RUNS (the default run fits vitest's 60 s). */
export function fuzzTimeout(ms = 60_000): number {
  return Math.round(ms * Math.max(1, multiplier()));
}

export function fuzzParams(suiteRuns: number): fc.Parameters<unknown> {
  const seed = Number(process.env.CHATGPU_FUZZ_SEED ?? '1811');
  return {
    seed,
    numRuns: Math.max(1, Math.round(suiteRuns * multiplier())),
    endOnFailure: true,
  };
}

/** Characters that break naive text handling. */
const NASTY = [
  '\u0000',
  '\u0001',
  '\u001b[31m',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u200b',
  '\u200e',
  '\u202e',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '\ud800',
  '\udfff',
  '\ud83d\ude00',
  '👩‍👩‍👧',
  'é',
  'e\u0301',
  'ǅ',
  'ß',
  'İ',
  '漢字',
  'العربية',
  '\\',
  '%00',
  '%2e%2e%2f',
  '\r\n',
  '\t',
  '\'; DROP TABLE "Job"; --',
  '$(reboot)',
  '`id`',
  '{{7*7}}',
  '<script>',
  '${x}',
  '../',
  '..\\',
  '/etc/passwd',
  'C:\\',
  'CON',
  'nul',
];

export function hostileString(opts: { maxLength?: number } = {}): fc.Arbitrary<string> {
  const maxLength = opts.maxLength ?? 64;
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength }) },
    {
      weight: 3,
      arbitrary: fc.array(fc.oneof(fc.constantFrom(...NASTY), fc.string({ maxLength: 4 })), { maxLength: 8 }).map((a) => a.join('')),
    },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '\n', 'a') },
    // Huge: over every length limit in the API (200 title, 1,024 path, 20,000 request…).
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...NASTY, 'x'), fc.integer({ min: 1_000, max: 70_000 }))
        .map(([c, n]) => c.repeat(Math.ceil(n / c.length))),
    },
  );
}

/** File paths: unicode, `..`, absolute, Windows, deep, long, empty segments. */
export function hostilePath(): fc.Arbitrary<string> {
  const segment = fc.oneof(
    fc.constantFrom(
      'a',
      'src',
      'main.py',
      '.',
      '..',
      '',
      '...',
      '.git',
      'ñandú',
      '数据',
      '🚀.py',
      'a b',
      'a\u0000b',
      'a\\b',
      'C:',
      '~',
      '%2e%2e',
      'e\u0301',
      '\u202eyp.exe',
    ),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
  );
  return fc.oneof(
    fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => s.join('/')),
    fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`),
    fc.integer({ min: 60, max: 80 }).map((n) => Array.from({ length: n }, () => 'd').join('/')),
    fc.integer({ min: 1_000, max: 2_000 }).map((n) => 'p'.repeat(n)),
  );
}

/** Numbers at and past every boundary (the JSON wire carries no NaN or Infinity). */
export function hostileInt(): fc.Arbitrary<number> {
  return fc.oneof(
    fc.integer({ min: -5, max: 5 }),
    fc.constantFrom(2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53 - 1, -(2 ** 53), 1e21, 30_000, 30_001, 10_000, 10_001),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );
}

/** JSON values, some deeply nested, some huge, some with keys that look like prototypes. */
export function hostileJson(): fc.Arbitrary<unknown> {
  const deep = fc.integer({ min: 50, max: 3_000 }).map((n) => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
    return v;
  });
  return fc.oneof(
    { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
    { weight: 1, arbitrary: deep },
    {
      weight: 1,
      arbitrary: fc.dictionary(
        fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'a\u0000b'),
        hostileString({ maxLength: 8 }),
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(null, 1e308, -1e308, 5e-324, '', [], {}) },
    { weight: 1, arbitrary: hostileString().map((s) => ({ s })) },
  );
}

export interface Snapshot {
  tables: Record<string, string>;
  blobs: string[];
}

/**
 * A reader of one test database and blob folder. `take()` returns the snapshot;
 * `diff(a, b)` names what differs (tables and blob files), empty when nothing does.
 */
export async function snapshotter(databaseUrl: string, blobDirs: string[], opts: { ignoreColumns?: string[] } = {}) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  afterAll(() => client.end());
  const { rows } = await client.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const tables = rows.map((r) => r.table_name);
  const strip = [...VOLATILE_COLUMNS, ...(opts.ignoreColumns ?? [])].map((c) => ` - '${c}'`).join('');
  const sql = tables
    .map(
      (t) =>
        `SELECT '${t}' AS t, count(*)::int AS n, coalesce(md5(string_agg((to_jsonb(x)${strip})::text, '|' ORDER BY (to_jsonb(x)${strip})::text)), '') AS h FROM "${t}" x`,
    )
    .join(' UNION ALL ');
  const take = async (): Promise<Snapshot> => {
    const res = await client.query<{ t: string; n: number; h: string }>(sql);
    const blobs: string[] = [];
    for (const dir of blobDirs) await listFiles(dir, dir, blobs);
    return { tables: Object.fromEntries(res.rows.map((r) => [r.t, `${r.n}:${r.h}`])), blobs: blobs.sort() };
  };
  const diff = (a: Snapshot, b: Snapshot, allow: string[] = []): string[] => {
    const out: string[] = [];
    for (const t of tables) if (a.tables[t] !== b.tables[t] && !allow.includes(t)) out.push(`table ${t}: ${a.tables[t]} → ${b.tables[t]}`);
    const [ab, bb] = [new Set(a.blobs), new Set(b.blobs)];
    for (const f of b.blobs) if (!ab.has(f)) out.push(`blob added: ${f}`);
    for (const f of a.blobs) if (!bb.has(f)) out.push(`blob removed: ${f}`);
    return out;
  };
  return { take, diff, tables };
}

async function listFiles(root: string, dir: string, out: string[]) {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const p = path.join(dir, n);
    const s = await stat(p).catch(() => null);
    if (!s) continue;
    if (s.isDirectory()) await listFiles(root, p, out);
    else out.push(`${path.relative(root, p)}:${s.size}`);
  }
}

export const sha256hex = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
