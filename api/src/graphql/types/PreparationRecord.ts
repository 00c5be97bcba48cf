/**
 * Preparation records: what each preparation step tried and decided, searchable across
 * jobs (a user sees their own; an operator every job's). docs/architecture.md §4.
 */
import { z } from 'zod';
import { recordDiff, recordWhere } from '../../domain/preparation/recordQueries.js';
import { builder } from '../builder.js';
import { decodeId } from '../../domain/ids.js';
import { isUuid, NOBODY } from '../principal.js';
import { JobRef } from './Job.js';

export const PreparationOutcomeEnum = builder.enumType('PreparationOutcome', {
  values: ['ACCEPTED', 'REJECTED', 'SKIPPED', 'FALLBACK'] as const,
});

builder.prismaNode('PreparationRecord', {
  id: { field: 'id' },
  nullable: true,
  findUnique: (id, ctx) => ({ id: isUuid(id) ? id : NOBODY, ...recordWhere(ctx.principal) }) as never,
  fields: (t) => ({
    job: t.relation('job', { type: JobRef }),
    step: t.exposeString('step', { description: '"reference" or the plan\'s step name.' }),
    kind: t.exposeString('kind', { description: 'reference | migration | adaptation | optimization' }),
    revision: t.exposeInt('revision', { description: '0: the transformation; 1…: revisions proposed by the preparation agent.' }),
    required: t.exposeBoolean('required'),
    transformation: t.exposeString('transformation'),
    outcome: t.expose('outcome', { type: PreparationOutcomeEnum }),
    reason: t.exposeString('reason', { description: 'Why, in plain words.' }),
    hardware: t.expose('hardware', {
      type: 'JSON',
      description: "The worker's hardware and runtime (accelerator, driver, torch/CUDA/HIP, python).",
    }),
    workload: t.exposeString('workload', { nullable: true }),
    accelerator: t.exposeString('accelerator', { nullable: true }),
    simulatedAccelerator: t.string({
      nullable: true,
      description: 'Set when the run was on a simulated accelerator (tests and demos: scheduled as that GPU class, numerics on the CPU).',
      resolve: (r) => (r.hardware as { simulatedAccelerator?: string | null } | null)?.simulatedAccelerator ?? null,
    }),
    taskId: t.exposeID('taskId', { nullable: true }),
    attemptId: t.exposeID('attemptId', { nullable: true }),
    workerId: t.exposeID('workerId', { nullable: true }),
    originalCodeId: t.exposeID('originalCodeId'),
    originalManifestSha: t.exposeString('originalManifestSha'),
    candidateCodeId: t.exposeID('candidateCodeId', { nullable: true }),
    candidateManifestSha: t.exposeString('candidateManifestSha', { nullable: true }),
    staticChecks: t.expose('staticChecks', { type: 'JSON', nullable: true }),
    numericalCheck: t.expose('numericalCheck', {
      type: 'JSON',
      nullable: true,
      description: "compare.py's report: per file and tensor, shape, dtype, max abs/rel error, share outside tolerance.",
    }),
    timings: t.expose('timings', {
      type: 'JSON',
      nullable: true,
      description: 'Timing samples (seconds) of the accepted version (a) and the candidate (b), and their statistics.',
    }),
    diff: t.string({
      nullable: true,
      description: 'The change, as a unified diff from the version it was made from to the candidate (text files).',
      select: { originalCodeId: true, candidateCodeId: true },
      resolve: (rec, _a, ctx) => recordDiff(ctx, rec),
    }),
    evidenceSha: t.exposeString('evidenceSha', {
      nullable: true,
      description: 'The evidence bundle (.tar.gz) of an accepted change: GET /blobs/<sha256>.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const RecordFilterInput = builder.inputType('PreparationRecordFilter', {
  fields: (t) => ({
    outcome: t.field({ type: [PreparationOutcomeEnum], required: false }),
    transformation: t.string({ required: false, validate: z.string().max(200) }),
    workload: t.string({ required: false, validate: z.string().max(50) }),
    accelerator: t.string({ required: false, validate: z.string().max(50) }),
    jobId: t.id({ required: false }),
    since: t.field({ type: 'DateTime', required: false }),
  }),
});

builder.queryFields((t) => ({
  preparationRecords: t.prismaConnection(
    {
      type: 'PreparationRecord',
      cursor: 'id',
      authScopes: { user: true },
      description: "Preparation records, newest first: your jobs' (every job's for an operator).",
      args: { filter: t.arg({ type: RecordFilterInput, required: false }) },
      defaultSize: 50,
      maxSize: 500,
      totalCount: (_c, args, ctx) => ctx.prisma.preparationRecord.count({ where: recordWhere(ctx.principal, filterOf(args.filter)) }),
      resolve: (query, _p, args, ctx) =>
        ctx.prisma.preparationRecord.findMany({
          ...query,
          where: recordWhere(ctx.principal, filterOf(args.filter)),
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        }),
    },
    {},
  ),
}));

function filterOf(
  f:
    | {
        outcome?: ('ACCEPTED' | 'REJECTED' | 'SKIPPED' | 'FALLBACK')[] | null;
        transformation?: string | null;
        workload?: string | null;
        accelerator?: string | null;
        jobId?: string | number | null;
        since?: Date | null;
      }
    | null
    | undefined,
) {
  if (!f) return {};
  let jobId: string | null = null;
  if (f.jobId !== undefined && f.jobId !== null) {
    try {
      jobId = decodeId(String(f.jobId), 'Job');
    } catch {
      jobId = NOBODY;
    }
  }
  return { ...f, jobId };
}
