/**
 * Reads the job's structured logs back from Sentry (the supervisor's `search_logs`): the
 * API and the workers send one log per step of an attempt (claim, download, setup, start,
 * exit, upload, complete, stale, cancel, error) carrying the job, task, worker and attempt
 * ids as attributes; this asks Sentry's Explore API for the ones of this job.
 *
 *   GET {url}/api/0/organizations/{org}/events/?dataset=ourlogs&field=…&query=job:<id> …
 *   Authorization: Bearer <token>          → { data: [{ timestamp, message, severity, … }] }
 *
 * Never throws: an unreachable or refusing Sentry is an answer ({ status: 'unreachable' }),
 * and the caller answers from PostgreSQL alone.
 */
import type { Config } from '../../config.js';

export const SENTRY_LOG_FIELDS = ['timestamp', 'message', 'severity', 'job', 'task', 'worker', 'attempt', 'event', 'error_class'] as const;
const TIMEOUT_MS = 5000;

export interface SentryLogLine {
  at: string;
  message: string;
  severity: string;
  attemptId: string | null;
  taskId: string | null;
  workerId: string | null;
  event: string | null;
  errorClass: string | null;
}

export type SentryAnswer =
  | { status: 'answered'; matches: SentryLogLine[] }
  | { status: 'unreachable'; detail: string }
  | { status: 'not configured' };

/** Sentry's search syntax: a quoted value, with its own quotes and backslashes escaped. */
const quote = (v: string) => `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

export async function searchSentryLogs(
  api: Config['sentryApi'],
  jobId: string,
  q: { query: string; attemptId?: string; since?: Date; until?: Date; limit: number },
): Promise<SentryAnswer> {
  if (!api) return { status: 'not configured' };
  const terms = [`job:${jobId}`, ...(q.attemptId ? [`attempt:${q.attemptId}`] : []), ...(q.query ? [`message:${quote(`*${q.query}*`)}`] : [])];
  const params = new URLSearchParams({ dataset: 'ourlogs', query: terms.join(' '), sort: '-timestamp', per_page: String(q.limit) });
  for (const f of SENTRY_LOG_FIELDS) params.append('field', f);
  if (api.project) params.set('project', api.project);
  if (q.since || q.until) {
    params.set('start', (q.since ?? new Date(0)).toISOString());
    params.set('end', (q.until ?? new Date()).toISOString());
  } else params.set('statsPeriod', '14d');
  const url = `${api.url}/api/0/organizations/${encodeURIComponent(api.org)}/events/?${params}`;
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${api.token}`, accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!res.ok) return { status: 'unreachable', detail: `Sentry answered HTTP ${res.status}` };
    const body = (await res.json()) as { data?: Record<string, unknown>[] };
    if (!Array.isArray(body.data)) return { status: 'unreachable', detail: 'Sentry answered without a data list' };
    const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
    const matches = body.data
      .filter((d) => d.job === jobId) // never another job's lines, whatever the server matched
      .map((d) => ({
        at: str(d.timestamp) ?? '',
        message: String(d.message ?? '').slice(0, 500),
        severity: str(d.severity) ?? 'info',
        attemptId: str(d.attempt),
        taskId: str(d.task),
        workerId: str(d.worker),
        event: str(d.event),
        errorClass: str(d.error_class),
      }))
      .reverse();
    return { status: 'answered', matches };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return { status: 'unreachable', detail: e.name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : (e.cause?.code ?? e.message) };
  }
}
