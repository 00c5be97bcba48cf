/**
 * Sentry in the worker, on only when SENTRY_DSN is set: errors, structured logs, and a
 * `task.execute` transaction around each execution tagged with job, task, worker and
 * attempt ids. Without a DSN nothing is sent and nothing breaks.
 */
import * as Sentry from '@sentry/node';
import type { Assignment } from './runner.js';

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
        const tags = { job: a.task.jobId, task: a.task.id, worker: workerId, attempt: a.attemptId };
        scope.setTags(tags);
        return Sentry.startSpan({ name: 'task.execute', op: 'task.execute', forceTransaction: true, attributes: tags }, async () => {
          Sentry.logger.info('task.execute start', tags);
          try {
            return await fn();
          } catch (err) {
            Sentry.captureException(err);
            throw err;
          }
        });
      }),
    flush: () => Sentry.flush(5000),
  };
}
