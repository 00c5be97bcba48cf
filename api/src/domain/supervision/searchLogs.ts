/**
 * The job's stored log lines (its `search_logs` tool): LogChunks of the job's attempts in
 * PostgreSQL, matched by plain text (case-insensitive, in SQL) or by a regular expression
 * (applied here to the job's latest SCAN_LIMIT chunks). Bounded both ways.
 */
import type { Db } from '../../db/client.js';

const SCAN_LIMIT = 5000;
const MAX_LINE = 500;

export async function searchLogs(db: Db, jobId: string, q: { query: string; regex?: boolean; attemptId?: string; limit?: number }) {
  const limit = Math.min(Math.max(q.limit ?? 50, 1), 200);
  const where = { attempt: { task: { jobId } }, ...(q.attemptId ? { attemptId: q.attemptId } : {}) };
  const select = { attemptId: true, seq: true, stream: true, text: true, ts: true, attempt: { select: { number: true, task: { select: { name: true } } } } } as const;
  let rows;
  if (q.regex) {
    const re = new RegExp(q.query, 'i');
    const scanned = await db.logChunk.findMany({ where, select, orderBy: { ts: 'desc' }, take: SCAN_LIMIT });
    rows = scanned.filter((c) => re.test(c.text)).slice(0, limit);
  } else {
    rows = await db.logChunk.findMany({ where: { ...where, text: { contains: q.query, mode: 'insensitive' } }, select, orderBy: { ts: 'desc' }, take: limit });
  }
  return {
    source: 'stored logs (PostgreSQL)',
    matches: rows.reverse().map((c) => ({
      attemptId: c.attemptId,
      task: c.attempt.task.name,
      attempt: c.attempt.number,
      seq: c.seq,
      stream: c.stream,
      at: c.ts.toISOString(),
      text: c.text.length > MAX_LINE ? `${c.text.slice(0, MAX_LINE)}…` : c.text,
    })),
  };
}
