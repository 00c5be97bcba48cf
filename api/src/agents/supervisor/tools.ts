/**
 * The supervisor's tools (names are the public contract): `get_job`, `list_eligible_workers`,
 * `search_logs` read; `take_action` and `remember` are thin adapters over
 * domain/supervision/, committed inside the loop's Action transaction (which verifies the
 * agent lock). Every argument is validated by its schema, then checked against the job's
 * scope and limits before dispatch (`check`), and again inside the transaction.
 */
import { z } from 'zod';
import { eligibleWorkers } from '../../domain/supervision/eligibleWorkers.js';
import { jobReport } from '../../domain/supervision/jobReport.js';
import { searchLogs } from '../../domain/supervision/searchLogs.js';
import {
  askDuringRun,
  askProblem,
  failJob,
  MAX_REPLANS,
  noteOnJob,
  replanJob,
  replanProblem,
  requestRevision,
  retryProblem,
  retryTask,
  revisionProblem,
  saveFinding,
} from '../../domain/supervision/supervisorActions.js';
import { defineTool, type ToolContext } from '../tool.js';

const uuid = z.string().uuid();

async function taskOfJob(ctx: ToolContext, taskId: string): Promise<string | null> {
  const t = await ctx.r.prisma.task.findUnique({ where: { id: taskId }, select: { jobId: true } });
  return t && t.jobId === ctx.jobId ? null : `Task ${taskId} is not a task of this job.`;
}

export const getJob = defineTool({
  name: 'get_job',
  description:
    "This job's status, plan, acceptance criteria, tasks and attempts (error class, message, worker), cost so far against the cap, recent events and the findings saved by earlier supervisor runs.",
  schema: z.object({}).strict(),
  read: async (_a, ctx) => ({ output: await jobReport(ctx.r, ctx.jobId) }),
});

export const listEligibleWorkers = defineTool({
  name: 'list_eligible_workers',
  description:
    "Online workers that could run one of this job's tasks (optionally with more memory than it asks now): their memory, accelerators and recent failures on this job, and why the others cannot.",
  schema: z.object({ taskId: uuid, minMemoryMiB: z.number().int().min(0).max(10_000_000).optional() }).strict(),
  check: (a, ctx) => taskOfJob(ctx, a.taskId),
  read: async (a, ctx) => ({
    output: await eligibleWorkers(ctx.r.prisma, ctx.jobId, a.taskId, a.minMemoryMiB !== undefined ? { minMemoryMiB: a.minMemoryMiB } : {}),
  }),
});

export const searchLogsTool = defineTool({
  name: 'search_logs',
  description:
    "Search this job's execution evidence (all attempts, or one; optionally between two ISO times) by text (case-insensitive) or by a regular expression: the stored log lines and job events in PostgreSQL, and the structured logs and error events (tagged with the job, task, worker and attempt) the API and the workers sent to Sentry when it is configured. At most 200 lines per source; `source` says which sources answered (and why Sentry did not).",
  schema: z
    .object({
      query: z.string().min(1).max(200),
      regex: z.boolean().optional(),
      attemptId: uuid.optional(),
      since: z.string().datetime({ offset: true }).optional(),
      until: z.string().datetime({ offset: true }).optional(),
      limit: z.number().int().min(1).max(200).optional(),
    })
    .strict(),
  check: async (a, ctx) => {
    if (a.regex) {
      try {
        new RegExp(a.query, 'i');
      } catch (err) {
        return `Not a valid regular expression: ${(err as Error).message}`;
      }
    }
    if (a.attemptId) {
      const at = await ctx.r.prisma.attempt.findUnique({ where: { id: a.attemptId }, select: { task: { select: { jobId: true } } } });
      if (!at || at.task.jobId !== ctx.jobId) return `Attempt ${a.attemptId} is not an attempt of this job.`;
    }
    return null;
  },
  read: async (a, ctx) => ({ output: await searchLogs(ctx.r, ctx.jobId, a) }),
});

const TakeAction = z
  .object({
    kind: z.enum(['retry', 'reassign', 'replan', 'request_revision', 'ask_user', 'stop_with_explanation', 'note']),
    taskId: uuid.optional().describe('retry, reassign: the task of this job'),
    minMemoryMiB: z
      .number()
      .int()
      .min(0)
      .max(10_000_000)
      .optional()
      .describe('retry, reassign: ask for at least this much memory (never less than the task asks now)'),
    onWorkerId: uuid.optional().describe('reassign: run the retry on this eligible worker (a pinned task keeps its worker)'),
    avoidWorkerIds: z
      .array(uuid)
      .max(20)
      .optional()
      .describe('reassign: keep the retry off these workers (e.g. the one it keeps failing on); any other eligible worker may take it'),
    accelVendor: z.string().max(20).optional().describe("retry, reassign: the accelerator vendor; must stay the plan's"),
    step: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('request_revision: the preparation step whose rejected candidate the preparation agent revises'),
    text: z
      .string()
      .min(1)
      .max(4000)
      .optional()
      .describe(
        'stop_with_explanation: the explanation for the user; replan: the evidence for the planner (what failed, the log line); request_revision: the evidence and what to change, for the preparation agent; ask_user: the question; note: the note; retry, reassign: why',
      ),
    choices: z.array(z.string().min(1).max(300)).min(1).max(10).optional().describe('ask_user: the answers the user can pick'),
  })
  .strict();
type TakeActionArgs = z.infer<typeof TakeAction>;

/** The fields each kind takes (besides kind and text); anything else is refused. */
const FIELDS: Record<TakeActionArgs['kind'], readonly (keyof TakeActionArgs)[]> = {
  retry: ['taskId', 'minMemoryMiB', 'accelVendor'],
  reassign: ['taskId', 'minMemoryMiB', 'onWorkerId', 'avoidWorkerIds', 'accelVendor'],
  replan: [],
  request_revision: ['step'],
  ask_user: ['choices'],
  stop_with_explanation: [],
  note: [],
};

export const takeAction = defineTool({
  name: 'take_action',
  description: `Act on this job: retry (a FAILED or QUEUED task, within its attempt budget, the plan's hardware class and the spending cap; optionally with more memory), reassign (the same, placed on a named eligible worker (onWorkerId) or kept off the workers it failed on (avoidWorkerIds); a pinned task keeps its worker), replan (hand the job back to the planner with the evidence in text — e.g. a module missing at run time — when the plan itself must change; its unfinished work is cancelled, the acceptance criteria stay; at most ${MAX_REPLANS} times per job), request_revision (a required preparation step whose candidate failed its checks: the evidence in text goes to the preparation agent with the checks' feedback, for the revision the stage waits on, within its budget), ask_user (a question in text with choices; the run waits for the answer, the job shows it), stop_with_explanation (end the job with the explanation in text), note (a line on the job's timeline). Anything outside the job's scope or limits is refused with the reason.`,
  schema: TakeAction,
  // A recovered ask_user (committed before a crash) waits for the answer; a stop ends the run.
  recoveredControl: (a) =>
    a.kind === 'ask_user'
      ? 'wait'
      : a.kind === 'stop_with_explanation' || a.kind === 'replan' || a.kind === 'request_revision'
        ? 'finish'
        : undefined,
  check: async (a, ctx) => {
    const extra = (Object.keys(a) as (keyof TakeActionArgs)[]).filter(
      (k) => a[k] !== undefined && a[k] !== null && k !== 'kind' && k !== 'text' && !FIELDS[a.kind].includes(k),
    );
    if (extra.length) return `${a.kind} does not take ${extra.join(', ')}.`;
    if (a.kind === 'retry' || a.kind === 'reassign') {
      if (!a.taskId) return `${a.kind} needs taskId.`;
      if (a.kind === 'reassign' && !a.onWorkerId && !a.avoidWorkerIds?.length)
        return 'reassign needs onWorkerId or avoidWorkerIds (a plain retry is kind retry).';
      return retryProblem(ctx.r.prisma, ctx.jobId, a.taskId, changes(a), { rates: ctx.r.config.rates, now: ctx.r.now() });
    }
    if (!a.text) return `${a.kind} needs text.`;
    if (a.kind === 'replan') return replanProblem(ctx.r.prisma, ctx.jobId);
    if (a.kind === 'request_revision') return a.step ? revisionProblem(ctx.r, ctx.jobId, a.step) : 'request_revision needs step.';
    if (a.kind === 'ask_user') {
      if (!a.choices?.length) return 'ask_user needs choices (the answers the user can pick).';
      return askProblem(ctx.r.prisma, ctx.jobId);
    }
    return null;
  },
  sideEffect: async (a, ctx, tx) => {
    const now = ctx.r.now();
    if (a.kind === 'retry' || a.kind === 'reassign') {
      const res = await retryTask(
        tx,
        now,
        ctx.jobId,
        a.taskId!,
        changes(a),
        a.text ?? (a.kind === 'retry' ? 'Retried by the supervisor.' : 'Reassigned by the supervisor.'),
        ctx.r.config.rates,
      );
      const { eventIds, ...output } = res;
      return { output: { done: a.kind, ...output }, eventIds };
    }
    if (a.kind === 'ask_user') {
      const { questionId, eventIds } = await askDuringRun(tx, now, {
        jobId: ctx.jobId,
        agentRunId: ctx.runId,
        callId: ctx.callId,
        text: a.text!,
        choices: a.choices!,
      });
      return {
        output: { done: 'ask_user', questionId, status: 'asked; the run supervisor continues when the user answers' },
        eventIds,
        control: 'wait',
      };
    }
    if (a.kind === 'replan') {
      const { eventIds, status, workers } = await replanJob(tx, ctx.r, now, ctx.jobId, a.text!);
      return { output: { done: 'replan', status, cancelledOnWorkers: workers }, eventIds, control: 'finish' };
    }
    if (a.kind === 'request_revision') {
      const { eventIds, ...output } = await requestRevision(tx, ctx.r, ctx.jobId, a.step!, a.text!);
      return { output: { done: 'request_revision', ...output }, eventIds, control: 'finish' };
    }
    if (a.kind === 'stop_with_explanation') {
      const { eventIds, status } = await failJob(tx, now, ctx.jobId, a.text!);
      return { output: { done: 'stop_with_explanation', status }, eventIds, control: 'finish' };
    }
    const { eventIds } = await noteOnJob(tx, ctx.jobId, a.text!);
    return { output: { done: 'note' }, eventIds };
  },
  after: async (a, res, ctx) => {
    if (a.kind === 'retry' || a.kind === 'reassign') await ctx.r.events.emit({ type: 'tasks.available' });
    if (a.kind === 'replan') {
      // The workers running its cancelled work stop now; the planner starts (pipeline.ts).
      for (const workerId of (res.output as { cancelledOnWorkers?: string[] }).cancelledOnWorkers ?? [])
        await ctx.r.events.emit({ type: 'worker.orders', workerId });
      await ctx.r.events.emit({ type: 'job.replanned', jobId: ctx.jobId });
    }
    if (a.kind === 'request_revision') await ctx.r.events.emit({ type: 'preparation.step', jobId: ctx.jobId });
  },
});

function changes(a: TakeActionArgs) {
  return {
    ...(a.minMemoryMiB !== undefined ? { minMemoryMiB: a.minMemoryMiB } : {}),
    ...(a.onWorkerId !== undefined ? { onWorkerId: a.onWorkerId } : {}),
    ...(a.avoidWorkerIds?.length ? { avoidWorkerIds: a.avoidWorkerIds } : {}),
    ...(a.accelVendor !== undefined ? { accelVendor: a.accelVendor } : {}),
  };
}

export const remember = defineTool({
  name: 'remember',
  description:
    'Save a finding for this job (kept across supervisor runs and shown by get_job): what was observed, the evidence (log line or event ids), the hypothesis, what was tried (remedy), the trigger reason it answers, and the follow-up to check.',
  schema: z
    .object({
      observation: z.string().min(1).max(2000),
      evidence: z.array(z.string().max(200)).max(20).optional(),
      hypothesis: z.string().max(2000).optional(),
      remedy: z.string().max(200).optional(),
      errorClass: z.string().max(40).optional(),
      trigger: z.string().max(40).optional(),
      followUp: z.string().max(1000).optional(),
      taskId: uuid.optional(),
    })
    .strict(),
  check: (a, ctx) => (a.taskId ? taskOfJob(ctx, a.taskId) : Promise.resolve(null)),
  sideEffect: async (a, ctx, tx) => {
    const { findingId, eventIds } = await saveFinding(tx, ctx.jobId, a);
    return { output: { saved: findingId }, eventIds };
  },
});
