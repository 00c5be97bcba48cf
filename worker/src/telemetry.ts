/**
 * Sentry in the worker, on only when SENTRY_DSN is set: errors, structured logs (one per
 * step of an attempt: download, setup, start, timeout, exit, upload, complete, stale, cancel,
 * error — `trace`), and a `task.execute` transaction around each execution, all carrying
 * the job, task, worker and attempt ids (the logs as attributes, the transaction and the
 * errors as tags: what search_logs queries). An error step (the worker failing the attempt:
 * DOWNLOAD_FAILED, DEPENDENCY, WORKER_ERROR …) is also an error event, as is an exception
 * escaping the execution. Without a DSN nothing is sent and nothing breaks.
 */
import type * as SentryModule from '@sentry/node';
import type { Assignment, TraceEvent } from './runner.js';

const ids = (a: Assignment, workerId: string) => ({ job: a.task.jobId, task: a.task.id, worker: workerId, attempt: a.attemptId });

/** An error event's exception for a failed step: its type is the error class (DOWNLOAD_FAILED …). */
class AttemptError extends Error {
  constructor(errorClass: string | null | undefined, message: string) {
    super(message);
    this.name = errorClass || 'AttemptError';
  }
}

/** @sentry/node is loaded only when a DSN is set: importing it costs about a second and a half of every worker's start. */
export async function initTelemetry(dsn: string | undefined, workerName: string) {
  if (!dsn) return null;
  const Sentry: typeof SentryModule = await import('@sentry/node');
  Sentry.init({
    dsn,
    tracesSampleRate: 1,
    // A transaction item per execution, carrying the scope's tags (see STACK.md).
    traceLifecycle: 'static',
    release: 'chatgpu-worker@0.1.0',
    serverName: workerName,
  });
  return {
    span: <T>(a: Assignment, workerId: string, fn: () => Promise<T>): Promise<T> =>
      Sentry.withScope((scope) => {
        const tags = ids(a, workerId);
        scope.setTags(tags);
        return Sentry.startSpan({ name: 'task.execute', op: 'task.execute', forceTransaction: true, attributes: tags }, async () => {
          try {
            return await fn();
          } catch (err) {
            Sentry.captureException(err, { tags: { ...tags, event: 'exception' } });
            throw err;
          }
        });
      }),
    /** One structured log of an attempt's step, searchable in Sentry by its ids and `event`. */
    trace: (a: Assignment, workerId: string, e: TraceEvent) => {
      const extra = e.errorClass ? { error_class: e.errorClass } : {};
      Sentry.logger[e.level ?? 'info'](e.message, { ...ids(a, workerId), event: e.event, task_name: a.task.name, ...extra });
      // The worker failing the attempt is an error too, tagged like the transaction.
      if (e.level === 'error') {
        const message = e.errorClass && e.message.startsWith(`${e.errorClass}: `) ? e.message.slice(e.errorClass.length + 2) : e.message;
        Sentry.captureException(new AttemptError(e.errorClass, message), {
          level: 'error',
          tags: { ...ids(a, workerId), event: e.event, ...extra },
          extra: { task_name: a.task.name },
        });
      }
    },
    flush: () => Sentry.flush(5000),
  };
}
