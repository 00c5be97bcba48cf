/**
 * A sharded job's shards as one group (issue 14, for the job page and the CLI): progress
 * n of N, each shard's slice, seed, status and task (its attempts), the adaptation check's
 * verdict, the merge, and the cost of all of them. Read from the job's rows only: the
 * current plan's `shards`, the SHARD tasks and the check's PROBE tasks (named as
 * domain/jobs/shardRun.ts names them), their usage entries, the adaptation record and the
 * `shards.merged` event.
 */
import type { Resources } from '../../domain/resources.js';
import { SHARD_PREFIX } from '../../domain/jobs/shardRun.js';
import type { ShardsSpec } from '../../domain/jobs/shards.js';
import { builder } from '../builder.js';

export const SHARD_PHASES = ['CHECKING', 'REJECTED', 'RUNNING', 'MERGED', 'FAILED'] as const;
type Phase = (typeof SHARD_PHASES)[number];

export interface ShardShape {
  index: number;
  name: string;
  size: number;
  seed: number | null;
  range: number[] | null;
  command: string;
  status: string;
  taskId: string | null;
  attemptCount: number;
  costCad: number;
  lostCostCad: number;
}

export interface ShardGroupShape {
  phase: Phase;
  unit: string;
  totalUnits: number;
  total: number;
  done: number;
  running: number;
  queued: number;
  failed: number;
  retried: number;
  costCad: number;
  lostCostCad: number;
  checkCostCad: number;
  checkRecordId: string | null;
  mergeTaskId: string | null;
  mergeFile: string;
  mergeRules: string[];
  merged: unknown;
  shards: ShardShape[];
}

const RUNNING = new Set(['LEASED', 'RUNNING']);
const ENDED_BADLY = new Set(['FAILED', 'CANCELLED', 'STOPPED']);
const indexOf = (name: string) => Number(name.slice(SHARD_PREFIX.length));

/** How the result merges, in words per rule: field by field, or one rule for the whole file. */
function mergeRules(merge: ShardsSpec['merge']): string[] {
  const kind = merge.kind ?? 'fields';
  if (kind === 'script') return [`script: ${merge.script?.command ?? '?'}`];
  if (kind === 'fields') return (merge.fields ?? []).map((f) => `${f.name}: ${f.how}`);
  return [`${kind}: ${merge.file}`];
}

/** The group of the job's current plan, or null when that plan runs the work in one piece. */
export async function loadShardGroup(prisma: Resources['prisma'], jobId: string): Promise<ShardGroupShape | null> {
  const job = await prisma.job.findUnique({ where: { id: jobId }, select: { status: true, currentPlan: { select: { shards: true } } } });
  const spec = job?.currentPlan?.shards as unknown as ShardsSpec | null | undefined;
  if (!job || !spec) return null;
  const [tasks, record, merge] = await Promise.all([
    prisma.task.findMany({
      where: {
        jobId,
        role: { in: ['SHARD', 'SHARD_CHECK', 'MERGE'] },
      },
      select: { id: true, kind: true, role: true, name: true, status: true, attemptCount: true, attempts: { select: { id: true } } },
    }),
    prisma.preparationRecord.findFirst({
      where: { jobId, kind: 'adaptation' },
      orderBy: { createdAt: 'desc' },
      select: { id: true, outcome: true },
    }),
    prisma.jobEvent.findFirst({ where: { jobId, kind: 'shards.merged' }, orderBy: { id: 'desc' }, select: { payload: true } }),
  ]);
  const attemptIds = tasks.flatMap((t) => t.attempts.map((a) => a.id));
  const usage = attemptIds.length
    ? await prisma.usageEntry.groupBy({ by: ['attemptId', 'billable'], where: { attemptId: { in: attemptIds } }, _sum: { costCad: true } })
    : [];
  // Billable usage is the user's cost; the rest the contributors' loss (domain/billing/usage.ts).
  const billed = new Map<string, number>();
  const lost = new Map<string, number>();
  for (const u of usage) {
    const m = u.billable ? billed : lost;
    m.set(u.attemptId, (m.get(u.attemptId) ?? 0) + Number(u._sum.costCad ?? 0));
  }
  const costOf = (ts: ({ attempts: { id: string }[] } | undefined)[], m: Map<string, number>) =>
    ts.reduce((sum, t) => sum + (t ? t.attempts.reduce((s, a) => s + (m.get(a.id) ?? 0), 0) : 0), 0);

  const byIndex = new Map(tasks.filter((t) => t.role === 'SHARD').map((t) => [indexOf(t.name), t]));
  const mergeTask = tasks.find((t) => t.role === 'MERGE');
  const checkTasks = tasks.filter((t) => t.role === 'SHARD_CHECK');
  const rejected = record?.outcome === 'REJECTED';
  const shards: ShardShape[] = spec.shards.map((s, i) => {
    const t = byIndex.get(i + 1);
    return {
      index: i + 1,
      name: `${SHARD_PREFIX}${i + 1}`,
      size: s.size,
      seed: s.seed ?? null,
      range: s.range ?? null,
      command: s.command,
      // No task yet: waiting for the check (PENDING), or never to run (the check rejected the split).
      status: t?.status ?? (rejected ? 'NOT_RUN' : 'PENDING'),
      taskId: t?.id ?? null,
      attemptCount: t?.attemptCount ?? 0,
      costCad: costOf([t], billed),
      lostCostCad: costOf([t], lost),
    };
  });
  const count = (pred: (s: ShardShape) => boolean) => shards.filter(pred).length;
  const failed = count((s) => ENDED_BADLY.has(s.status));
  const phase: Phase = merge
    ? 'MERGED'
    : rejected
      ? 'REJECTED'
      : failed > 0 || ENDED_BADLY.has(job.status)
        ? 'FAILED'
        : byIndex.size > 0
          ? 'RUNNING'
          : 'CHECKING';
  const payload = (merge?.payload ?? null) as { merged?: unknown } | null;
  const ours = [...byIndex.values(), mergeTask];
  return {
    phase,
    unit: spec.unit,
    totalUnits: spec.total,
    total: shards.length,
    done: count((s) => s.status === 'SUCCEEDED'),
    running: count((s) => RUNNING.has(s.status)),
    queued: count((s) => s.status === 'QUEUED' || s.status === 'PENDING'),
    failed,
    retried: count((s) => s.attemptCount > 1),
    costCad: costOf(ours, billed),
    lostCostCad: costOf([...ours, ...checkTasks], lost),
    checkCostCad: costOf(checkTasks, billed),
    checkRecordId: record?.id ?? null,
    mergeTaskId: mergeTask?.id ?? null,
    mergeFile: spec.merge.file,
    mergeRules: mergeRules(spec.merge),
    merged: payload?.merged ?? null,
    shards,
  };
}

const ShardPhaseEnum = builder.enumType('ShardPhase', {
  values: {
    CHECKING: { description: 'The adaptation check runs (the bounded workload, unsharded and in shards); the shards wait for it.' },
    REJECTED: { description: 'The check rejected the split: the shards never run (the job runs unsharded, or stopped).' },
    RUNNING: { description: 'The shards run in parallel.' },
    MERGED: { description: 'Every shard succeeded and their results were merged (once).' },
    FAILED: { description: 'A shard failed after its retries, or the job ended before the merge.' },
  },
});

const Shard = builder.objectRef<ShardShape>('Shard').implement({
  description: 'One shard of a sharded run: its slice of the work, its seed, and its task (with every attempt).',
  fields: (t) => ({
    index: t.exposeInt('index', { description: '1…N.' }),
    name: t.exposeString('name', { description: 'Its task name (shard-<index>).' }),
    size: t.exposeInt('size', { description: 'Units of work in this shard (see ShardGroup.unit).' }),
    seed: t.exposeInt('seed', { nullable: true, description: 'Its seed, derived from the plan (null: the program takes none).' }),
    range: t.intList({
      nullable: true,
      description: 'Its slice of the inputs or items, [start, end) (null: a share of a count, see size).',
      resolve: (s) => s.range,
    }),
    command: t.exposeString('command'),
    status: t.exposeString('status', {
      description: "Its task's status; PENDING before the check has passed, NOT_RUN when the check rejected the split.",
    }),
    attemptCount: t.exposeInt('attemptCount', { description: 'Attempts so far (above 1: retried).' }),
    costCad: t.float({ description: 'What its attempts cost you (CAD).', resolve: (s) => s.costCad }),
    lostCostCad: t.float({
      description: 'What its lost attempts cost their contributors, not charged (CAD).',
      resolve: (s) => s.lostCostCad,
    }),
    task: t.prismaField({
      type: 'Task',
      nullable: true,
      description: 'The SHARD task with its attempts (null until the check has passed).',
      resolve: (query, s, _a, ctx) => (s.taskId ? ctx.prisma.task.findUnique({ ...query, where: { id: s.taskId } }) : null),
    }),
  }),
});

const ShardGroup = builder.objectRef<ShardGroupShape>('ShardGroup').implement({
  description: "A sharded job's shards as one group: progress, each shard, the check's verdict, the merge and the cost of all of them.",
  fields: (t) => ({
    phase: t.field({ type: ShardPhaseEnum, resolve: (g) => g.phase }),
    unit: t.exposeString('unit', { description: 'What is split: sample, seed, config, …' }),
    totalUnits: t.exposeInt('totalUnits', { description: 'Units of the whole run.' }),
    total: t.exposeInt('total', { description: 'N: how many shards.' }),
    done: t.exposeInt('done', { description: 'Shards that succeeded.' }),
    running: t.exposeInt('running', { description: 'Shards leased or running now.' }),
    queued: t.exposeInt('queued', {
      description: 'Shards waiting: queued (or waiting to be retried), or not created before the check passes.',
    }),
    failed: t.exposeInt('failed', { description: 'Shards that failed after their retries, or were cancelled.' }),
    retried: t.exposeInt('retried', { description: 'Shards that needed more than one attempt.' }),
    costCad: t.float({
      description: 'What all the shards cost you (CAD), every attempt of each (and the MERGE task of a merge script).',
      resolve: (g) => g.costCad,
    }),
    checkCostCad: t.float({
      description: "What the adaptation check's runs cost you (CAD): the bounded workload unsharded and in shards.",
      resolve: (g) => g.checkCostCad,
    }),
    lostCostCad: t.float({
      description: 'Work of the shards and the check lost through no fault of yours, not charged (CAD).',
      resolve: (g) => g.lostCostCad,
    }),
    mergeFile: t.exposeString('mergeFile', { description: 'The result file each shard writes and the merge combines.' }),
    mergeRules: t.exposeStringList('mergeRules', { description: 'How each field of it merges ("estimate: weighted-mean", …).' }),
    merged: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The merged result (null until every shard succeeded).',
      resolve: (g) => g.merged,
    }),
    mergeTask: t.prismaField({
      type: 'Task',
      nullable: true,
      description: "The MERGE task, when the plan merges with the user's own script on a worker (null: merged in the API, or not yet).",
      resolve: (query, g, _a, ctx) => (g.mergeTaskId ? ctx.prisma.task.findUnique({ ...query, where: { id: g.mergeTaskId } }) : null),
    }),
    check: t.prismaField({
      type: 'PreparationRecord',
      nullable: true,
      description: 'The adaptation check: the merged bounded shards against the unsharded bounded run (null while it runs).',
      resolve: (query, g, _a, ctx) =>
        g.checkRecordId ? ctx.prisma.preparationRecord.findUnique({ ...query, where: { id: g.checkRecordId } }) : null,
    }),
    shards: t.field({ type: [Shard], resolve: (g) => g.shards }),
  }),
});

builder.prismaObjectFields('Job', (t) => ({
  shardGroup: t.field({
    type: ShardGroup,
    nullable: true,
    description: 'The shards of a sharded job as one group (null: the current plan runs the work in one piece).',
    resolve: (job, _a, ctx) => loadShardGroup(ctx.prisma, job.id),
  }),
}));
