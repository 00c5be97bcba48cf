/**
 * Sentry in the API, on only when SENTRY_DSN is set: unexpected errors, spans for the worker
 * protocol and the agents' turns, and one structured log per step of an attempt the API
 * sees (claim, complete, stale, lost), carrying the same job/task/worker/attempt ids as the
 * worker's `task.execute` transaction and its own logs (what search_logs reads back). An
 * unexpected error thrown inside a span about an attempt carries the ids that span knew as
 * tags (job, task, worker, attempt), as the worker's errors do, so search_logs finds it too.
 * Everything the supervisor needs is also in PostgreSQL, so nothing depends on Sentry being
 * reachable.
 */
import type * as SentryModule from '@sentry/node';

/** Loaded only when a DSN is set: importing @sentry/node costs about a second and a half of start-up. */
let Sentry: typeof SentryModule | null = null;

export async function initApiTelemetry(dsn: string | undefined): Promise<void> {
  if (!dsn || Sentry) return;
  const loaded = await import('@sentry/node');
  if (Sentry) return; // another server of this process loaded it meanwhile
  loaded.init({ dsn, tracesSampleRate: 1, release: 'chatgpu-api@0.1.0' });
  Sentry = loaded;
}

/**
 * Runs `fn` in a span (when Sentry is on); `fn` may add attributes it learns on the way. An
 * error it throws is marked with the attempt ids the span's attributes name (`attempt` or a
 * one-id `attempts`, and so on), which `reportError` sends as tags.
 */
export function withSpan<T>(
  name: string,
  attributes: Record<string, string>,
  fn: (span: { setAttributes(a: Record<string, string>): void } | null) => Promise<T>,
): Promise<T> {
  const S = Sentry;
  if (!S) return fn(null);
  // A request arriving in a trace its caller chose not to record (a worker's long-poll for
  // work, made outside any span of its own) would silently drop this span with it: such a
  // span starts a trace of its own instead, so every claim and completion is recorded.
  const parent = S.getActiveSpan();
  if (parent && (parent.spanContext().traceFlags & 1) === 0) return S.startNewTrace(() => spanOf(S, name, attributes, fn));
  return spanOf(S, name, attributes, fn);
}

function spanOf<T>(
  S: typeof SentryModule,
  name: string,
  attributes: Record<string, string>,
  fn: (span: { setAttributes(a: Record<string, string>): void } | null) => Promise<T>,
): Promise<T> {
  return S.startSpan({ name, op: name, attributes }, async (span) => {
    const known = { ...attributes };
    try {
      return await fn({ setAttributes: (a) => void (Object.assign(known, a), span.setAttributes(a)) });
    } catch (err) {
      tagError(err, idsOf(known));
      throw err;
    }
  });
}

const ERROR_IDS = Symbol.for('chatgpu.attemptIds');

/** Marks an error with the attempt ids known where it was thrown (kept on the first mark, added to after). */
export function tagError(err: unknown, ids: Partial<AttemptIds>): void {
  if (!err || typeof err !== 'object' || !Object.isExtensible(err)) return;
  const own = (err as { [ERROR_IDS]?: Partial<AttemptIds> })[ERROR_IDS];
  Object.defineProperty(err, ERROR_IDS, { value: { ...ids, ...own }, configurable: true, enumerable: false });
}

/** The ids an error was marked with (tagError), for its tags. */
export function errorIds(err: unknown): Partial<AttemptIds> {
  return (err && typeof err === 'object' ? (err as { [ERROR_IDS]?: Partial<AttemptIds> })[ERROR_IDS] : undefined) ?? {};
}

/** The four ids a span's attributes name: singular ones, or a plural one holding one id. */
function idsOf(a: Record<string, string>): Partial<AttemptIds> {
  const one = (v: string | undefined) => (v && !v.includes(',') ? v : undefined);
  const out: Partial<AttemptIds> = {};
  for (const k of ['job', 'task', 'worker', 'attempt'] as const) {
    const v = one(a[k]) ?? one(a[`${k}s`]);
    if (v) out[k] = v;
  }
  return out;
}

/** An unexpected error to Sentry; the attempt ids it was marked with (or `tags` names) are its tags. */
export function reportError(err: unknown, context: Record<string, unknown>, tags: Partial<AttemptIds> = {}): void {
  if (!Sentry) return;
  const ids = { ...errorIds(err), ...tags };
  Sentry.captureException(err, { extra: context, ...(Object.keys(ids).length ? { tags: ids } : {}) });
}

export async function flushTelemetry(): Promise<void> {
  if (Sentry) await Sentry.flush(2000);
}

/** One structured log (Sentry Logs) when Sentry is on; attributes are searchable there. */
export function logStructured(message: string, attributes: Record<string, string | number | boolean>): void {
  if (Sentry) Sentry.logger.info(message, attributes);
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
  if (Sentry) Sentry.logger[event === 'stale' || event === 'lost' ? 'warn' : 'info'](message, { ...ids, event, ...extra });
}
