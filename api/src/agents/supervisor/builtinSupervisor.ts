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
 *                                               remember, retry with its memory;
 *                                               none online → stop_with_explanation naming the memory
 *   infrastructure error or lost, twice on    → another eligible worker: remember, reassign
 *   the same worker                             off the failing one; otherwise the engine's own retry stands
 *   DEPENDENCY: a module missing at run time  → remember, replan with the module named (the planner
 *                                               installs it when the requirements provide it, else
 *                                               says what to add); after a replan, again →
 *                                               stop_with_explanation naming the module
 *   DEPENDENCY: the setup could not install   → another eligible worker that installs packages:
 *                                               remember, ask_user "retry on it, or stop?";
 *                                               none → stop_with_explanation with the installer's
 *                                               message (the attempt's, else its last error log line)
 *   the user's answer to that question        → reassign to the worker they chose, or stop
 *   stalled (alive, silent for STALL_MIN)     → remember it with the last line printed; the run goes on
 *   worker flapping (lost FLAP_LOST attempts   → remember it, reassign each QUEUED task of the job
 *   within FLAP_WINDOW_MIN)                      off it (avoidWorkerIds); a running task is left alone
 *   stopped at the cap (job final)            → remember what the billed cost went to per task, the
 *                                               lost work not charged, the estimate and the cap it needs
 *   output rejected by the criteria (final)   → search_logs for warnings/NaN/errors, remember the
 *                                               missed criteria with that evidence; criteria unchanged
 *   a required preparation candidate rejected → remember it (after an earlier request for the step:
 *   (candidate_rejected, the job PREPARING)      "follow-up: not resolved"), request_revision with
 *                                               the checks' feedback (the preparer revises within
 *                                               the budget)
 *   the revision it requested was accepted    → remember "follow-up: resolved"
 *   (candidate_accepted)
 *   anything else                             → nothing: not retried blindly
 */
import { randomUUID } from 'node:crypto';
import type { EligibleWorker } from '../../domain/supervision/eligibleWorkers.js';
import type { JobReport } from '../../domain/supervision/jobReport.js';
import { INFRASTRUCTURE_ERRORS } from '../../domain/leases/errorClasses.js';
import type { Item } from '../models/types.js';
import { parseTrigger, type SupervisorTrigger } from './supervisor.js';
import { countedAttempts } from '../../domain/leases/retryOrFail.js';

type Outputs = Map<string, unknown[]>;

const call = (name: string, args: Record<string, unknown>): Item[] => [
  { type: 'function_call', call_id: `call_${randomUUID()}`, name, arguments: JSON.stringify(args) },
];
const say = (text: string): Item[] => [{ type: 'message', role: 'assistant', content: text }];

export function decideSupervisor(history: Item[], out: Outputs): Item[] {
  const last = <T>(name: string) => out.get(name)?.at(-1) as T | undefined;
  const first = history.find((i): i is Extract<Item, { type: 'message' }> => i.type === 'message' && i.role === 'user');
  const trigger = parseTrigger(first?.content);
  if (!trigger) return say('No trigger to look at.');

  // The user answered this run's question (after its last action): act on the answer.
  const answer = answerAfterLastAction(history);
  if (answer) return actOnAnswer(answer, trigger, out);
  const acted = last<{ done?: string; error?: string }>('take_action');
  // A flapping worker's tasks are moved one action at a time (keepOffFlapping goes on).
  if (acted && (acted.error || trigger.reason !== 'worker_flapping'))
    return say(acted.error ? `The action was refused: ${acted.error}` : `Done: ${acted.done}.`);
  const report = last<JobReport>('get_job');
  if (!report) return call('get_job', {});
  // After the job ended: explain it (the job stays as it ended).
  if (trigger.reason === 'stopped_at_cap') return explainCap(report, out);
  if (trigger.reason === 'output_rejected') return explainRejection(report, trigger, out);
  if (trigger.reason === 'candidate_accepted') {
    if (out.has('remember')) return say('Recorded that the revision worked.');
    return call('remember', {
      observation: `Follow-up: resolved — revision ${trigger.revision} of ${trigger.step} passed its checks and was accepted.`,
      evidence: [`preparation:${trigger.step}:${trigger.revision}`],
      trigger: 'candidate_accepted',
    });
  }
  if (trigger.reason === 'candidate_rejected') {
    // The checks' own feedback (compiler lines, the numbers that differ) is the evidence; the
    // preparation agent revises within the step's budget. The criteria stay as they are.
    if (report.status !== 'PREPARING') return say(`The job is ${report.status}: no revision to request.`);
    const feedback = (trigger.feedback ?? 'see the feedback').slice(0, 1200);
    if (!out.has('remember')) {
      // The finding; after an earlier request for this step, its follow-up: it did not pass.
      const tried = report.findings.some((f) =>
        ((f.data as { evidence?: string[] } | null)?.evidence ?? []).some((e) => e.startsWith(`preparation:${trigger.step}:`)),
      );
      return call('remember', {
        observation: tried
          ? `Follow-up: not resolved — revision ${(trigger.revision ?? 1) - 1} of ${trigger.step} failed its checks too: ${feedback.slice(0, 600)}`
          : `The candidate of ${trigger.step} failed its checks: ${feedback.slice(0, 600)}`,
        evidence: [`preparation:${trigger.step}:${(trigger.revision ?? 1) - 1}`],
        remedy: 'request_revision',
        trigger: 'candidate_rejected',
        followUp: `Revision ${trigger.revision} of ${trigger.step} passes its checks.`,
      });
    }
    return call('take_action', {
      kind: 'request_revision',
      step: trigger.step,
      text: `Revision ${trigger.revision} of ${trigger.step}: the last candidate failed its checks — ${feedback} Change only what these point at; the acceptance criteria and frozen files stay as they are.`,
    });
  }
  if (report.status !== 'RUNNING') return say(`The job is ${report.status}: nothing to do.`);
  if (trigger.reason === 'worker_flapping') return keepOffFlapping(report, trigger, out);
  const task = report.tasks.find((t) => t.id === trigger.taskId);
  if (!task) return say(`Task ${trigger.taskId} is not in this job.`);
  const attempt = task.attempts.find((a) => a.id === trigger.attemptId) ?? task.attempts.at(-1);
  if (!attempt) return say(`Task ${task.name} has no attempt to look at.`);
  // Remedies tried for this task — and a replan, tried for the whole job (its new plan's tasks are new).
  const remedies = report.findings.filter((f) => {
    const d = f.data as { taskId?: string; remedy?: string } | null;
    return !!d?.remedy && (d.taskId === task.id || d.remedy === 'replan');
  });

  if (trigger.reason === 'stalled') {
    // Alive but silent: say so where the user looks (a finding on the timeline, with the last
    // line it printed); the run goes on — silence alone is no proof it is stuck.
    if (out.has('remember')) return say(`Recorded that attempt ${attempt.number} of ${task.name} is silent.`);
    const logs = last<{ matches?: { text: string; at: string }[] }>('search_logs');
    if (!logs) return call('search_logs', { query: '.', regex: true, attemptId: attempt.id, limit: 3 });
    const tail = logs.matches?.at(-1);
    return call('remember', {
      taskId: task.id,
      evidence: [`attempt:${attempt.id}`],
      observation: `Attempt ${attempt.number} of ${task.name} on ${attempt.worker.name} has written no log line or metric for a while, though its worker keeps renewing the lease. ${tail ? `Its last line (${tail.at}): ${tail.text.slice(0, 300)}` : 'It has printed nothing at all.'}`,
      hypothesis:
        'A long silent step (data loading, a compile, a big epoch without progress output), or the program is stuck (a deadlock, waiting on input or the network it does not have).',
      followUp: 'Output resumes, or the attempt ends (its time limit stops it at worst).',
    });
  }

  if (trigger.reason === 'task_succeeded') {
    const open = remedies.at(-1);
    const settled = open && report.findings.some((f) => f.at >= open.at && f.id !== open.id && f.text.startsWith('Follow-up:'));
    if (!open || settled) return say(`Task ${task.name} succeeded.`);
    if (out.has('remember')) return say('Recorded that the recovery worked.');
    const remedy = (open.data as { remedy: string }).remedy;
    return call('remember', {
      taskId: task.id,
      evidence: [`attempt:${attempt.id}`],
      observation: `Follow-up: resolved — after ${remedy}, attempt ${attempt.number} of ${task.name} succeeded on ${attempt.worker.name}.`,
    });
  }
  // STALE is a lost attempt whose worker came back and reported late: lost all the same.
  const lost = (a: { status: string }) => a.status === 'LOST' || a.status === 'STALE';
  const errorClass = lost(attempt) ? 'LEASE_EXPIRED' : (attempt.errorClass ?? 'EXIT_NONZERO');
  const saved = out.has('remember');
  const rememberThen = (finding: Record<string, unknown>, action: Record<string, unknown>) =>
    saved ? call('take_action', action) : call('remember', { taskId: task.id, evidence: [`attempt:${attempt.id}`], ...finding });
  const failWith = (text: string, finding: Record<string, unknown>) => rememberThen(finding, { kind: 'stop_with_explanation', text });

  // A remedy an earlier run tried for this task, and the same failure again: not repeated.
  const infrastructure = INFRASTRUCTURE_ERRORS.has(errorClass) || errorClass === 'LEASE_EXPIRED';
  const sameWorker = task.attempts.filter(
    (a) =>
      a.worker.id === attempt.worker.id &&
      (lost(a) || (a.status === 'FAILED' && a.errorClass !== null && INFRASTRUCTURE_ERRORS.has(a.errorClass))),
  );
  const tried = remedies.find((f) => (f.data as { errorClass?: string }).errorClass === errorClass);
  // An infrastructure failure once on a worker is the scheduler's to retry, remedy or not.
  if (tried && !(infrastructure && sameWorker.length < 2)) {
    const remedy = (tried.data as { remedy: string }).remedy;
    return failWith(
      `Task ${task.name} failed again with ${errorClass} on ${attempt.worker.name} after the supervisor's ${remedy} (${tried.text}). Stopped rather than repeating it.`,
      {
        observation: `Follow-up: not resolved — ${remedy} did not help; attempt ${attempt.number} failed with ${errorClass} on ${attempt.worker.name}.`,
        errorClass,
      },
    );
  }
  const budgetLeft = countedAttempts(task) < task.maxAttempts;

  if (errorClass === 'OOM') {
    const seen = attempt.worker.memoryMiB;
    const what = `Attempt ${attempt.number} of ${task.name} ran out of memory on ${attempt.worker.name}, which has ${seen} MiB${attempt.errorMessage ? ` (${attempt.errorMessage.slice(0, 300)})` : ''}.`;
    if (!budgetLeft) return failWith(`${what} The task used its ${task.maxAttempts} attempts.`, { observation: what, errorClass });
    const workers = last<{ eligible: EligibleWorker[] }>('list_eligible_workers');
    if (!workers) return call('list_eligible_workers', { taskId: task.id, minMemoryMiB: seen + 1 });
    const bigger = workers.eligible.find((w) => w.memoryMiB > seen);
    if (!bigger)
      return failWith(`${what} No online worker has more memory than ${seen} MiB, so retrying cannot help.`, {
        observation: what,
        errorClass,
      });
    return rememberThen(
      {
        observation: what,
        hypothesis: `The run needs more than ${seen} MiB.`,
        remedy: 'retry_more_memory',
        errorClass,
        followUp: `The retry with at least ${bigger.memoryMiB} MiB (${bigger.name}) succeeds.`,
      },
      {
        kind: 'retry',
        taskId: task.id,
        minMemoryMiB: bigger.memoryMiB,
        text: `Out of memory with ${seen} MiB: retried on a worker with ${bigger.memoryMiB} MiB.`,
      },
    );
  }

  if (errorClass === 'DEPENDENCY') {
    // The installer's own words: the attempt's message, else its last error line in the logs.
    const logs = last<{ matches?: { text: string }[] }>('search_logs');
    if (!attempt.errorMessage && !logs) return call('search_logs', { query: 'error', attemptId: attempt.id, limit: 20 });
    const message = (attempt.errorMessage ?? logs?.matches?.at(-1)?.text ?? 'no message in the attempt or its logs').slice(0, 1500);
    const module = /^missing module: (\S+)/.exec(message)?.[1];
    if (module && !report.findings.some((f) => (f.data as { remedy?: string } | null)?.remedy === 'replan')) {
      // Retrying the same plan cannot help: the planner plans again knowing the module is
      // needed (a setup phase installs it when the project's requirements provide it; else it
      // says what the user must add).
      return rememberThen(
        {
          observation: `Attempt ${attempt.number} of ${task.name} stopped on a missing module: ${module} (${attempt.worker.name}).`,
          hypothesis: `The plan does not install ${module}: the program imports it where the planner did not see it, or the workers lack it.`,
          remedy: 'replan',
          errorClass,
          followUp: `The new plan installs ${module} or says what to add; its run gets past the import.`,
        },
        {
          kind: 'replan',
          text: `Attempt ${attempt.number} of task ${task.name} failed on ${attempt.worker.name}: missing module: ${module} (${message}).`,
        },
      );
    }
    if (module) {
      // Imported by the program, and a new plan did not help (or none was possible): retrying
      // anywhere cannot help; the user adds it to the project's requirements.
      return failWith(
        `Task ${task.name} imports the module ${module}, which is not installed on ${attempt.worker.name} and no requirement of the job provides it (${message}). Add the package that provides ${module} to requirements.txt and submit the job again.`,
        {
          observation: `Attempt ${attempt.number} of ${task.name} stopped on a missing module: ${module} (${attempt.worker.name}).`,
          hypothesis: `The project needs ${module} but does not declare it.`,
          errorClass,
        },
      );
    }
    const what = `A dependency could not be installed on ${attempt.worker.name}: ${message}`;
    if (budgetLeft) {
      const workers = last<{ eligible: EligibleWorker[] }>('list_eligible_workers');
      if (!workers) return call('list_eligible_workers', { taskId: task.id });
      const failedHere = (w: EligibleWorker) => w.recentFailures.some((f) => f.taskId === task.id && f.errorClass === 'DEPENDENCY');
      const others = workers.eligible.filter((w) => w.id !== attempt.worker.id && w.installsPackages && !failedHere(w)).slice(0, 3);
      if (others.length) {
        return rememberThen(
          {
            observation: `Setup failed (DEPENDENCY) on ${attempt.worker.name}: ${message}`,
            hypothesis: `${attempt.worker.name} cannot install it (its package index or platform); another worker may.`,
            remedy: 'retry_elsewhere_if_user_agrees',
            errorClass,
            followUp: 'The retry on the worker the user chose installs it.',
          },
          {
            kind: 'ask_user',
            text: `${what}\nRetry task ${task.name} on another worker that installs packages (${others.map((w) => `${w.name}: index ${w.packageIndex ?? "pip's default"}`).join('; ')}), or stop the job?`,
            choices: [...others.map((w) => `Retry on ${w.name}`), STOP_CHOICE],
          },
        );
      }
    }
    return failWith(what, { observation: `Setup failed (DEPENDENCY) on ${attempt.worker.name}: ${message}`, errorClass });
  }

  if (infrastructure) {
    if (sameWorker.length < 2) return say(`${errorClass} on ${attempt.worker.name} once: the scheduler's own retry stands.`);
    if (!budgetLeft) return say(`Task ${task.name} used its ${task.maxAttempts} attempts: nothing left to retry.`);
    const workers = last<{ eligible: EligibleWorker[] }>('list_eligible_workers');
    if (!workers) return call('list_eligible_workers', { taskId: task.id });
    const other = workers.eligible
      .filter((w) => w.id !== attempt.worker.id)
      .sort((a, b) => a.recentFailures.length - b.recentFailures.length)[0];
    if (!other) return say(`Task ${task.name} failed twice on ${attempt.worker.name} (${errorClass}) and no other worker can run it.`);
    const what = `Task ${task.name} failed ${sameWorker.length} times on ${attempt.worker.name} (${errorClass}).`;
    return rememberThen(
      {
        observation: what,
        hypothesis: `${attempt.worker.name} is unreliable for this task.`,
        remedy: 'retry_elsewhere',
        errorClass,
        followUp: `The retry on ${other.name} succeeds.`,
      },
      // Kept off the failing worker rather than pinned to one other: any eligible worker may take it.
      {
        kind: 'reassign',
        taskId: task.id,
        avoidWorkerIds: [attempt.worker.id],
        text: `${what} Retried on another worker (${other.name} or any other that can run it), not on ${attempt.worker.name}.`,
      },
    );
  }
  return say(`${errorClass}: the task's own failure, not retried blindly.`);
}

const STOP_CHOICE = 'Stop the job';

const cad = (n: number) => `${n.toFixed(4)} CAD`;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** A finding of an earlier run already answers this trigger (the event reached several processes, or came twice). */
function answered(report: JobReport, reason: string, taskId?: string): boolean {
  return report.findings.some((f) => {
    const d = f.data as { trigger?: string; taskId?: string } | null;
    return d?.trigger === reason && (!taskId || d.taskId === taskId);
  });
}

/**
 * Stopped at the cap: what the billed money went to (per task, most first), the lost work the
 * user was not charged for, and what finishing would take (the smoke run's estimate).
 */
function explainCap(report: JobReport, out: Outputs): Item[] {
  if (answered(report, 'stopped_at_cap')) return say('The stop at the spending cap is explained already.');
  if (out.has('remember')) return say('Recorded what the budget went to and what finishing would take.');
  const spent = report.tasks
    .map((t) => ({
      name: t.name,
      role: t.role,
      status: t.status,
      n: t.attempts.length,
      billed: sum(t.attempts.map((a) => a.costCad)),
      lost: sum(t.attempts.map((a) => a.lostCostCad)),
      ids: t.attempts.filter((a) => a.costCad > 0).map((a) => `attempt:${a.id}`),
    }))
    .filter((t) => t.billed > 0 || t.lost > 0)
    .sort((a, b) => b.billed - a.billed);
  const cost = Number(report.costCad);
  const lost = Number(report.lostCostCad);
  const estimate = report.estimate as { lowCad?: number; highCad?: number; durationSec?: number } | null;
  const perTask = spent
    .map((t) => `${t.name} ${cad(t.billed)} over ${t.n} attempt${t.n === 1 ? '' : 's'} (${t.status.toLowerCase()})`)
    .join('; ');
  const range =
    estimate?.lowCad !== undefined && estimate.highCad !== undefined ? `${cad(estimate.lowCad)}–${cad(estimate.highCad)}` : null;
  const others = sum(spent.filter((t) => t.role !== 'RUN').map((t) => t.billed));
  return call('remember', {
    trigger: 'stopped_at_cap',
    evidence: spent.flatMap((t) => t.ids).slice(0, 20),
    observation:
      `Stopped at its spending cap of ${report.spendingCapCad} CAD with ${cad(cost)} billed: ${perTask || 'no task had accrued a cost yet'}.` +
      (lost > 0 ? ` ${cad(lost)} of work lost on contributors' workers was not charged.` : '') +
      (range ? ` The smoke run estimated the full run at ${range}.` : ''),
    hypothesis: range
      ? estimate!.highCad! + others > Number(report.spendingCapCad)
        ? `The cap is below what the run was estimated to cost (${range}, plus ${cad(others)} for the other steps).`
        : `The run cost more than its estimate (${range}): it ran longer than the smoke run predicted.`
      : "The run needs more than the cap allows at these workers' rates (no smoke run estimated it).",
    followUp: range
      ? `To finish, submit again with a cap of at least ${cad(estimate!.highCad! + others)} (the estimate's high end plus the other steps).`
      : `To finish, submit again with a higher cap than ${report.spendingCapCad} CAD, or a smaller workload (fewer epochs or steps).`,
  });
}

/**
 * The output missed its fixed criteria: which ones and by how much (the validation event), and
 * what the run's log says about it (warnings, NaN, errors). The criteria are not relaxed.
 */
function explainRejection(report: JobReport, trigger: SupervisorTrigger, out: Outputs): Item[] {
  const task = report.tasks.find((t) => t.id === trigger.taskId);
  if (!task) return say(`Task ${trigger.taskId} is not in this job.`);
  if (answered(report, 'output_rejected', task.id)) return say('The rejected output is explained already.');
  if (out.has('remember')) return say(`Recorded why the output of ${task.name} was rejected.`);
  const attempt = [...task.attempts].reverse().find((a) => a.status === 'SUCCEEDED') ?? task.attempts.at(-1);
  const logs = out.get('search_logs')?.at(-1) as { matches?: { text: string; seq: number; attemptId: string }[] } | undefined;
  if (!logs && attempt)
    return call('search_logs', { query: 'nan|inf\\b|warn|error|traceback|diverg', regex: true, attemptId: attempt.id, limit: 5 });
  const validation = [...report.recentEvents]
    .reverse()
    .find((e) => e.kind === 'validation' && (e.payload as { ok?: boolean }).ok === false);
  const v = (validation?.payload ?? {}) as { problems?: string[]; metrics?: Record<string, unknown> };
  const problems = v.problems?.length ? v.problems.join('; ') : (report.statusReason ?? 'the acceptance criteria were not met');
  const lines = logs?.matches ?? [];
  const metrics = Object.entries(v.metrics ?? {})
    .slice(0, 6)
    .map(([k, x]) => `${k}=${JSON.stringify(x)}`)
    .join(', ');
  return call('remember', {
    trigger: 'output_rejected',
    taskId: task.id,
    evidence: [
      ...(attempt ? [`attempt:${attempt.id}`] : []),
      ...(validation ? [`event:${validation.id}`] : []),
      ...lines.map((l) => `log:${l.attemptId}:${l.seq}`),
    ].slice(0, 20),
    observation: `The output of ${task.name}${attempt ? ` (attempt ${attempt.number} on ${attempt.worker.name})` : ''} missed the acceptance criteria: ${problems}.${metrics ? ` Its final metrics: ${metrics}.` : ''}`,
    hypothesis: lines.length
      ? `The run's log points at the cause: ${lines.map((l) => `"${l.text.trim().slice(0, 200)}"`).join(' · ')}`
      : 'The program ran to its end without an error: its result is not good enough for the criteria (too short a run, a learning rate or data problem), or it did not write the declared output.',
    followUp: 'The criteria stay as they are: change the program or the request (e.g. more epochs) and submit again.',
  });
}

/**
 * A flapping worker: this job's queued tasks are kept off it (one reassignment per task, each
 * checked by take_action), before each of them has to be lost there twice.
 */
function keepOffFlapping(report: JobReport, trigger: SupervisorTrigger, out: Outputs): Item[] {
  const workerId = trigger.workerId!;
  const done = new Set((out.get('take_action') ?? []).map((o) => (o as { taskId?: string }).taskId));
  const lostHere = report.tasks.filter((t) =>
    t.attempts.some((a) => a.worker.id === workerId && (a.status === 'LOST' || a.status === 'STALE')),
  );
  const name = lostHere.flatMap((t) => t.attempts).find((a) => a.worker.id === workerId)?.worker.name ?? workerId;
  const queued = report.tasks.filter((t) => t.status === 'QUEUED' && t.pinnedWorker?.id !== workerId && countedAttempts(t) < t.maxAttempts);
  if (!out.has('remember')) {
    if (
      answered(report, 'worker_flapping') &&
      report.findings.some((f) => (f.data as { evidence?: string[] } | null)?.evidence?.includes(`worker:${workerId}`))
    )
      return say(`${name} was already found flapping.`);
    return call('remember', {
      trigger: 'worker_flapping',
      evidence: [
        `worker:${workerId}`,
        ...lostHere.flatMap((t) => t.attempts.filter((a) => a.worker.id === workerId).map((a) => `attempt:${a.id}`)),
      ].slice(0, 20),
      observation: `Worker ${name} lost ${trigger.lost} attempts within ${trigger.windowMin} min (its lease ran out each time), ${lostHere.length} of them this job's: it keeps vanishing.`,
      hypothesis: `${name} is unreliable right now (a flaky network, a machine that sleeps or restarts).`,
      remedy: 'keep_off_flapping_worker',
      followUp: queued.length
        ? `The ${queued.length} queued task(s) run elsewhere and succeed.`
        : 'No queued task of this job to move; new retries may still land on it.',
    });
  }
  const next = queued.find((t) => !done.has(t.id));
  if (!next) return say(done.size ? `Kept ${done.size} task(s) off ${name}.` : `No queued task of this job to keep off ${name}.`);
  return call('take_action', {
    kind: 'reassign',
    taskId: next.id,
    avoidWorkerIds: [workerId],
    text: `Worker ${name} is flapping (${trigger.lost} attempts lost in ${trigger.windowMin} min): ${next.name} runs on another worker.`,
  });
}

/** The user's answer to this run's question, when it came after the run's last action. */
function answerAfterLastAction(history: Item[]): { question: string; answer: string } | null {
  let lastAction = -1;
  let found: { at: number; question: string; answer: string } | null = null;
  history.forEach((i, at) => {
    if (i.type === 'function_call' && i.name === 'take_action') lastAction = at;
    if (i.type === 'message' && i.role === 'user') {
      const m = /^Answer to "([\s\S]*)": ([\s\S]*)$/.exec(i.content);
      if (m) found = { at, question: m[1]!, answer: m[2]!.trim() };
    }
  });
  const f = found as { at: number; question: string; answer: string } | null;
  return f && f.at > lastAction ? { question: f.question, answer: f.answer } : null;
}

/** "Retry on <worker>" → reassign there (checked by take_action like any other); anything else → stop. */
function actOnAnswer(a: { question: string; answer: string }, trigger: SupervisorTrigger, out: Outputs): Item[] {
  const name = /^Retry on (.+)$/.exec(a.answer)?.[1];
  const workers = out.get('list_eligible_workers')?.at(-1) as { eligible: EligibleWorker[] } | undefined;
  const w = name ? workers?.eligible.find((x) => x.name === name) : undefined;
  if (w)
    return call('take_action', {
      kind: 'reassign',
      taskId: trigger.taskId,
      onWorkerId: w.id,
      text: `Retried on ${w.name}, as the user chose.`,
    });
  const first = a.question.split('\n')[0]!;
  return call('take_action', {
    kind: 'stop_with_explanation',
    text:
      a.answer === STOP_CHOICE
        ? `${first} Stopped, as you chose.`
        : `${first} Stopped: the answer "${a.answer.slice(0, 200)}" names no worker to retry on.`,
  });
}
