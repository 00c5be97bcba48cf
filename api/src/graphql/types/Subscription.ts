import { GraphQLError } from 'graphql';
import type { DomainEvent } from '../../domain/events.js';
import { perClient } from '../../domain/coalesce.js';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
import { decodeId } from '../../domain/ids.js';
import { requireUser } from '../principal.js';

type LogBatch = { kind: 'logs'; attemptId: string; fromSeq: number; toSeq: number };
type MetricBatch = { kind: 'metrics'; attemptId: string; fromSeq: number; toSeq: number };
type StoredEvent = { kind: 'event'; id: bigint };
type Item = LogBatch | MetricBatch | StoredEvent;

/**
 * One database read per event for all of a process's subscribers: a job's D dashboards each
 * resolve the same stored event, log batch or metric batch, and the rows never change once
 * written; the first resolution reads them and the others within SHARED_READ_MS share that read
 * (bench/fanout.ts: 1,000 dashboards made 1,000 identical reads per event). Per database client,
 * since ids repeat across databases.
 */
const SHARED_READ_MS = 2000;
const readsFor = perClient((_ctx: Context) => new Map<string, Promise<unknown>>());
function sharedRead<T>(ctx: Context, key: string, load: () => Promise<T>): Promise<T> {
  const reads = readsFor(ctx);
  let p = reads.get(key) as Promise<T> | undefined;
  if (!p) {
    p = load();
    reads.set(key, p);
    p.then(
      () => setTimeout(() => reads.delete(key), SHARED_READ_MS).unref(),
      () => reads.delete(key),
    );
  }
  return p;
}

const LogLinesEvent = builder.objectRef<LogBatch>('LogLinesEvent').implement({
  description: 'New log lines of one attempt.',
  fields: (t) => ({
    attemptId: t.exposeID('attemptId'),
    lines: t.prismaField({
      type: ['LogChunk'],
      resolve: (_query, b, _a, ctx) =>
        sharedRead(ctx, `logs:${b.attemptId}:${b.fromSeq}:${b.toSeq}`, () =>
          ctx.prisma.logChunk.findMany({
            where: { attemptId: b.attemptId, seq: { gte: b.fromSeq, lte: b.toSeq } },
            orderBy: { seq: 'asc' },
          }),
        ),
    }),
  }),
});

const MetricPointsEvent = builder.objectRef<MetricBatch>('MetricPointsEvent').implement({
  description: 'New metric points of one attempt.',
  fields: (t) => ({
    attemptId: t.exposeID('attemptId'),
    points: t.prismaField({
      type: ['MetricPoint'],
      resolve: (_query, b, _a, ctx) =>
        sharedRead(ctx, `metrics:${b.attemptId}:${b.fromSeq}:${b.toSeq}`, () =>
          ctx.prisma.metricPoint.findMany({
            where: { attemptId: b.attemptId, seq: { gte: b.fromSeq, lte: b.toSeq } },
            orderBy: [{ seq: 'asc' }, { name: 'asc' }],
          }),
        ),
    }),
  }),
});

const StoredJobEvent = builder.objectRef<StoredEvent>('JobEventEnvelope').implement({
  fields: (t) => ({
    event: t.prismaField({
      type: 'JobEvent',
      resolve: (_query, e, _a, ctx) =>
        sharedRead(ctx, `event:${e.id}`, () => ctx.prisma.jobEvent.findUniqueOrThrow({ where: { id: e.id } })),
    }),
  }),
});

const JobActivity = builder.unionType('JobActivity', {
  types: [StoredJobEvent, LogLinesEvent, MetricPointsEvent],
  resolveType: (item) =>
    (item as Item).kind === 'logs' ? LogLinesEvent : (item as Item).kind === 'metrics' ? MetricPointsEvent : StoredJobEvent,
});

async function ownedJob(ctx: Context, rawId: string): Promise<string> {
  const userId = requireUser(ctx);
  let id: string | undefined;
  try {
    id = decodeId(rawId, 'Job');
  } catch {
    /* not found below */
  }
  const job = id ? await ctx.prisma.job.findFirst({ where: { id, ownerId: userId }, select: { id: true } }) : null;
  if (!job) throw new GraphQLError('Job not found.', { extensions: { code: 'NOT_FOUND' } });
  return job.id;
}

builder.subscriptionType({
  fields: (t) => ({
    jobUpdated: t.prismaField({
      type: 'Job',
      authScopes: { user: true },
      args: { id: t.arg.id() },
      description: 'The job, each time it changes (the current state first).',
      subscribe: async function* (_p, { id }, ctx) {
        const jobId = await ownedJob(ctx, String(id));
        const events = ctx.pubsub.subscribe((e) => e.type === 'job.updated' && e.jobId === jobId);
        try {
          yield jobId;
          for await (const _ of events) yield jobId;
        } finally {
          await events.return?.();
        }
      },
      resolve: (query, jobId, _a, ctx) => ctx.prisma.job.findUniqueOrThrow({ ...query, where: { id: jobId as unknown as string } }),
    }),
    jobEvents: t.field({
      type: JobActivity,
      authScopes: { user: true },
      args: {
        jobId: t.arg.id(),
        after: t.arg.string({ required: false, description: 'Replay stored events after this event id first.' }),
      },
      description: 'Everything that happens to a job: status, plan, agent items, tasks and attempts, log lines, metric points.',
      subscribe: async function* (_p, { jobId: raw, after }, ctx) {
        const jobId = await ownedJob(ctx, String(raw));
        const live = ctx.pubsub.subscribe(
          (e: DomainEvent) => (e.type === 'job.event' || e.type === 'job.logs' || e.type === 'job.metrics') && e.jobId === jobId,
        );
        try {
          // Stored events are replayed after `after`; live ones are delivered once each.
          // NOTIFY order is not id order (events commit in different transactions), so
          // duplicates are dropped by id, never by a high-water mark.
          const floor = after && /^\d+$/.test(after) ? BigInt(after) : null;
          const seen = new Set<bigint>();
          const remember = (id: bigint) => {
            seen.add(id);
            if (seen.size > 20_000) seen.delete(seen.values().next().value!);
          };
          if (floor !== null) {
            const stored = await ctx.prisma.jobEvent.findMany({
              where: { jobId, id: { gt: floor } },
              orderBy: { id: 'asc' },
              select: { id: true },
            });
            for (const s of stored) {
              remember(s.id);
              yield { kind: 'event', id: s.id } as Item;
            }
          }
          for await (const e of live) {
            if (e.type === 'job.event') {
              const id = BigInt(e.eventId);
              if ((floor !== null && id <= floor) || seen.has(id)) continue;
              remember(id);
              yield { kind: 'event', id } as Item;
            } else if (e.type === 'job.logs' || e.type === 'job.metrics') {
              yield {
                kind: e.type === 'job.logs' ? 'logs' : 'metrics',
                attemptId: e.attemptId,
                fromSeq: e.fromSeq,
                toSeq: e.toSeq,
              } as Item;
            }
          }
        } finally {
          await live.return?.();
        }
      },
      resolve: (item) => item as Item,
    }),
    workersChanged: t.prismaField({
      type: 'Worker',
      authScopes: { user: true },
      description: 'Any of your workers, each time it changes.',
      subscribe: async function* (_p, _a, ctx) {
        const userId = requireUser(ctx);
        const events = ctx.pubsub.subscribe((e) => e.type === 'worker.changed' && e.ownerId === userId);
        try {
          for await (const e of events) if (e.type === 'worker.changed') yield e.workerId;
        } finally {
          await events.return?.();
        }
      },
      resolve: (query, workerId, _a, ctx) =>
        ctx.prisma.worker.findUniqueOrThrow({ ...query, where: { id: workerId as unknown as string } }),
    }),
  }),
});
