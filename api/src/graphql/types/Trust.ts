/**
 * Trust-weighted validation on the API (domain/trust): each checked result of a job, and the
 * replicas' cost. A worker's own record (reputation, confirmed, wrong) is on Worker.
 */
import { replicationCostCad } from '../../domain/trust/replication.js';
import { validationBadge, type ValidationBadge } from '../../domain/trust/validationBadge.js';
import { builder } from '../builder.js';

export const ResultCheckStatusEnum = builder.enumType('ResultCheckStatus', {
  values: ['SKIPPED', 'REPLICATING', 'TIEBREAK', 'MATCHED', 'RESOLVED', 'UNRESOLVED', 'UNCHECKED'] as const,
  description:
    "SKIPPED: not sampled (accepted). REPLICATING: a replica runs on another owner's worker. TIEBREAK: they differed; a third run decides. MATCHED: the replica agreed. RESOLVED: the tie-breaker agreed with one; the other was wrong. UNRESOLVED: no two agreed (the job failed). UNCHECKED: the replica could not run; accepted unverified.",
});

builder.prismaObject('ResultCheck', {
  description:
    "The trust check of one checkable task's result: sampled or not, replicated on which worker, and what the comparison decided.",
  fields: (t) => ({
    id: t.exposeID('id'),
    task: t.relation('task'),
    workerId: t.exposeString('workerId', { description: 'The worker whose result was checked.' }),
    reputation: t.exposeFloat('reputation', { description: "The worker's reputation when its result arrived." }),
    share: t.exposeFloat('share', { description: 'The share of its checkable results replicated at that reputation (0–1).' }),
    replicated: t.boolean({ resolve: (c) => c.status !== 'SKIPPED' }),
    status: t.expose('status', { type: ResultCheckStatusEnum }),
    wrongWorkerIds: t.exposeStringList('wrongWorkerIds', { description: 'Workers whose result the tie-breaker found wrong.' }),
    report: t.exposeString('report', { nullable: true, description: 'What was decided, in plain words.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    settledAt: t.expose('settledAt', { type: 'DateTime', nullable: true }),
  }),
});

const JobValidationRef = builder.objectRef<ValidationBadge>('JobValidation').implement({
  description:
    "Whether the job's results can be trusted, in the words the dashboard's outputs and timeline use (domain/trust/validationBadge.ts).",
  fields: (t) => ({
    badge: t.exposeString('badge', { description: 'validated, validated-by-replication, unverified, pending or not-validated.' }),
    label: t.exposeString('label', {
      description: 'The badge in words: validated, validated by replication, unverified, checks pending, not validated.',
    }),
    reason: t.exposeString('reason', {
      nullable: true,
      description: "Why, in a sentence (unverified: what kept it from being replicated; not validated: the job's reason).",
    }),
  }),
});

builder.prismaObjectFields('Job', (t) => ({
  validation: t.field({
    type: JobValidationRef,
    description:
      "The one answer to 'can I trust these results': validated, validated by replication, unverified (why), checks pending, not validated (why).",
    select: { id: true, status: true, statusReason: true },
    resolve: async (job, _a, ctx) =>
      validationBadge(
        job,
        await ctx.prisma.resultCheck.findMany({
          where: { jobId: job.id },
          select: { status: true, report: true },
          orderBy: { createdAt: 'asc' },
        }),
      ),
  }),
  resultChecks: t.prismaField({
    type: ['ResultCheck'],
    description: "The trust checks of its checkable results (replicated on another owner's worker or not), in order.",
    select: { id: true },
    resolve: (query, job, _a, ctx) =>
      ctx.prisma.resultCheck.findMany({ ...query, where: { jobId: job.id }, orderBy: { createdAt: 'asc' } }),
  }),
  replicationCostCad: t.float({
    description:
      "What re-running sampled results on other owners' workers cost (CAD): part of costCad, counted by the spending cap; shown apart.",
    select: { id: true },
    resolve: async (job, _a, ctx) => (await replicationCostCad(ctx.prisma, job.id)).costCad,
  }),
}));
