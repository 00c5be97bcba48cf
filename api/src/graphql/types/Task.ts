import { builder } from '../builder.js';
import { isUuid, requireUser } from '../principal.js';
import { networkCapacity } from '../../domain/workers/networkCapacity.js';
import { FileEntry, type FileEntryShape } from './Job.js';
import type { Checkpoint } from '../../domain/leases/checkpoints.js';

builder.prismaObject('Task', {
  fields: (t) => ({
    id: t.exposeID('id'),
    kind: t.exposeString('kind', {
      description: 'What the worker runs: PROBE, REFERENCE, CANDIDATE, BENCHMARK, RUN, SHARD, EVALUATE, SERVICE, MERGE.',
    }),
    role: t.exposeString('role', {
      description:
        'Why the job has it (set at creation): RUN, SMOKE, STEP, REFERENCE, CANDIDATE, BENCHMARK, RESUME_CHECK, EVALUATE, SHARD, MERGE, SHARD_CHECK, REPLICA, TIEBREAK, SERVICE, PROBE (a task made outside a plan). The name is for people.',
    }),
    name: t.exposeString('name'),
    status: t.exposeString('status'),
    statusReason: t.exposeString('statusReason', { nullable: true, description: 'Why it waits or failed, in plain words.' }),
    command: t.exposeString('command'),
    requirements: t.expose('requirements', { type: 'JSON' }),
    priority: t.exposeInt('priority'),
    attemptCount: t.exposeInt('attemptCount'),
    maxAttempts: t.exposeInt('maxAttempts'),
    runAfter: t.expose('runAfter', { type: 'DateTime' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    result: t.expose('result', { type: 'JSON', nullable: true }),
    attempts: t.relation('attempts', { query: { orderBy: { number: 'asc' } } }),
  }),
});

export const TaskCheckpoint = builder.objectRef<Checkpoint>('TaskCheckpoint').implement({
  fields: (t) => ({
    files: t.field({ type: [FileEntry], resolve: (c) => c.files as unknown as FileEntryShape[] }),
    step: t.exposeInt('step', { nullable: true, description: 'The epoch or step the program reached, when known.' }),
    attemptNumber: t.exposeInt('attemptNumber'),
    savedAt: t.field({ type: 'DateTime', resolve: (c) => new Date(c.savedAt) }),
  }),
});

builder.prismaObject('Attempt', {
  fields: (t) => ({
    id: t.exposeID('id'),
    number: t.exposeInt('number'),
    status: t.exposeString('status'),
    workerName: t.string({ select: { worker: { select: { name: true } } }, resolve: (a) => a.worker.name }),
    simulatedAccelerator: t.exposeString('simulatedAccelerator', {
      nullable: true,
      description:
        "The worker's simulated accelerator when it took this attempt (tests and demos: the numerics ran on the CPU); null on real hardware.",
    }),
    sandbox: t.string({
      nullable: true,
      description:
        "The isolation of the worker that took this attempt, as it advertises it now: bwrap; none (its owner chose --sandbox none); none-own-jobs (it has no sandbox, so it runs only its owner's own jobs: npm start's local worker without bubblewrap); null when it says nothing.",
      select: { worker: { select: { capabilities: true } } },
      resolve: (a) => sandboxOf(a.worker.capabilities),
    }),
    leaseExpiresAt: t.expose('leaseExpiresAt', { type: 'DateTime' }),
    exitCode: t.exposeInt('exitCode', { nullable: true }),
    errorClass: t.exposeString('errorClass', { nullable: true }),
    errorMessage: t.exposeString('errorMessage', { nullable: true }),
    metrics: t.expose('metrics', { type: 'JSON', nullable: true }),
    usage: t.expose('usage', { type: 'JSON', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    outputs: t.field({ type: [FileEntry], resolve: (a) => (a.outputs ?? []) as unknown as FileEntryShape[] }),
    checkpoint: t.field({
      type: TaskCheckpoint,
      nullable: true,
      description: 'The latest checkpoint this attempt saved (its partial artifact; a drained or lost attempt hands it to the next one).',
      resolve: (a) => a.checkpoint as Checkpoint | null,
    }),
    logs: t.prismaField({
      type: ['LogChunk'],
      description: 'Log lines in order; `afterSeq` resumes after a line you have.',
      args: { afterSeq: t.arg.int({ required: false }), first: t.arg.int({ required: false }) },
      select: { id: true },
      resolve: (query, a, args, ctx) =>
        ctx.prisma.logChunk.findMany({
          ...query,
          where: { attemptId: a.id, seq: { gt: args.afterSeq ?? -1 } },
          orderBy: { seq: 'asc' },
          take: Math.min(Math.max(args.first ?? 1000, 1), 10_000),
        }),
    }),
    metricPoints: t.prismaField({
      type: ['MetricPoint'],
      args: { afterSeq: t.arg.int({ required: false }), first: t.arg.int({ required: false }) },
      select: { id: true },
      resolve: (query, a, args, ctx) =>
        ctx.prisma.metricPoint.findMany({
          ...query,
          where: { attemptId: a.id, seq: { gt: args.afterSeq ?? -1 } },
          orderBy: [{ seq: 'asc' }, { name: 'asc' }],
          take: Math.min(Math.max(args.first ?? 5000, 1), 50_000),
        }),
    }),
  }),
});

builder.prismaObject('LogChunk', {
  name: 'LogLine',
  fields: (t) => ({
    seq: t.exposeInt('seq'),
    stream: t.exposeString('stream', { description: 'stdout | stderr | system' }),
    text: t.exposeString('text'),
    ts: t.expose('ts', { type: 'DateTime' }),
  }),
});

builder.prismaObject('MetricPoint', {
  fields: (t) => ({
    seq: t.exposeInt('seq'),
    name: t.exposeString('name'),
    step: t.exposeInt('step', { nullable: true }),
    value: t.exposeFloat('value'),
    ts: t.expose('ts', { type: 'DateTime' }),
  }),
});

builder.queryFields((t) => ({
  attempt: t.prismaField({
    type: 'Attempt',
    nullable: true,
    authScopes: { user: true },
    args: { id: t.arg.id() },
    description: 'One attempt of one of your jobs (for paging its logs and metrics); null otherwise.',
    resolve: (query, _p, { id }, ctx) =>
      isUuid(String(id))
        ? ctx.prisma.attempt.findFirst({ ...query, where: { id: String(id), task: { ownerId: requireUser(ctx) } } })
        : null,
  }),
}));

type WorkerClassShape = Awaited<ReturnType<typeof networkCapacity>>['classes'][number];
const WorkerClass = builder.objectRef<WorkerClassShape>('WorkerClass').implement({
  description: 'Online workers of one accelerator vendor (none = CPU only), across the whole network.',
  fields: (t) => ({
    accelVendor: t.exposeString('accelVendor'),
    count: t.exposeInt('count'),
    workloads: t.exposeStringList('workloads'),
    torchVersions: t.exposeStringList('torchVersions'),
    pythonVersions: t.exposeStringList('pythonVersions'),
    accelerators: t.exposeStringList('accelerators'),
    maxMemoryMiB: t.exposeInt('maxMemoryMiB'),
    maxAccelMemoryMiB: t.exposeInt('maxAccelMemoryMiB'),
  }),
});

builder.queryField('networkCapacity', (t) =>
  t.field({
    type: [WorkerClass],
    authScopes: { user: true },
    description: 'What the network can run right now: online workers grouped by class (no owner or machine details).',
    resolve: async (_p, _a, ctx) => (await networkCapacity(ctx)).classes,
  }),
);

/** A worker's isolation from its capabilities (worker/src/sandbox.ts resolveSandbox). */
function sandboxOf(capabilities: unknown): string | null {
  const c = (capabilities ?? {}) as { sandbox?: unknown; ownJobsOnly?: unknown };
  if (c.sandbox === 'bwrap') return 'bwrap';
  if (c.sandbox === 'none') return c.ownJobsOnly === true ? 'none-own-jobs' : 'none';
  return null;
}
