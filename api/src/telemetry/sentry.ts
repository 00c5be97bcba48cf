/**
 * Sentry in the API, on only when SENTRY_DSN is set: unexpected errors, spans for the worker
 * protocol and the agents' turns, and one structured log per step of an attempt the API
 * sees (claim, complete, stale, lost), carrying the same job/task/worker/attempt ids as the
 * worker's `task.execute` transaction and its own logs (what search_logs reads back). Everything the supervisor needs is also in PostgreSQL,
 * so nothing depends on Sentry being reachable.
 */
import * as Sentry from '@sentry/node';

let enabled = false;

export function initApiTelemetry(dsn: string | undefined): void {
  if (!dsn || enabled) return;
  Sentry.init({ dsn, tracesSampleRate: 1, release: 'chatgpu-api@0.1.0' });
  enabled = true;
}

/** Runs `fn` in a span (when Sentry is on); `fn` may add attributes it learns on the way. */
export function withSpan<T>(name: string, attributes: Record<string, string>, fn: (span: { setAttributes(a: Record<string, string>): void } | null) => Promise<T>): Promise<T> {
  if (!enabled) return fn(null);
  return Sentry.startSpan({ name, op: name, attributes }, (span) => fn(span));
}

export function reportError(err: unknown, context: Record<string, unknown>): void {
  if (enabled) Sentry.captureException(err, { extra: context });
}

export async function flushTelemetry(): Promise<void> {
  if (enabled) await Sentry.flush(2000);
}

/** One structured log (Sentry Logs) when Sentry is on; attributes are searchable there. */
export function logStructured(message: string, attributes: Record<string, string | number | boolean>): void {
  if (enabled) Sentry.logger.info(message, attributes);
}

/** The four ids every attempt log carries (Sentry attributes, searchable as `job:<id>` …). */
export interface AttemptIds {
  job: string;
  task: string;
  worker: string;
  attempt: string;
}

/** One structured log of a step of an attempt, as the API saw it. */
export function logAttempt(event: string, message: string, ids: AttemptIds, extra: Record<string, string> = {}): void {
  if (enabled) Sentry.logger[event === 'stale' || event === 'lost' ? 'warn' : 'info'](message, { ...ids, event, ...extra });
}
