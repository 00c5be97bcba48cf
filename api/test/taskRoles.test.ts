/**
 * Task roles (prisma/schema.prisma TaskRole): a task's part in its job is a column set at
 * creation, never read from its name. The source is searched for code that tests a task name's
 * prefix (the encoding roles replaced), and the migration's backfill gives tasks made before it
 * the role their kind and name meant.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { roleOfKind } from '../src/domain/jobs/createTask.js';
import { createTestDatabase } from './helpers/db.js';
import { repoRoot } from './helpers/processes.js';

/** Ways code told a task's part in its job from its name before roles. */
const NAME_TESTS: { what: string; re: RegExp }[] = [
  { what: 'a Prisma filter on a name prefix', re: /\bname:\s*\{\s*startsWith\b/ },
  { what: "a task name's prefix", re: /\b(t|task|tk|row|info|original|s)\.(name|taskName)\.startsWith\(/ },
  { what: 'a prefix constant tested', re: /startsWith\(\s*(REPLICA|TIEBREAK|ADAPT|STEP|SHARD)_PREFIX\b/ },
  {
    what: 'a role read from a fixed name',
    // (a plan's preparation step is named "reference" too: `step.name` is not a task's)
    re: /\b(?!step\b)\w+\.(name|taskName)\s*[!=]==\s*'(smoke|run|evaluate|service|merge|reference)'/,
  },
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (e === 'generated' || e === 'gql' || e === 'node_modules') continue;
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|tsx)$/.test(e) && !/\.test\.tsx?$/.test(e)) out.push(p);
  }
  return out;
}

function nameTestsIn(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const t of NAME_TESTS) if (t.re.test(line)) found.push(`${i + 1}: ${t.what}: ${line.trim()}`);
  });
  return found;
}

describe('task roles', () => {
  it('the search finds each way a task name was tested', () => {
    for (const line of [
      'where: { jobId, name: { startsWith: ADAPT_PREFIX } },',
      "if (task.name.startsWith('replica:')) return;",
      'if (x.startsWith(STEP_PREFIX)) return;',
      "const smoke = tasks.find((t) => t.kind === 'PROBE' && t.name === 'smoke');",
      "if (info.taskName !== 'run') return;",
    ])
      expect(nameTestsIn(line), line).toHaveLength(1);
    expect(nameTestsIn("if (task.role === 'SMOKE') return afterSmokeRun(r, task);")).toEqual([]);
  });

  it('no code of the API, the dashboard or the worker tells a task’s part from its name', () => {
    const found = ['api/src', 'web/src', 'worker/src'].flatMap((d) =>
      sourceFiles(path.join(repoRoot, d)).flatMap((f) =>
        nameTestsIn(readFileSync(f, 'utf8')).map((x) => `${path.relative(repoRoot, f)}:${x}`),
      ),
    );
    expect(found).toEqual([]);
  });

  it('a task made with only a kind has its kind’s role', () => {
    expect(roleOfKind('RUN')).toBe('RUN');
    expect(roleOfKind('PROBE')).toBe('PROBE');
    expect(roleOfKind('EVALUATE')).toBe('EVALUATE');
  });

  it('the migration gives tasks made before it the role their kind and name meant', async () => {
    const url = await createTestDatabase();
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows: users } = await db.query(
        `INSERT INTO "User" (id, email, "passwordHash") VALUES (gen_random_uuid(), 'm@example.com', 'x') RETURNING id`,
      );
      const owner = users[0].id as string;
      const { rows: jobs } = await db.query(
        `INSERT INTO "Job" (id, "ownerId", title, request, "updatedAt") VALUES (gen_random_uuid(), $1, 't', 'r', now()) RETURNING id`,
        [owner],
      );
      const job = jobs[0].id as string;
      const { rows: codes } = await db.query(
        `INSERT INTO "CodeVersion" (id, "jobId", status, origin, manifest, "fileCount", "totalBytes") VALUES (gen_random_uuid(), $1, 'ORIGINAL', 'upload', '[]', 0, 0) RETURNING id`,
        [job],
      );
      const code = codes[0].id as string;
      const before: [string, string, string, string][] = [
        ['RUN', 'run', 'python train.py', 'RUN'],
        ['RUN', 'step:prepare-data', 'python prepare.py', 'STEP'],
        ['PROBE', 'smoke', 'python train.py --epochs 1', 'SMOKE'],
        ['PROBE', 'adapt:original', 'python pi.py', 'SHARD_CHECK'],
        ['PROBE', 'adapt:shard-1', 'python pi.py --shard 1', 'SHARD_CHECK'],
        ['MERGE', 'adapt:merge', 'python merge.py', 'SHARD_CHECK'],
        ['MERGE', 'merge', 'python merge.py', 'MERGE'],
        ['SHARD', 'shard-1', 'python pi.py --shard 1', 'SHARD'],
        ['PROBE', 'replica:run', 'python train.py', 'REPLICA'],
        ['PROBE', 'tiebreak:run', 'python train.py', 'TIEBREAK'],
        ['CANDIDATE', 'candidate:resume:0', 'python -m chatgpu.resume_check --report r.json -- python train.py', 'RESUME_CHECK'],
        ['CANDIDATE', 'candidate:migrate:0', 'python train.py', 'CANDIDATE'],
        ['REFERENCE', 'reference', 'python train.py', 'REFERENCE'],
        ['EVALUATE', 'evaluate', 'python eval.py', 'EVALUATE'],
        ['SERVICE', 'service', 'flask run', 'SERVICE'],
        ['PROBE', 'whatever', 'echo hi', 'PROBE'],
      ];
      for (const [kind, name, command] of before)
        await db.query(
          `INSERT INTO "Task" (id, "jobId", "ownerId", kind, role, name, "codeVersionId", command, "updatedAt")
           VALUES (gen_random_uuid(), $1, $2, $3::"TaskKind", 'PROBE', $4, $5, $6, now())`,
          [job, owner, kind, name, code, command],
        );
      // The migration's backfill, as written in its file.
      const migration = readFileSync(path.join(repoRoot, 'prisma/migrations/20261207160000_task_role/migration.sql'), 'utf8');
      const backfill = /UPDATE "Task" SET "role" = [\s\S]*?;/.exec(migration)?.[0];
      expect(backfill).toBeTruthy();
      await db.query(backfill!);
      const { rows } = await db.query(`SELECT name, role::text AS role FROM "Task" WHERE "jobId" = $1`, [job]);
      const roles = Object.fromEntries(rows.map((r) => [r.name, r.role]));
      expect(roles).toEqual(Object.fromEntries(before.map(([, name, , role]) => [name, role])));
    } finally {
      await db.end();
    }
  });
});
