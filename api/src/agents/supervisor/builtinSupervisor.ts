/**
 * The builtin model's supervisor rules (deterministic; the default without an API key).
 * It reads the trigger (the run's first message), then get_job, and answers with the same
 * tool calls a model would make:
 *
 *   job not RUNNING                          → nothing (say so)
 *   the task succeeded after a remedy         → remember "follow-up: resolved"
 *   a remedy a finding records, failing again → remember "not resolved", fail_job (an
 *   the same way                                infrastructure failure: only twice on one worker)
 *   OOM                                       → a worker with more memory than the attempt had:
 *                                               remember, retry_task with its memory;
 *                                               none online → fail_job naming the memory
 *   infrastructure error or lost, twice on    → another eligible worker: remember, retry_task
 *   the same worker                             on it; otherwise the engine's own retry stands
 *   DEPENDENCY                                → remember, fail_job with the installer's message
 *                                               (the attempt's, else its last error log line)
 *   anything else                             → nothing: not retried blindly
 */
import { randomUUID } from 'node:crypto';
import type { EligibleWorker } from '../../domain/supervision/eligibleWorkers.js';
import type { JobReport } from '../../domain/supervision/jobReport.js';
import { INFRASTRUCTURE_ERRORS } from '../../domain/leases/errorClasses.js';
import type { Item } from '../models/types.js';
import type { SupervisorTrigger } from './supervisor.js';

type Outputs = Map<string, unknown[]>;

const call = (name: string, args: Record<string, unknown>): Item[] => [{ type: 'function_call', call_id: `call_${randomUUID()}`, name, arguments: JSON.stringify(args) }];
const say = (text: string): Item[] => [{ type: 'message', role: 'assistant', content: text }];

export function decideSupervisor(history: Item[], out: Outputs): Item[] {
  const last = <T>(name: string) => out.get(name)?.at(-1) as T | undefined;
  const first = history.find((i): i is Extract<Item, { type: 'message' }> => i.type === 'message' && i.role === 'user');
  const trigger = parseTrigger(first?.content);
  if (!trigger) return say('No trigger to look at.');

  const acted = last<{ done?: string; error?: string }>('take_action');
  if (acted) return say(acted.error ? `The action was refused: ${acted.error}` : `Done: ${acted.done}.`);
  const report = last<JobReport>('get_job');
  if (!report) return call('get_job', {});
  if (report.status !== 'RUNNING') return say(`The job is ${report.status}: nothing to do.`);
  const task = report.tasks.find((t) => t.id === trigger.taskId);
  if (!task) return say(`Task ${trigger.taskId} is not in this job.`);
  const attempt = task.attempts.find((a) => a.id === trigger.attemptId) ?? task.attempts.at(-1);
  if (!attempt) return say(`Task ${task.name} has no attempt to look at.`);
  const remedies = report.findings.filter((f) => (f.data as { taskId?: string; remedy?: string } | null)?.taskId === task.id && (f.data as { remedy?: string }).remedy);

  if (trigger.reason === 'task_succeeded') {
    const open = remedies.at(-1);
    const settled = open && report.findings.some((f) => f.at >= open.at && f.id !== open.id && f.text.startsWith('Follow-up:'));
    if (!open || settled) return say(`Task ${task.name} succeeded.`);
    if (out.has('remember')) return say('Recorded that the recovery worked.');
    const remedy = (open.data as { remedy: string }).remedy;
    return call('remember', { taskId: task.id, evidence: [`attempt:${attempt.id}`], observation: `Follow-up: resolved — after ${remedy}, attempt ${attempt.number} of ${task.name} succeeded on ${attempt.worker.name}.` });
  }
  const errorClass = attempt.status === 'LOST' ? 'LEASE_EXPIRED' : (attempt.errorClass ?? 'EXIT_NONZERO');
  const saved = out.has('remember');
  const rememberThen = (finding: Record<string, unknown>, action: Record<string, unknown>) =>
    saved ? call('take_action', action) : call('remember', { taskId: task.id, evidence: [`attempt:${attempt.id}`], ...finding });
  const failWith = (text: string, finding: Record<string, unknown>) => rememberThen(finding, { kind: 'fail_job', text });

  // A remedy an earlier run tried for this task, and the same failure again: not repeated.
  const infrastructure = INFRASTRUCTURE_ERRORS.has(errorClass) || errorClass === 'LEASE_EXPIRED';
  const sameWorker = task.attempts.filter((a) => a.worker.id === attempt.worker.id && (a.status === 'LOST' || (a.status === 'FAILED' && a.errorClass !== null && INFRASTRUCTURE_ERRORS.has(a.errorClass))));
  const tried = remedies.find((f) => (f.data as { errorClass?: string }).errorClass === errorClass);
  // An infrastructure failure once on a worker is the scheduler's to retry, remedy or not.
  if (tried && !(infrastructure && sameWorker.length < 2)) {
    const remedy = (tried.data as { remedy: string }).remedy;
    return failWith(`Task ${task.name} failed again with ${errorClass} on ${attempt.worker.name} after the supervisor's ${remedy} (${tried.text}). Stopped rather than repeating it.`, {
      observation: `Follow-up: not resolved — ${remedy} did not help; attempt ${attempt.number} failed with ${errorClass} on ${attempt.worker.name}.`,
      errorClass,
    });
  }
  const budgetLeft = task.attemptCount < task.maxAttempts;

  if (errorClass === 'OOM') {
    const seen = attempt.worker.memoryMiB;
    const what = `Attempt ${attempt.number} of ${task.name} ran out of memory on ${attempt.worker.name}, which has ${seen} MiB${attempt.errorMessage ? ` (${attempt.errorMessage.slice(0, 300)})` : ''}.`;
    if (!budgetLeft) return failWith(`${what} The task used its ${task.maxAttempts} attempts.`, { observation: what, errorClass });
    const workers = last<{ eligible: EligibleWorker[] }>('list_eligible_workers');
    if (!workers) return call('list_eligible_workers', { taskId: task.id, minMemoryMiB: seen + 1 });
    const bigger = workers.eligible.find((w) => w.memoryMiB > seen);
    if (!bigger) return failWith(`${what} No online worker has more memory than ${seen} MiB, so retrying cannot help.`, { observation: what, errorClass });
    return rememberThen(
      { observation: what, hypothesis: `The run needs more than ${seen} MiB.`, remedy: 'retry_more_memory', errorClass, followUp: `The retry with at least ${bigger.memoryMiB} MiB (${bigger.name}) succeeds.` },
      { kind: 'retry_task', taskId: task.id, minMemoryMiB: bigger.memoryMiB, text: `Out of memory with ${seen} MiB: retried on a worker with ${bigger.memoryMiB} MiB.` },
    );
  }

  if (errorClass === 'DEPENDENCY') {
    // The installer's own words: the attempt's message, else its last error line in the logs.
    const logs = last<{ matches?: { text: string }[] }>('search_logs');
    if (!attempt.errorMessage && !logs) return call('search_logs', { query: 'error', attemptId: attempt.id, limit: 20 });
    const message = (attempt.errorMessage ?? logs?.matches?.at(-1)?.text ?? 'no message in the attempt or its logs').slice(0, 1500);
    return failWith(`A dependency could not be installed on ${attempt.worker.name}: ${message}`, { observation: `Setup failed (DEPENDENCY) on ${attempt.worker.name}: ${message}`, errorClass });
  }

  if (infrastructure) {
    if (sameWorker.length < 2) return say(`${errorClass} on ${attempt.worker.name} once: the scheduler's own retry stands.`);
    if (!budgetLeft) return say(`Task ${task.name} used its ${task.maxAttempts} attempts: nothing left to retry.`);
    const workers = last<{ eligible: EligibleWorker[] }>('list_eligible_workers');
    if (!workers) return call('list_eligible_workers', { taskId: task.id });
    const other = workers.eligible.filter((w) => w.id !== attempt.worker.id).sort((a, b) => a.recentFailures.length - b.recentFailures.length)[0];
    if (!other) return say(`Task ${task.name} failed twice on ${attempt.worker.name} (${errorClass}) and no other worker can run it.`);
    const what = `Task ${task.name} failed ${sameWorker.length} times on ${attempt.worker.name} (${errorClass}).`;
    return rememberThen(
      { observation: what, hypothesis: `${attempt.worker.name} is unreliable for this task.`, remedy: 'retry_elsewhere', errorClass, followUp: `The retry on ${other.name} succeeds.` },
      // Kept off the failing worker rather than pinned to one other: any eligible worker may take it.
      { kind: 'retry_task', taskId: task.id, avoidWorkerIds: [attempt.worker.id], text: `${what} Retried on another worker (${other.name} or any other that can run it), not on ${attempt.worker.name}.` },
    );
  }
  return say(`${errorClass}: the task's own failure, not retried blindly.`);
}

function parseTrigger(text: string | undefined): SupervisorTrigger | null {
  const m = /^Trigger: (\{.*\})$/s.exec(text ?? '');
  if (!m) return null;
  try {
    return JSON.parse(m[1]!) as SupervisorTrigger;
  } catch {
    return null;
  }
}
