/**
 * The planner's tools. Read-only tools may run again after a crash; side-effecting
 * ones (ask_user, submit_plan, give_up) commit their effect with an Action row.
 */
import { z } from 'zod';
import type { Prisma as P } from '../../generated/prisma/client.js';
import { insertTask } from '../../domain/jobs/createTask.js';
import { recordJobEvent } from '../../domain/jobs/jobEvents.js';
import { defineTool, type ToolDef } from '../tool.js';
import { analyzeProject } from './analyzeProject.js';
import { networkCapacity } from './networkCapacity.js';
import { PlanSchema } from './planSchema.js';
import { loadManifest, loadSources, readText } from './projectFiles.js';

const READ_LIMIT = 20_000;

export const listFiles = defineTool({
  name: 'list_files',
  description: "List the project's files with their sizes.",
  schema: z.object({}),
  read: async (_a, ctx) => {
    const { manifest } = await loadManifest(ctx.r, ctx.jobId);
    return { output: { files: manifest.slice(0, 1000).map((f) => ({ path: f.path, size: f.size })), total: manifest.length } };
  },
});

export const readFileTool = defineTool({
  name: 'read_file',
  description: `Read a text file of the project (at most ${READ_LIMIT} characters from an offset).`,
  schema: z.object({ path: z.string().min(1).max(1024), offset: z.number().int().min(0).optional() }),
  check: async (a, ctx) => {
    const { manifest } = await loadManifest(ctx.r, ctx.jobId);
    return manifest.some((f) => f.path === a.path) ? null : `No file ${a.path} in the project. Use list_files.`;
  },
  read: async (a, ctx) => {
    const { manifest } = await loadManifest(ctx.r, ctx.jobId);
    const text = await readText(ctx.r, manifest.find((f) => f.path === a.path)!);
    if (text === null) return { output: { path: a.path, binary: true, note: 'binary or too large to read' } };
    const start = a.offset ?? 0;
    return { output: { path: a.path, offset: start, content: text.slice(start, start + READ_LIMIT), totalChars: text.length, truncated: start + READ_LIMIT < text.length } };
  },
});

export const findDependencies = defineTool({
  name: 'find_dependencies',
  description: 'Find dependency pins (requirements.txt, pyproject, environment.yml), imports, entry points with their argparse flags, CUDA/HIP sources, data folders.',
  schema: z.object({}),
  read: async (_a, ctx) => {
    return { output: analyzeProject(await loadSources(ctx.r, ctx.jobId)) };
  },
});

export const networkCapacityTool = defineTool({
  name: 'network_capacity',
  description: 'The classes of workers online now and what they can run (workloads, Python/PyTorch versions, memory, accelerators).',
  schema: z.object({}),
  read: async (_a, ctx) => ({ output: await networkCapacity(ctx.r) }),
});

export const askUser = defineTool({
  name: 'ask_user',
  recoveredControl: 'wait', // see ToolDef.recoveredControl
  description: 'Ask the user a question when something is unclear; planning waits for the answer. Offer choices when there are a few clear options.',
  schema: z.object({ question: z.string().min(1).max(2000), choices: z.array(z.string().min(1).max(300)).max(10).optional() }),
  sideEffect: async (a, ctx, tx) => {
    const q = await tx.question.create({ data: { jobId: ctx.jobId, agentRunId: ctx.runId, callId: ctx.callId, text: a.question, choices: a.choices ?? [] } });
    await tx.job.update({ where: { id: ctx.jobId }, data: { status: 'NEEDS_INPUT', statusReason: a.question } });
    const eventIds = [
      await recordJobEvent(tx, ctx.jobId, 'question.asked', { questionId: q.id, text: a.question, choices: a.choices ?? [] }),
      await recordJobEvent(tx, ctx.jobId, 'job.status', { status: 'NEEDS_INPUT', reason: a.question }),
    ];
    return { output: { questionId: q.id, status: 'asked; planning continues when the user answers' }, control: 'wait', eventIds };
  },
});

export const giveUp = defineTool({
  name: 'give_up',
  recoveredControl: 'finish', // see ToolDef.recoveredControl
  description: 'Stop the job with an explanation in plain words when it cannot be run (name the file, pin or hardware that blocks it).',
  schema: z.object({ reason: z.string().min(1).max(2000) }),
  sideEffect: async (a, ctx, tx) => {
    await tx.job.update({ where: { id: ctx.jobId }, data: { status: 'FAILED', statusReason: a.reason, finishedAt: ctx.r.now() } });
    const eventIds = [await recordJobEvent(tx, ctx.jobId, 'job.status', { status: 'FAILED', reason: a.reason })];
    return { output: { status: 'FAILED' }, control: 'finish', eventIds };
  },
});

export const submitPlan = defineTool({
  name: 'submit_plan',
  recoveredControl: 'finish', // see ToolDef.recoveredControl
  description: 'Submit the plan: the command, hardware, outputs and acceptance criteria. It creates the run; the criteria are then fixed.',
  schema: PlanSchema,
  check: async (plan, ctx) => {
    const job = await ctx.r.prisma.job.findUniqueOrThrow({ where: { id: ctx.jobId } });
    if (job.currentPlanId) return 'A plan was already accepted for this job; its acceptance criteria are fixed.';
    for (const f of plan.acceptance.requiredFiles) if (!plan.outputs.some((o) => f === o || f.startsWith(`${o.replace(/\/$/, '')}/`))) return `Required file ${f} is not among the outputs to collect.`;
    if (plan.acceptance.evaluate && !plan.outputs.some((o) => plan.acceptance.evaluate!.checkpoint === o || plan.acceptance.evaluate!.checkpoint.startsWith(`${o.replace(/\/$/, '')}/`))) {
      return `The checkpoint ${plan.acceptance.evaluate.checkpoint} is not among the outputs to collect.`;
    }
    const cap = await networkCapacity(ctx.r);
    // With no worker online at all (e.g. right after start), the run waits in the queue and
    // the job says why; with workers online that cannot run it, the planner must ask or stop.
    if (cap.classes.length === 0) return null;
    const fits = cap.classes.some((c) => c.workloads.includes(plan.hardware.workload) && (!plan.hardware.accelVendor || c.accelVendor === plan.hardware.accelVendor));
    if (!fits) return `No online worker can run workload ${plan.hardware.workload}${plan.hardware.accelVendor ? ` on ${plan.hardware.accelVendor}` : ''}. Online: ${cap.summary}. Ask the user or choose hardware that exists.`;
    return null;
  },
  sideEffect: async (plan, ctx, tx) => {
    const now = ctx.r.now();
    const cv = await tx.codeVersion.findFirstOrThrow({ where: { jobId: ctx.jobId, status: 'ORIGINAL' } });
    const version = (await tx.plan.count({ where: { jobId: ctx.jobId } })) + 1;
    const criteria = { ...plan.acceptance, exitCode: plan.acceptance.exitCode ?? 0 };
    const requirements = {
      workload: plan.hardware.workload,
      ...(plan.hardware.accelVendor ? { accelVendor: plan.hardware.accelVendor } : {}),
      ...(plan.hardware.minMemoryMiB ? { minMemoryMiB: plan.hardware.minMemoryMiB } : {}),
      ...(plan.hardware.minAccelMemoryMiB ? { minAccelMemoryMiB: plan.hardware.minAccelMemoryMiB } : {}),
      ...(plan.timeoutSec ? { timeoutSec: plan.timeoutSec } : {}),
      outputs: plan.outputs.filter((o) => !o.startsWith('outputs/') && o !== 'outputs'),
    };
    const env = Object.fromEntries((plan.environment ?? []).map((e) => [e.name, e.value]));
    const row = await tx.plan.create({
      data: {
        jobId: ctx.jobId,
        version,
        author: ctx.model.name,
        summary: plan.summary,
        steps: plan.steps,
        command: plan.command,
        environment: env,
        requirements: requirements as P.InputJsonValue,
        outputs: plan.outputs,
        acceptanceCriteria: criteria as P.InputJsonValue,
      },
    });
    // Invariant 6: the criteria are fixed here, and the run uses only the frozen code.
    await tx.job.update({
      where: { id: ctx.jobId },
      data: { currentPlanId: row.id, acceptanceCriteria: criteria as P.InputJsonValue, frozenCodeId: cv.id, status: 'RUNNING', statusReason: 'The code fits an online worker as it is; running it.', startedAt: now },
    });
    const eventIds = [
      await recordJobEvent(tx, ctx.jobId, 'plan.created', { planId: row.id, version, command: plan.command, hardware: plan.hardware, outputs: plan.outputs, acceptance: criteria }),
      await recordJobEvent(tx, ctx.jobId, 'job.status', { status: 'RUNNING' }),
    ];
    const { task, eventId } = await insertTask(tx, now, { jobId: ctx.jobId, kind: 'RUN', name: 'run', codeVersionId: cv.id, command: plan.command, environment: env, requirements: requirements as never, maxAttempts: 3 });
    return { output: { planId: row.id, version, taskId: task.id, status: 'accepted; the run is queued' }, control: 'finish', eventIds: [...eventIds, eventId] };
  },
  after: async (_a, _res, ctx) => {
    await ctx.r.events.emit({ type: 'tasks.available' });
  },
});

export const plannerReadTools: ToolDef[] = [listFiles, readFileTool, findDependencies, networkCapacityTool];
