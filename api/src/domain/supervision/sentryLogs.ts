/**
 * Reads the job's execution evidence back from Sentry (the supervisor's `search_logs`), two
 * queries of its Discover/Explore API, in parallel:
 *   - the structured logs (dataset=ourlogs): the API and the workers send one per step of an
 *     attempt (claim, download, setup, start, exit, upload, complete, stale, cancel, error)
 *     carrying the job, task, worker and attempt ids as attributes;
 *   - the error events (dataset=errors): what the API and the workers captured about an
 *     attempt, carrying the same four ids as tags (a worker's failure — DOWNLOAD_FAILED,
 *     DEPENDENCY, WORKER_ERROR — or an unexpected exception).
 *
 *   GET {url}/api/0/organizations/{org}/events/?dataset=ourlogs&field=…&query=job:"<id>" …
 *   GET {url}/api/0/organizations/{org}/events/?dataset=errors&field=…&query=job:"<id>" …
 *   Authorization: Bearer <token>          → { data: [{ timestamp, message, … }], meta: { fields } }
 *
 * Both answer as lines, oldest first (an error event: severity its level, event 'exception').
 * Never throws: one unreachable or refusing request makes the whole answer unreachable
 * ({ status: 'unreachable' }), and the caller answers from PostgreSQL alone.
 */
import type { Config } from '../../config.js';

export const SENTRY_LOG_FIELDS = ['timestamp', 'message', 'severity', 'job', 'task', 'worker', 'attempt', 'event', 'error_class'] as const;
/** The error events' fields: the four ids (and the step and class) are the event's tags. */
export const SENTRY_ERROR_FIELDS = [
  'id',
  'timestamp',
  'title',
  'message',
  'level',
  'job',
  'task',
  'worker',
  'attempt',
  'event',
  'error_class',
] as const;
const TIMEOUT_MS = 5000;

export interface SentryLogLine {
  at: string;
  message: string;
  severity: string;
  attemptId: string | null;
  taskId: string | null;
  workerId: string | null;
  /** The attempt's step for a structured log; 'exception' for an error event. */
  event: string | null;
  errorClass: string | null;
  /** Which Sentry dataset the line came from: a structured log or an error event. */
  kind: 'log' | 'error';
  /** An error event's id in Sentry. */
  eventId?: string;
}

export type SentryAnswer =
  { status: 'answered'; matches: SentryLogLine[] } | { status: 'unreachable'; detail: string } | { status: 'not configured' };

/** Sentry's search syntax: a quoted value, with its own quotes and backslashes escaped. */
const quote = (v: string) => `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
const str = (v: unknown) => (typeof v === 'string' && v ? v : null);

type Query = { query: string; attemptId?: string; since?: Date; until?: Date; limit: number };
type Fetched = { ok: true; data: Record<string, unknown>[] } | { ok: false; detail: string };

export async function searchSentryLogs(api: Config['sentryApi'], jobId: string, q: Query): Promise<SentryAnswer> {
  if (!api) return { status: 'not configured' };
  const [logs, errors] = await Promise.all([
    fetchEvents(api, 'ourlogs', SENTRY_LOG_FIELDS, jobId, q),
    fetchEvents(api, 'errors', SENTRY_ERROR_FIELDS, jobId, q),
  ]);
  if (!logs.ok) return { status: 'unreachable', detail: logs.detail };
  if (!errors.ok) return { status: 'unreachable', detail: errors.detail };
  const mine = (d: Record<string, unknown>) => d.job === jobId; // never another job's lines, whatever the server matched
  const lines: SentryLogLine[] = [
    ...logs.data.filter(mine).map((d) => ({
      at: str(d.timestamp) ?? '',
      message: String(d.message ?? '').slice(0, 500),
      severity: str(d.severity) ?? 'info',
      attemptId: str(d.attempt),
      taskId: str(d.task),
      workerId: str(d.worker),
      event: str(d.event),
      errorClass: str(d.error_class),
      kind: 'log' as const,
    })),
    ...errors.data.filter(mine).map((d) => ({
      at: str(d.timestamp) ?? '',
      message: String(str(d.title) ?? str(d.message) ?? '').slice(0, 500),
      severity: str(d.level) ?? 'error',
      attemptId: str(d.attempt),
      taskId: str(d.task),
      workerId: str(d.worker),
      event: 'exception',
      errorClass: str(d.error_class),
      kind: 'error' as const,
      ...(str(d.id) ? { eventId: str(d.id)! } : {}),
    })),
  ];
  // Newest `limit` of both, oldest first.
  const time = (l: SentryLogLine) => Date.parse(l.at) || 0;
  const matches = lines
    .sort((a, b) => time(b) - time(a))
    .slice(0, q.limit)
    .reverse();
  return { status: 'answered', matches };
}

async function fetchEvents(
  api: NonNullable<Config['sentryApi']>,
  dataset: 'ourlogs' | 'errors',
  fields: readonly string[],
  jobId: string,
  q: Query,
): Promise<Fetched> {
  const terms = [
    `job:${quote(jobId)}`,
    ...(q.attemptId ? [`attempt:${quote(q.attemptId)}`] : []),
    ...(q.query ? [`message:${quote(`*${q.query}*`)}`] : []),
  ];
  const params = new URLSearchParams({ dataset, query: terms.join(' '), sort: '-timestamp', per_page: String(q.limit) });
  for (const f of fields) params.append('field', f);
  if (api.project) params.set('project', api.project);
  if (q.since || q.until) {
    params.set('start', (q.since ?? new Date(0)).toISOString());
    params.set('end', (q.until ?? new Date()).toISOString());
  } else params.set('statsPeriod', '14d');
  const url = `${api.url}/api/0/organizations/${encodeURIComponent(api.org)}/events/?${params}`;
  try {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${api.token}`, accept: 'application/json' },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok) return { ok: false, detail: `Sentry answered HTTP ${res.status}` };
    const body = (await res.json()) as { data?: Record<string, unknown>[] };
    if (!Array.isArray(body.data)) return { ok: false, detail: 'Sentry answered without a data list' };
    return { ok: true, data: body.data };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return { ok: false, detail: e.name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : (e.cause?.code ?? e.message) };
  }
}
