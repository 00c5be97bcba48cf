/**
 * The job's execution evidence (its `search_logs` tool), from two sources:
 *   - always PostgreSQL: the LogChunks of the job's attempts, matched by plain text
 *     (case-insensitive, in SQL) or by a regular expression (applied here to the job's latest
 *     SCAN_LIMIT chunks), by attempt and time; and the job's events whose payload matches;
 *   - Sentry, when its API is configured (SENTRY_API_URL, SENTRY_AUTH_TOKEN, SENTRY_ORG): the
 *     structured logs the API and the workers sent for this job (sentryLogs.ts). When it is
 *     unreachable the answer says so and still carries the stored lines.
 * `source` says in one line which sources answered. Bounded both ways.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { searchSentryLogs } from './sentryLogs.js';

const SCAN_LIMIT = 5000;
const MAX_LINE = 500;
const EVENT_LIMIT = 20;
const STORED = 'stored logs and job events (PostgreSQL)';

export interface LogQuery {
  query: string;
  regex?: boolean;
  attemptId?: string;
  /** ISO times bounding the lines searched. */
  since?: string;
  until?: string;
  limit?: number;
}

export async function searchLogs(r: { prisma: Db; config: Pick<Config, 'sentryApi'> }, jobId: string, q: LogQuery) {
  const db = r.prisma;
  const limit = Math.min(Math.max(q.limit ?? 50, 1), 200);
  const since = q.since ? new Date(q.since) : undefined;
  const until = q.until ? new Date(q.until) : undefined;
  const range = between(since, until);
  const where = { attempt: { task: { jobId } }, ...(q.attemptId ? { attemptId: q.attemptId } : {}), ...(range ? { ts: range } : {}) };
  const select = {
    attemptId: true,
    seq: true,
    stream: true,
    text: true,
    ts: true,
    attempt: { select: { number: true, task: { select: { name: true } } } },
  } as const;
  const re = q.regex ? new RegExp(q.query, 'i') : null;
  const [rows, events, sentry] = await Promise.all([
    re
      ? db.logChunk
          .findMany({ where, select, orderBy: { ts: 'desc' }, take: SCAN_LIMIT })
          .then((s) => s.filter((c) => re.test(c.text)).slice(0, limit))
      : db.logChunk.findMany({
          where: { ...where, text: { contains: q.query, mode: 'insensitive' } },
          select,
          orderBy: { ts: 'desc' },
          take: limit,
        }),
    matchingEvents(db, jobId, q, re, since, until),
    // Sentry has no regular expressions: for one, ask for the job's lines and match here.
    searchSentryLogs(r.config.sentryApi, jobId, {
      query: re ? '' : q.query,
      ...(q.attemptId ? { attemptId: q.attemptId } : {}),
      ...(since ? { since } : {}),
      ...(until ? { until } : {}),
      limit: re ? 200 : limit,
    }),
  ]);
  const source =
    sentry.status === 'answered'
      ? `Sentry and ${STORED}`
      : sentry.status === 'unreachable'
        ? `${STORED}; Sentry is unreachable (${sentry.detail})`
        : `${STORED}; Sentry is not configured`;
  return {
    source,
    sentry:
      sentry.status === 'answered'
        ? { status: sentry.status, matches: re ? sentry.matches.filter((m) => re.test(m.message)).slice(-limit) : sentry.matches }
        : sentry,
    matches: rows.reverse().map((c) => ({
      attemptId: c.attemptId,
      task: c.attempt.task.name,
      attempt: c.attempt.number,
      seq: c.seq,
      stream: c.stream,
      at: c.ts.toISOString(),
      text: c.text.length > MAX_LINE ? `${c.text.slice(0, MAX_LINE)}…` : c.text,
    })),
    events,
  };
}

/** The job's events (task and attempt status changes, findings, notes) whose payload matches. */
async function matchingEvents(db: Db, jobId: string, q: LogQuery, re: RegExp | null, since?: Date, until?: Date) {
  const range = between(since, until);
  const rows = await db.jobEvent.findMany({
    where: { jobId, kind: { not: 'agent.item' }, ...(range ? { createdAt: range } : {}) },
    orderBy: { id: 'desc' },
    take: SCAN_LIMIT,
    select: { kind: true, payload: true, createdAt: true },
  });
  const needle = q.query.toLowerCase();
  const hits = [];
  for (const e of rows) {
    const text = JSON.stringify(e.payload);
    if (q.attemptId && !text.includes(q.attemptId)) continue;
    if (re ? !re.test(text) && !re.test(e.kind) : !text.toLowerCase().includes(needle) && !e.kind.includes(needle)) continue;
    hits.push({ kind: e.kind, at: e.createdAt.toISOString(), payload: text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}…` : text });
    if (hits.length >= EVENT_LIMIT) break;
  }
  return hits.reverse();
}

/** A Prisma date filter for [since, until], or null for no bound. */
function between(since?: Date, until?: Date) {
  return since || until ? { ...(since ? { gte: since } : {}), ...(until ? { lte: until } : {}) } : null;
}
