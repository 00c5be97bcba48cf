/**
 * The task and attempt life cycle (domain/leases/taskLifecycle.ts): its transition tables, the
 * conditional writers on a real database, and a search of the tree proving that nothing else
 * writes Task.status or Attempt.status (only the life cycle and the db/sql statements it lists).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ATTEMPT_TRANSITIONS,
  InvalidTaskTransitionError,
  moveTasks,
  STATUS_STATEMENTS,
  TASK_TRANSITIONS,
  taskMayMove,
} from '../src/domain/leases/taskLifecycle.js';
import { startTestApi } from './helpers/api.js';
import { repoRoot } from './helpers/processes.js';

const SRC = path.join(repoRoot, 'api/src');
const LIFECYCLE = 'domain/leases/taskLifecycle.ts';

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (e === 'generated') continue;
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.ts$/.test(e) && !/\.test\.ts$/.test(e)) out.push(p);
  }
  return out;
}

/** The text of the balanced (…) or {…} that opens at `at`. */
function balanced(text: string, at: number): string {
  const open = text[at]!;
  const close = open === '(' ? ')' : '}';
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    if (text[i] === open) depth++;
    else if (text[i] === close && --depth === 0) return text.slice(at, i + 1);
  }
  return text.slice(at);
}

/** Writes of a status in this source: Prisma updates whose data sets `status`, and SQL UPDATEs of Task or Attempt that SET it. */
function statusWrites(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\.(task|attempt)\.(update|updateMany|upsert)\(/g)) {
    const args = balanced(text, m.index! + m[0].length - 1);
    const data = /\b(data|update|create)\s*:\s*\{/.exec(args);
    const body = data ? balanced(args, data.index + data[0].length - 1) : '';
    if (/\bstatus\s*:/.test(body)) found.push(`${m[1]}.${m[2]}: ${args.slice(0, 120).replace(/\s+/g, ' ')}`);
  }
  for (const m of text.matchAll(/UPDATE\s+"(Task|Attempt)"[^;]*?\bSET\b([\s\S]*?)(\bFROM\b|\bWHERE\b|`)/g))
    if (/(^|[\s,])status\s*=/.test(m[2]!)) found.push(`SQL UPDATE "${m[1]}" SET ${m[2]!.trim().slice(0, 80).replace(/\s+/g, ' ')}`);
  return found;
}

describe('the task and attempt life cycle', () => {
  it('the search finds each way of writing a status', () => {
    expect(statusWrites("await tx.task.update({ where: { id }, data: { status: 'QUEUED', statusReason: 'x' } });")).toHaveLength(1);
    expect(statusWrites("await db.attempt.updateMany({\n  where: { id, status: 'LOST' },\n  data: { status: 'STALE' },\n});")).toHaveLength(
      1,
    );
    expect(
      statusWrites('await tx.$executeRaw`UPDATE "Task" SET "statusReason" = ${r}, status = \'FAILED\' WHERE id = ${id}`;'),
    ).toHaveLength(1);
    expect(statusWrites('UPDATE "Attempt" a SET status = \'STALE\' FROM st WHERE a.id = st.id')).toHaveLength(1);
    // Reads of a status, and writes of other fields, are not writes of it.
    expect(statusWrites("await tx.task.update({ where: { id, status: 'QUEUED' }, data: { statusReason: 'waiting' } });")).toEqual([]);
    expect(statusWrites('UPDATE "Task" SET "statusReason" = $1 WHERE status = \'QUEUED\'')).toEqual([]);
  });

  it('only the life cycle and the statements it lists write Task.status or Attempt.status', () => {
    const allowed = new Set<string>([LIFECYCLE, ...STATUS_STATEMENTS]);
    const writers = new Map<string, string[]>();
    for (const f of sourceFiles(SRC)) {
      const rel = path.relative(SRC, f);
      const w = statusWrites(readFileSync(f, 'utf8'));
      if (w.length) writers.set(rel, w);
    }
    expect([...writers].filter(([f]) => !allowed.has(f))).toEqual([]);
    // The list is not stale: each statement it names writes a status (or creates the rows).
    for (const f of STATUS_STATEMENTS) if (f !== 'db/sql/insertTask.ts') expect(writers.has(f), f).toBe(true);
  });

  it('the tables: finished tasks only become CANCELLED (superseded) or, when FAILED, queued again; finished attempts never move but LOST → STALE', () => {
    expect(TASK_TRANSITIONS.CANCELLED).toEqual([]);
    expect(TASK_TRANSITIONS.SUCCEEDED).toEqual(['CANCELLED']);
    expect([...TASK_TRANSITIONS.FAILED].sort()).toEqual(['CANCELLED', 'QUEUED']);
    expect(taskMayMove('QUEUED', 'SUCCEEDED')).toBe(false);
    expect(taskMayMove('RUNNING', 'QUEUED')).toBe(true);
    for (const s of ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STALE', 'DRAINED'] as const) expect(ATTEMPT_TRANSITIONS[s]).toEqual([]);
    expect(ATTEMPT_TRANSITIONS.LOST).toEqual(['STALE']);
  });

  it('moveTasks refuses a transition the table does not allow before writing, and moves only rows still in a `from` status', async () => {
    const api = await startTestApi();
    const db = api.server.db.prisma;
    const user = await api.signUp();
    const job = await db.job.create({ data: { ownerId: user.userId, title: 't', request: 'r' } });
    const code = await db.codeVersion.create({
      data: { jobId: job.id, status: 'ORIGINAL', origin: 'upload', manifest: [], fileCount: 0, totalBytes: 0 },
    });
    const task = await db.task.create({
      data: { jobId: job.id, ownerId: user.userId, kind: 'RUN', role: 'RUN', name: 'run', codeVersionId: code.id, command: 'true' },
    });
    await expect(moveTasks(db, { id: task.id }, ['CANCELLED'], 'QUEUED')).rejects.toThrow(InvalidTaskTransitionError);
    await expect(moveTasks(db, { id: task.id }, ['QUEUED'], 'SUCCEEDED')).rejects.toThrow(/QUEUED to SUCCEEDED/);
    expect((await db.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('QUEUED');
    // Conditional: a task no longer in `from` (a claim moved it first) is left alone.
    expect(await moveTasks(db, { id: task.id }, ['LEASED', 'RUNNING'], 'FAILED', { statusReason: 'lost' })).toBe(0);
    expect(await moveTasks(db, { id: task.id }, ['QUEUED'], 'CANCELLED', { statusReason: 'the job was cancelled' })).toBe(1);
    expect(await db.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({
      status: 'CANCELLED',
      statusReason: 'the job was cancelled',
    });
  });
});
