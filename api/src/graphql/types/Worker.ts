import { setWorkerDraining, setWorkerPaused } from '../../domain/workers/pauseWorker.js';
import { builder } from '../builder.js';
import { decodeId } from '../../domain/ids.js';
import { isUuid, NOBODY, requireUser, viewerId } from '../principal.js';
import { NotFoundError } from './errors.js';

export const WorkerStatusEnum = builder.enumType('WorkerStatus', {
  values: ['ONLINE', 'PAUSED', 'OFFLINE', 'DRAINING', 'UNHEALTHY', 'QUARANTINED'] as const,
});

export const WorkerRef = builder.prismaNode('Worker', {
  id: { field: 'id' },
  // A node that is not yours loads as null (the same answer as one that does not exist).
  nullable: true,
  findUnique: (id, ctx) => ({ id: isUuid(id) ? id : NOBODY, ownerId: viewerId(ctx) }),
  fields: (t) => ({
    name: t.exposeString('name'),
    status: t.expose('status', { type: WorkerStatusEnum }),
    statusReason: t.exposeString('statusReason', {
      nullable: true,
      description:
        'Why it is UNHEALTHY (its own prerequisite check: what failed) or QUARANTINED (failures on tasks of several jobs that then succeeded on other workers, and until when).',
    }),
    quarantinedUntil: t.expose('quarantinedUntil', {
      type: 'DateTime',
      nullable: true,
      description: 'When its latest quarantine ends or ended.',
    }),
    capabilities: t.expose('capabilities', { type: 'JSON', description: 'Probed hardware and runtimes.' }),
    workloads: t.exposeStringList('workloads'),
    simulatedAccelerator: t.exposeString('simulatedAccelerator', {
      nullable: true,
      description:
        'Set when the worker runs with --simulate-accelerator (tests and demos): the GPU class it advertises is simulated and its numerics run on the CPU.',
    }),
    slots: t.exposeInt('slots'),
    version: t.exposeString('version'),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    reputation: t.exposeFloat('reputation', {
      description:
        'Trust in its results, 0–1 (new: 0.5): confirmed results raise it, results found wrong by a tie-breaker lower it; below the threshold it gets no checkable work.',
    }),
    validatedCount: t.exposeInt('validatedCount', { description: "Results confirmed by another owner's worker." }),
    mismatchCount: t.exposeInt('mismatchCount', { description: 'Results found wrong (outvoted by a tie-breaker).' }),
    currentAttempts: t.relation('attempts', {
      description: 'Attempts this worker holds right now.',
      query: { where: { status: { in: ['LEASED', 'RUNNING'] } }, orderBy: { createdAt: 'asc' } },
    }),
  }),
});

builder.queryFields((t) => ({
  worker: t.prismaField({
    type: 'Worker',
    nullable: true,
    authScopes: { user: true },
    args: { id: t.arg.id() },
    resolve: (query, _p, { id }, ctx) => {
      let uuid: string;
      try {
        uuid = decodeId(id, 'Worker');
      } catch {
        return null;
      }
      return ctx.prisma.worker.findFirst({ ...query, where: { id: uuid, ownerId: requireUser(ctx) } });
    },
  }),
  workers: t.prismaConnection(
    {
      type: 'Worker',
      cursor: 'id',
      authScopes: { user: true },
      args: { status: t.arg({ type: [WorkerStatusEnum], required: false }) },
      defaultSize: 50,
      maxSize: 200,
      totalCount: (_c, args, ctx) =>
        ctx.prisma.worker.count({ where: { ownerId: requireUser(ctx), ...(args.status?.length ? { status: { in: args.status } } : {}) } }),
      resolve: (query, _p, args, ctx) =>
        ctx.prisma.worker.findMany({
          ...query,
          where: { ownerId: requireUser(ctx), ...(args.status?.length ? { status: { in: args.status } } : {}) },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        }),
    },
    {},
  ),
}));

builder.mutationFields((t) => ({
  pauseWorker: t.prismaField({
    type: 'Worker',
    authScopes: { user: true },
    args: { id: t.arg.id() },
    errors: { types: [NotFoundError] },
    resolve: async (query, _p, { id }, ctx) => {
      const w = await setWorkerPaused(ctx, requireUser(ctx), decodeId(id, 'Worker'), true);
      return ctx.prisma.worker.findUniqueOrThrow({ ...query, where: { id: w.id } });
    },
  }),
  drainWorker: t.prismaField({
    type: 'Worker',
    authScopes: { user: true },
    description:
      'Take the machine back: the worker takes no new work, its running tasks checkpoint and resume on other workers; it kills what is left after its grace period.',
    args: { id: t.arg.id() },
    errors: { types: [NotFoundError] },
    resolve: async (query, _p, { id }, ctx) => {
      const w = await setWorkerDraining(ctx, requireUser(ctx), decodeId(id, 'Worker'));
      return ctx.prisma.worker.findUniqueOrThrow({ ...query, where: { id: w.id } });
    },
  }),
  resumeWorker: t.prismaField({
    type: 'Worker',
    authScopes: { user: true },
    args: { id: t.arg.id() },
    errors: { types: [NotFoundError] },
    resolve: async (query, _p, { id }, ctx) => {
      const w = await setWorkerPaused(ctx, requireUser(ctx), decodeId(id, 'Worker'), false);
      return ctx.prisma.worker.findUniqueOrThrow({ ...query, where: { id: w.id } });
    },
  }),
}));
