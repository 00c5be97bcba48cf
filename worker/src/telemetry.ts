/**
 * Sentry in the worker, on only when SENTRY_DSN is set: errors, structured logs (one per
 * step of an attempt: download, setup, start, timeout, exit, upload, complete, stale, cancel,
 * error — `trace`), and a `task.execute` transaction around each execution, all carrying
 * the job, task, worker and attempt ids. Without a DSN nothing is sent and nothing breaks.
 */
import * as Sentry from '@sentry/node';
import type { Assignment, TraceEvent } from './runner.js';

const ids = (a: Assignment, workerId: string) => ({ job: a.task.jobId, task: a.task.id, worker: workerId, attempt: a.attemptId });

export function initTelemetry(dsn: string | undefined, workerName: string) {
  if (!dsn) return null;
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
            Sentry.captureException(err);
            throw err;
          }
        });
      }),
    /** One structured log of an attempt's step, searchable in Sentry by its ids and `event`. */
    trace: (a: Assignment, workerId: string, e: TraceEvent) =>
      Sentry.logger[e.level ?? 'info'](e.message, { ...ids(a, workerId), event: e.event, task_name: a.task.name, ...(e.errorClass ? { error_class: e.errorClass } : {}) }),
    flush: () => Sentry.flush(5000),
  };
}
