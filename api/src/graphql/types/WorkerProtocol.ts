/**
 * The worker protocol (docs/architecture.md §5), callable only with a worker token:
 * workerHello, claimTask (long-poll), heartbeat, appendLogs, reportMetrics,
 * completeAttempt, saveCheckpoint, releaseDrainedAttempt, setWorkerPaused, drainOwnWorker.
 * Expected failures (stale attempt, bad input) are
 * typed results.
 */
import { z } from 'zod';
import { claim } from '../../domain/leases/claim.js';
import { completeAttempt } from '../../domain/leases/completeAttempt.js';
import { completeAttempts, MAX_COMPLETIONS, type CompletionOutcome } from '../../domain/leases/completeAttempts.js';
import { releaseDrainedAttempt, saveCheckpoint, type Checkpoint } from '../../domain/leases/checkpoints.js';
import { appendLogs, reportMetrics } from '../../domain/leases/reports.js';
import { heartbeat, setOwnPaused, type Order } from '../../domain/workers/heartbeat.js';
import { workerHello } from '../../domain/workers/workerHello.js';
import { setWorkerHealth } from '../../domain/workers/workerHealth.js';
import { builder } from '../builder.js';
import { requireWorker } from '../principal.js';
import { NotFoundError, SimulatedAcceleratorRefusedError, StaleAttemptError, ValidationError } from './errors.js';
import { FileEntry, type FileEntryShape } from './Job.js';
import { TaskCheckpoint } from './Task.js';
import { WorkerRef } from './Worker.js';
import { withSpan } from '../../telemetry/sentry.js';
import type { DomainError } from '../../domain/errors.js';

const WorkerHelloInput = builder.inputType('WorkerHelloInput', {
  fields: (t) => ({
    name: t.string({
      validate: z
        .string()
        .trim()
        .min(1)
        .max(100)
        .regex(/^[\w.@:-][\w .@:-]*$/, 'Use letters, digits, spaces and . @ : - _'),
    }),
    version: t.string({ validate: z.string().max(50) }),
    slots: t.int({ validate: z.number().int().min(1).max(64) }),
    capabilities: t.field({ type: 'JSON' }),
  }),
});

const HelloResult = builder
  .objectRef<{ worker: { id: string }; heartbeatIntervalSec: number; leaseSec: number }>('WorkerHelloResult')
  .implement({
    fields: (t) => ({
      worker: t.prismaField({
        type: 'Worker',
        resolve: (q, p, _a, ctx) => ctx.prisma.worker.findUniqueOrThrow({ ...q, where: { id: p.worker.id } }),
      }),
      workerId: t.id({ resolve: (p) => p.worker.id, description: 'The raw worker id to pass to the other worker calls.' }),
      heartbeatIntervalSec: t.exposeInt('heartbeatIntervalSec'),
      leaseSec: t.exposeInt('leaseSec'),
    }),
  });

type AssignmentShape = Awaited<ReturnType<typeof claim>>[number];
const TaskSpec = builder.objectRef<AssignmentShape['task']>('TaskSpec').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    jobId: t.exposeID('jobId'),
    kind: t.exposeString('kind'),
    name: t.exposeString('name'),
    command: t.exposeString('command'),
    environment: t.expose('environment', { type: 'JSON' }),
    requirements: t.expose('requirements', { type: 'JSON' }),
    files: t.field({
      type: [FileEntry],
      description: 'The code version to run.',
      resolve: (task) => task.codeVersion.manifest as unknown as FileEntryShape[],
    }),
    inputs: t.field({
      type: [FileEntry],
      description: 'Extra input files (e.g. a checkpoint to evaluate), placed in the run directory.',
      resolve: (task) => (task.environment as { inputs?: FileEntryShape[] } | null)?.inputs ?? [],
    }),
    checkpoint: t.field({
      type: TaskCheckpoint,
      nullable: true,
      description: "The task's latest checkpoint, from an earlier attempt: restored at its paths before the program starts.",
      resolve: (task) => task.checkpoint as unknown as Checkpoint | null,
    }),
  }),
});
const Assignment = builder.objectRef<AssignmentShape>('Assignment').implement({
  fields: (t) => ({
    attemptId: t.exposeID('id'),
    number: t.exposeInt('number'),
    fencingToken: t.exposeString('fencingToken'),
    leaseExpiresAt: t.expose('leaseExpiresAt', { type: 'DateTime' }),
    task: t.field({ type: TaskSpec, resolve: (a) => a.task }),
  }),
});

const OrderKind = builder.enumType('WorkerOrderKind', { values: ['CANCEL', 'PAUSE', 'DRAIN', 'RESUME'] as const });
const OrderRef = builder.objectRef<Order>('WorkerOrder').implement({
  fields: (t) => ({
    kind: t.field({ type: OrderKind, resolve: (o) => o.kind }),
    attemptId: t.id({ nullable: true, resolve: (o) => (o.kind === 'CANCEL' ? o.attemptId : null) }),
    reason: t.string({ nullable: true, resolve: (o) => (o.kind === 'CANCEL' ? o.reason : null) }),
  }),
});
const HeartbeatResult = builder.objectRef<Awaited<ReturnType<typeof heartbeat>>>('HeartbeatResult').implement({
  fields: (t) => ({
    orders: t.field({ type: [OrderRef], resolve: (h) => h.orders }),
    renewed: t.idList({ resolve: (h) => h.renewed }),
    status: t.exposeString('status'),
    leaseExpiresAt: t.expose('leaseExpiresAt', { type: 'DateTime' }),
  }),
});

const LeaseInput = builder.inputType('LeaseInput', {
  fields: (t) => ({ attemptId: t.id(), fencingToken: t.string({ validate: z.string().max(100) }) }),
});
const MetricPointInput = builder.inputType('MetricPointInput', {
  fields: (t) => ({
    seq: t.int(),
    name: t.string(),
    step: t.int({ required: false }),
    value: t.float(),
    ts: t.field({ type: 'DateTime', required: false }),
  }),
});
const OutputFileInput = builder.inputType('OutputFileInput', {
  fields: (t) => ({
    path: t.string({ validate: z.string().min(1).max(1024) }),
    sha256: t.string({ validate: z.string().regex(/^[0-9a-f]{64}$/) }),
    mode: t.int({ required: false }),
  }),
});
const CompleteAttemptInput = builder.inputType('CompleteAttemptInput', {
  fields: (t) => ({
    exitCode: t.int({ required: false }),
    errorClass: t.string({
      required: false,
      validate: z
        .string()
        .regex(/^[A-Z_]{1,40}$/)
        .nullish(),
    }),
    errorMessage: t.string({ required: false, validate: z.string().max(20_000).nullish() }),
    outputs: t.field({ type: [OutputFileInput], required: false, validate: z.array(z.any()).max(1000).nullish() }),
    metrics: t.field({ type: 'JSON', required: false }),
    usage: t.field({ type: 'JSON', required: false }),
  }),
});

const CheckpointInput = builder.inputType('CheckpointInput', {
  fields: (t) => ({
    files: t.field({ type: [OutputFileInput], validate: z.array(z.any()).max(1000) }),
    step: t.int({ required: false }),
  }),
});

const AppendResult = builder.objectRef<{ accepted: number; lastSeq: number | null }>('AppendResult').implement({
  fields: (t) => ({ accepted: t.exposeInt('accepted'), lastSeq: t.exposeInt('lastSeq', { nullable: true }) }),
});

builder.mutationFields((t) => ({
  workerHello: t.field({
    type: HelloResult,
    authScopes: { worker: true },
    args: { input: t.arg({ type: WorkerHelloInput }) },
    errors: { types: [ValidationError, SimulatedAcceleratorRefusedError] },
    resolve: async (_p, { input }, ctx) => {
      const worker = await workerHello(ctx, requireWorker(ctx), input);
      return { worker, heartbeatIntervalSec: ctx.config.scheduler.heartbeatSec, leaseSec: ctx.config.scheduler.leaseSec };
    },
  }),
  claimTask: t.field({
    type: [Assignment],
    authScopes: { worker: true },
    description: 'Long-poll for work: up to `max` assignments (bounded by free slots), or none after `waitMs` (≤ 30000).',
    args: {
      workerId: t.arg.id(),
      waitMs: t.arg.int({ validate: z.number().int().min(0).max(30_000) }),
      max: t.arg.int({ validate: z.number().int().min(1).max(64) }),
    },
    errors: { types: [ValidationError, NotFoundError], directResult: false },
    resolve: (_p, args, ctx) =>
      withSpan('attempt.claim', { worker: String(args.workerId) }, async (span) => {
        const got = await claim(ctx, ctx.pubsub, requireWorker(ctx).workerTokenId, String(args.workerId), {
          waitMs: args.waitMs,
          max: args.max,
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        });
        span?.setAttributes({
          claimed: String(got.length),
          attempts: got.map((a) => a.id).join(','),
          jobs: [...new Set(got.map((a) => a.task.jobId))].join(','),
          // One attempt claimed (a one-slot worker, the usual case): its ids under the names every other span uses.
          ...(got.length === 1 ? { attempt: got[0]!.id, task: got[0]!.task.id, job: got[0]!.task.jobId } : {}),
        });
        return got;
      }),
  }),
  heartbeat: t.field({
    type: HeartbeatResult,
    authScopes: { worker: true },
    args: {
      workerId: t.arg.id(),
      leases: t.arg({ type: [LeaseInput], validate: z.array(z.any()).max(256) }),
      telemetry: t.arg({ type: 'JSON', required: false }),
    },
    errors: { types: [ValidationError, NotFoundError] },
    resolve: (_p, args, ctx) =>
      heartbeat(
        ctx,
        requireWorker(ctx).workerTokenId,
        String(args.workerId),
        args.leases.map((l) => ({ attemptId: String(l.attemptId), fencingToken: l.fencingToken })),
      ),
  }),
  appendLogs: t.field({
    type: AppendResult,
    authScopes: { worker: true },
    args: { attemptId: t.arg.id(), fencingToken: t.arg.string(), lines: t.arg({ type: 'LogLines' }) },
    errors: { types: [ValidationError, NotFoundError, StaleAttemptError] },
    resolve: (_p, args, ctx) => appendLogs(ctx, requireWorker(ctx).workerTokenId, String(args.attemptId), args.fencingToken, args.lines),
  }),
  reportMetrics: t.field({
    type: AppendResult,
    authScopes: { worker: true },
    args: { attemptId: t.arg.id(), fencingToken: t.arg.string(), points: t.arg({ type: [MetricPointInput] }) },
    errors: { types: [ValidationError, NotFoundError, StaleAttemptError] },
    resolve: (_p, args, ctx) =>
      reportMetrics(ctx, requireWorker(ctx).workerTokenId, String(args.attemptId), args.fencingToken, args.points),
  }),
  completeAttempt: t.prismaField({
    type: 'Attempt',
    authScopes: { worker: true },
    args: { attemptId: t.arg.id(), fencingToken: t.arg.string(), result: t.arg({ type: CompleteAttemptInput }) },
    errors: { types: [ValidationError, NotFoundError, StaleAttemptError] },
    resolve: async (query, _p, args, ctx) => {
      const a = await withSpan('attempt.complete', { attempt: String(args.attemptId) }, async (span) => {
        const done = await completeAttempt(ctx, requireWorker(ctx).workerTokenId, String(args.attemptId), args.fencingToken, args.result);
        span?.setAttributes({ job: done.task.jobId, task: done.taskId, worker: done.workerId });
        return done;
      });
      return ctx.prisma.attempt.findUniqueOrThrow({ ...query, where: { id: a.id } });
    },
  }),
  saveCheckpoint: t.field({
    type: TaskCheckpoint,
    authScopes: { worker: true },
    description: "A checkpoint of a running attempt (files uploaded for it first): the task's latest, restored by its next attempt.",
    args: { attemptId: t.arg.id(), fencingToken: t.arg.string(), checkpoint: t.arg({ type: CheckpointInput }) },
    errors: { types: [ValidationError, NotFoundError, StaleAttemptError] },
    resolve: (_p, args, ctx) =>
      saveCheckpoint(ctx, requireWorker(ctx).workerTokenId, String(args.attemptId), args.fencingToken, args.checkpoint),
  }),
  releaseDrainedAttempt: t.prismaField({
    type: 'Attempt',
    authScopes: { worker: true },
    description:
      'A draining worker hands the attempt back (DRAINED) with its last checkpoint; the task is queued again and resumes elsewhere.',
    args: {
      attemptId: t.arg.id(),
      fencingToken: t.arg.string(),
      checkpoint: t.arg({ type: CheckpointInput, required: false }),
      usage: t.arg({ type: 'JSON', required: false }),
      reason: t.arg.string({ required: false, validate: z.string().max(2000).nullish() }),
    },
    errors: { types: [ValidationError, NotFoundError, StaleAttemptError] },
    resolve: async (query, _p, args, ctx) => {
      const a = await releaseDrainedAttempt(ctx, requireWorker(ctx).workerTokenId, String(args.attemptId), args.fencingToken, {
        checkpoint: args.checkpoint ?? null,
        usage: args.usage,
        reason: args.reason ?? null,
      });
      return ctx.prisma.attempt.findUniqueOrThrow({ ...query, where: { id: a.id } });
    },
  }),
  drainOwnWorker: t.prismaField({
    type: 'Worker',
    authScopes: { worker: true },
    description:
      "The worker's own machine draining it (`chatgpu-worker drain`): no new work; running tasks checkpoint and are handed back.",
    args: { workerId: t.arg.id() },
    errors: { types: [NotFoundError] },
    resolve: async (query, _p, args, ctx) => {
      const w = await setOwnPaused(ctx, requireWorker(ctx).workerTokenId, String(args.workerId), 'drain');
      return ctx.prisma.worker.findUniqueOrThrow({ ...query, where: { id: w.id } });
    },
  }),
  setWorkerPaused: t.prismaField({
    type: 'Worker',
    authScopes: { worker: true },
    description: "The worker's own machine pausing or resuming it (`chatgpu-worker pause`).",
    args: { workerId: t.arg.id(), paused: t.arg.boolean() },
    errors: { types: [NotFoundError] },
    resolve: async (query, _p, args, ctx) => {
      const w = await setOwnPaused(ctx, requireWorker(ctx).workerTokenId, String(args.workerId), args.paused);
      return ctx.prisma.worker.findUniqueOrThrow({ ...query, where: { id: w.id } });
    },
  }),
  setWorkerHealth: t.prismaField({
    type: 'Worker',
    authScopes: { worker: true },
    description:
      "The worker's own prerequisite check (sandbox binary, interpreter, disk space for the run folder, GPU devices): false makes it UNHEALTHY with the reason — it claims nothing until it reports true again. Paused, draining and quarantined workers keep their status.",
    args: {
      workerId: t.arg.id(),
      healthy: t.arg.boolean(),
      reason: t.arg.string({ required: false, validate: z.string().max(1000).nullish() }),
    },
    errors: { types: [NotFoundError, ValidationError] },
    resolve: async (query, _p, args, ctx) => {
      const w = await setWorkerHealth(ctx, requireWorker(ctx).workerTokenId, String(args.workerId), args.healthy, args.reason ?? null);
      return ctx.prisma.worker.findUniqueOrThrow({ ...query, where: { id: w.id } });
    },
  }),
}));

// Completions, batched (domain/leases/completeAttempts.ts): each attempt fenced on its own, one
// transaction and one NOTIFY for the batch; a stale or bad member is refused in its own result.
const CompletionInput = builder.inputType('CompletionInput', {
  fields: (t) => ({
    attemptId: t.id(),
    fencingToken: t.string({ validate: z.string().max(100) }),
    result: t.field({ type: CompleteAttemptInput }),
  }),
});
// A refusal as plain data (graphql-js would treat a resolved Error instance as a field error).
const CompletionRefusal = builder.objectRef<{ e: DomainError }>('CompletionRefusal').implement({
  description: 'Why a completion of a batch was refused.',
  fields: (t) => ({
    code: t.string({ description: 'STALE_ATTEMPT, NOT_FOUND or VALIDATION_ERROR.', resolve: ({ e }) => e.code }),
    message: t.string({ resolve: ({ e }) => e.message }),
    reason: t.string({
      nullable: true,
      description: 'For STALE_ATTEMPT: why the attempt is no longer current.',
      resolve: ({ e }) => (e instanceof StaleAttemptError ? e.reason : null),
    }),
  }),
});
const CompletionResult = builder.objectRef<CompletionOutcome>('CompletionResult').implement({
  description: 'One completion of a batch: accepted (the attempt SUCCEEDED or FAILED), or refused with its error.',
  fields: (t) => ({
    attemptId: t.id({ resolve: (o) => o.attemptId }),
    accepted: t.boolean({ resolve: (o) => o.ok }),
    status: t.string({ nullable: true, description: "The attempt's status once accepted.", resolve: (o) => (o.ok ? o.status : null) }),
    error: t.field({
      type: CompletionRefusal,
      nullable: true,
      description: 'Why it was refused.',
      resolve: (o) => (o.ok ? null : { e: o.error }),
    }),
  }),
});
builder.mutationFields((t) => ({
  completeAttempts: t.field({
    type: [CompletionResult],
    authScopes: { worker: true },
    description: `The results of several attempts in one call (at most ${MAX_COMPLETIONS}), applied together; each is fenced on its own.`,
    args: { completions: t.arg({ type: [CompletionInput], validate: z.array(z.any()).min(1).max(MAX_COMPLETIONS) }) },
    errors: { types: [ValidationError] },
    resolve: (_p, args, ctx) =>
      withSpan('attempt.completeBatch', { count: String(args.completions.length) }, async (span) => {
        const out = await completeAttempts(
          ctx,
          requireWorker(ctx).workerTokenId,
          args.completions.map((c) => ({ attemptId: String(c.attemptId), fencingToken: c.fencingToken, result: c.result })),
        );
        const ok = out.filter((o) => o.ok);
        const ids = (f: (o: (typeof ok)[number]) => string) => [...new Set(ok.map(f))].join(',');
        span?.setAttributes({
          attempts: ids((o) => o.id),
          tasks: ids((o) => o.taskId),
          jobs: ids((o) => o.jobId),
          workers: ids((o) => o.workerId),
          refused: String(out.length - ok.length),
        });
        return out;
      }),
  }),
}));

void WorkerRef;
