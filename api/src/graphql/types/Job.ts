import { headlineMetric, type HeadlineMetric } from '../../domain/jobs/headlineMetric.js';
import { z } from 'zod';
import { cancelJob } from '../../domain/jobs/cancelJob.js';
import { createJob } from '../../domain/jobs/createJob.js';
import { answerQuestion } from '../../domain/jobs/answerQuestion.js';
import { jobOutputs } from '../../domain/jobs/jobOutputs.js';
import type { Estimate } from '../../domain/jobs/estimate.js';
import { estimateText } from '../../domain/jobs/estimateText.js';
import { askOutcomes, planAsks, type AskOutcome } from '../../domain/jobs/askOutcomes.js';
import type { AskDisposition } from '../../domain/jobs/planSchema.js';
import { builder } from '../builder.js';
import { decodeId } from '../../domain/ids.js';
import { isUuid, NOBODY, requireUser, viewerId } from '../principal.js';
import { ConflictError, NotFoundError, ValidationError } from './errors.js';

export const JobStatusEnum = builder.enumType('JobStatus', {
  values: [
    'DRAFT',
    'PLANNING',
    'NEEDS_INPUT',
    'PREPARING',
    'RUNNING',
    'VALIDATING',
    'SUCCEEDED',
    'FAILED',
    'CANCELLED',
    'STOPPED',
  ] as const,
});

const JobEstimateRef = builder.objectRef<Estimate>('JobEstimate').implement({
  description:
    "The full run's estimate, from its smoke run (or the preparation run on the same class of worker); after the run, how far off it was.",
  fields: (t) => ({
    source: t.exposeString('source', { description: '"smoke run" or "preparation run".' }),
    basis: t.exposeString('basis', { description: 'What was measured, on which worker, and how it was scaled to the full run.' }),
    durationSec: t.exposeFloat('durationSec'),
    lowSec: t.exposeFloat('lowSec'),
    highSec: t.exposeFloat('highSec'),
    costCad: t.exposeFloat('costCad'),
    lowCad: t.exposeFloat('lowCad'),
    highCad: t.exposeFloat('highCad', { description: 'The spending-cap check at lease grant projects the full run to this.' }),
    peakMemoryMiB: t.float({
      nullable: true,
      description: 'Peak resident memory of the smoke run (sampled every second).',
      resolve: (e) => e.measured.peakMemoryMiB,
    }),
    outputBytes: t.float({ description: 'Size of what the smoke run wrote to its outputs.', resolve: (e) => e.measured.outputBytes }),
    actualSec: t.float({
      nullable: true,
      description: 'How long the full run really took (null until it ends).',
      resolve: (e) => e.actualSec ?? null,
    }),
    actualCostCad: t.float({ nullable: true, resolve: (e) => e.actualCostCad ?? null }),
    ratio: t.float({ nullable: true, description: 'actualSec / durationSec.', resolve: (e) => e.ratio ?? null }),
    unit: t.string({
      nullable: true,
      description: 'The unit the plan scales the workload by (epoch, step, sample…); null without a scale.',
      resolve: (e) => e.measured?.unit ?? null,
    }),
    boundedUnits: t.float({
      nullable: true,
      description: 'How many units the smoke run did.',
      resolve: (e) => e.measured?.bounded ?? null,
    }),
    fullUnits: t.float({
      nullable: true,
      description: 'How many units the full run does (its progress: epoch 3 of fullUnits).',
      resolve: (e) => e.measured?.full ?? null,
    }),
    secondsPerStep: t.float({
      nullable: true,
      description: "Seconds per metric step, from the smoke run's progress metrics; null without them.",
      resolve: (e) => e.measured?.secondsPerStep ?? null,
    }),
  }),
});

const HeadlineMetricRef = builder.objectRef<HeadlineMetric>('HeadlineMetric').implement({
  description:
    "The one number that tells two runs apart in a list (domain/jobs/headlineMetric.ts): the evaluation's quality metric, else the run's.",
  fields: (t) => ({
    name: t.exposeString('name'),
    value: t.exposeFloat('value'),
    source: t.exposeString('source', { description: 'evaluation or run.' }),
  }),
});

const PlanAskRef = builder.objectRef<AskDisposition>('PlanAsk').implement({
  description: "One ask of the user's request and its disposition in the plan: honoured (how) or refused (why).",
  fields: (t) => ({
    ask: t.exposeString('ask', { description: "The request's words, as the user wrote them." }),
    kind: t.exposeString('kind', { description: 'setting, sweep, output, scale, threshold, hardware, limit, target, setup or other.' }),
    status: t.exposeString('status', { description: 'honoured or refused.' }),
    detail: t.exposeString('detail', {
      description: 'Honoured: how (the flag, the constant changed, the output collected). Refused: why, naming what the project has.',
    }),
    setting: t.string({
      nullable: true,
      description: "The setting's address (file#name) when the ask is about one.",
      resolve: (a) => a.setting ?? null,
    }),
  }),
});

const AskOutcomeRef = builder.objectRef<AskOutcome>('AskOutcome').implement({
  description: "What became of one ask of the request: done, planned, not done (the job's reason) or refused (why).",
  fields: (t) => ({
    ask: t.exposeString('ask'),
    kind: t.exposeString('kind'),
    status: t.exposeString('status', { description: "The plan's disposition: honoured or refused." }),
    detail: t.exposeString('detail'),
    outcome: t.exposeString('outcome', { description: 'done, planned, not-done or refused.' }),
    line: t.exposeString('line', { description: 'One line for a person.' }),
  }),
});

export const JobRef = builder.prismaNode('Job', {
  id: { field: 'id' },
  // A node that is not yours loads as null (the same answer as one that does not exist).
  nullable: true,
  findUnique: (id, ctx) => ({ id: isUuid(id) ? id : NOBODY, ownerId: viewerId(ctx) }),
  fields: (t) => ({
    title: t.exposeString('title'),
    request: t.exposeString('request', { description: "The user's words: what they want done." }),
    status: t.expose('status', { type: JobStatusEnum }),
    statusReason: t.exposeString('statusReason', { nullable: true, description: 'Why the job is in its status, in plain words.' }),
    spendingCapCad: t.expose('spendingCapCad', { type: 'Decimal', nullable: true }),
    costCad: t.expose('costCad', {
      type: 'Decimal',
      description: 'Estimated cost so far (CAD): what you are charged, and what the spending cap counts.',
    }),
    agentCostCad: t.expose('agentCostCad', {
      type: 'Decimal',
      description:
        "What the agents' model calls for this job cost (CAD; tokens at the configured rates; the builtin rules cost nothing): within costCad, and counted by the cap.",
    }),
    lostCostCad: t.expose('lostCostCad', {
      type: 'Decimal',
      description:
        "Work lost through no fault of yours, not charged (CAD): attempts whose worker stopped responding or failed on its own machine. The contributors' loss; not in costCad.",
    }),
    estimate: t.field({
      type: JobEstimateRef,
      nullable: true,
      description: "The full run's estimate (duration and cost with a range) from its smoke run; null until one ran.",
      resolve: (j) => (j.estimate as unknown as Estimate | null) ?? null,
    }),
    estimateText: t.string({
      nullable: true,
      description:
        'The estimate as one sentence ("about 4 min (3 min–6 min), CA$0.0200 (0.0100–0.0300)"), and after the full run how long it took and how far off the estimate was; null until there is an estimate.',
      resolve: (j) => {
        const e = j.estimate as unknown as Estimate | null;
        return e ? estimateText(e) : null;
      },
    }),
    hardwarePreference: t.exposeString('hardwarePreference', { nullable: true }),
    acceptanceCriteria: t.expose('acceptanceCriteria', { type: 'JSON', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    currentPlan: t.relation('currentPlan', { nullable: true }),
    askOutcomes: t.field({
      type: [AskOutcomeRef],
      description:
        "Each ask of the request with its outcome (the current plan's dispositions and the job's status); empty until a plan is accepted.",
      select: { status: true, statusReason: true, currentPlan: { select: { asks: true } } },
      resolve: (job) => askOutcomes(planAsks(job.currentPlan?.asks), job.status, job.statusReason),
    }),
    frozenCode: t.relation('frozenCode', { nullable: true }),
    originalCode: t.prismaField({
      type: 'CodeVersion',
      nullable: true,
      select: { id: true },
      resolve: (query, job, _a, ctx) => ctx.prisma.codeVersion.findFirst({ ...query, where: { jobId: job.id, status: 'ORIGINAL' } }),
    }),
    codeVersions: t.relation('codeVersions', { query: { orderBy: { createdAt: 'asc' } } }),
    plans: t.relation('plans', { query: { orderBy: { version: 'asc' } } }),
    questions: t.relation('questions', { query: { orderBy: { createdAt: 'asc' } } }),
    tasks: t.relation('tasks', { query: { orderBy: { createdAt: 'asc' } } }),
    headlineMetric: t.field({
      type: HeadlineMetricRef,
      nullable: true,
      description: "The evaluation's (else the run's) headline metric from their stored results; null until one reported a metric.",
      // Selected with the job (the jobs list loads it for a page of jobs in one query, not one per job).
      select: {
        tasks: {
          where: { status: 'SUCCEEDED', kind: { in: ['RUN', 'EVALUATE'] } },
          select: { kind: true, result: true },
          orderBy: { createdAt: 'asc' },
        },
      },
      resolve: (job) => headlineMetric(job.tasks),
    }),
    preparationRecords: t.relation('preparations', {
      description: 'What the preparation stage tried and decided, in order.',
      query: { orderBy: [{ createdAt: 'asc' }, { revision: 'asc' }] },
    }),
    outputs: t.field({
      type: [FileEntry],
      description:
        'The downloadable results: files of the succeeded run (and evaluation) tasks. All at once: GET /jobs/<id>/outputs.tar.gz.',
      resolve: (job, _a, ctx) => jobOutputs(ctx.prisma, job.id),
    }),
    outputsValidated: t.boolean({
      description:
        "Whether the outputs passed the job's checks: only a SUCCEEDED job's did. Outputs of a job that failed its checks stay downloadable, marked not validated.",
      select: { status: true },
      resolve: (job) => job.status === 'SUCCEEDED',
    }),
    openQuestions: t.relation('questions', { query: { where: { status: 'OPEN' }, orderBy: { createdAt: 'asc' } } }),
    events: t.prismaField({
      type: ['JobEvent'],
      description: 'The job event log in order; pass `after` (an event id) to get only newer ones.',
      args: { after: t.arg.string({ required: false }), first: t.arg.int({ required: false }) },
      select: { id: true },
      resolve: (query, job, args, ctx) =>
        ctx.prisma.jobEvent.findMany({
          ...query,
          where: { jobId: job.id, ...(args.after && /^\d+$/.test(args.after) ? { id: { gt: BigInt(args.after) } } : {}) },
          orderBy: { id: 'asc' },
          take: Math.min(Math.max(args.first ?? 500, 1), 2000),
        }),
    }),
  }),
});

builder.prismaObject('JobEvent', {
  fields: (t) => ({
    id: t.string({ resolve: (e) => e.id.toString(), description: 'Monotonic per database; use it as `after` to resume.' }),
    kind: t.exposeString('kind'),
    payload: t.expose('payload', { type: 'JSON' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('CodeVersion', {
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.exposeString('status'),
    origin: t.exposeString('origin'),
    step: t.exposeString('step', { nullable: true, description: 'The preparation step a candidate was made for.' }),
    revision: t.exposeInt('revision', { nullable: true }),
    staticChecks: t.expose('staticChecks', { type: 'JSON', nullable: true }),
    parentId: t.exposeID('parentId', { nullable: true }),
    fileCount: t.exposeInt('fileCount'),
    totalBytes: t.expose('totalBytes', { type: 'BigInt' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    files: t.field({
      type: [FileEntry],
      resolve: (cv) => cv.manifest as unknown as FileEntryShape[],
    }),
  }),
});

export type FileEntryShape = { path: string; sha256: string; size: number; mode: number };
export const FileEntry = builder.objectRef<FileEntryShape>('FileEntry').implement({
  fields: (t) => ({
    path: t.exposeString('path'),
    sha256: t.exposeString('sha256'),
    size: t.exposeInt('size'),
    mode: t.exposeInt('mode'),
  }),
});

builder.prismaObject('Plan', {
  fields: (t) => ({
    id: t.exposeID('id'),
    version: t.exposeInt('version'),
    author: t.exposeString('author'),
    summary: t.exposeString('summary'),
    steps: t.expose('steps', { type: 'JSON' }),
    command: t.exposeString('command'),
    environment: t.expose('environment', { type: 'JSON' }),
    requirements: t.expose('requirements', { type: 'JSON' }),
    outputs: t.expose('outputs', { type: 'JSON' }),
    acceptanceCriteria: t.expose('acceptanceCriteria', { type: 'JSON' }),
    preparation: t.expose('preparationWorkload', {
      type: 'JSON',
      nullable: true,
      description: 'The preparation stage the plan asks for: bounded workload, reference and target environments, steps, revision budget.',
    }),
    pipeline: t.expose('pipeline', {
      type: 'JSON',
      nullable: true,
      description:
        'Steps that run before the main command, in order ([{ name, command, produces, timeoutSec }]); each hands what it produces to the later ones.',
    }),
    smokeRun: t.expose('smokeRun', {
      type: 'JSON',
      nullable: true,
      description: 'The smoke run before the full run ({ command, timeoutSec, scale: { unit, bounded, full } }); null: none.',
    }),
    asks: t.field({ type: [PlanAskRef], description: 'Every ask of the request and its disposition.', resolve: (p) => planAsks(p.asks) }),
    settings: t.expose('settings', {
      type: 'JSON',
      nullable: true,
      description:
        'Settings changed by rewriting their literals ([{ file, name, line, col, endLine, endCol, from, to }]); the frozen code holds them. Null: none.',
    }),
    shards: t.expose('shards', {
      type: 'JSON',
      nullable: true,
      description:
        'The work split into shards (issue 14): per-shard commands and seeds, the bounded check against the unsharded run, the merge of the result file field by field; null: one run.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('Question', {
  fields: (t) => ({
    id: t.exposeID('id'),
    text: t.exposeString('text'),
    choices: t.exposeStringList('choices'),
    answer: t.exposeString('answer', { nullable: true }),
    status: t.exposeString('status'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    answeredAt: t.expose('answeredAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryFields((t) => ({
  job: t.prismaField({
    type: 'Job',
    nullable: true,
    authScopes: { user: true },
    args: { id: t.arg.id() },
    description: 'One of your jobs; null when it does not exist or is not yours.',
    resolve: (query, _p, { id }, ctx) => {
      let uuid: string;
      try {
        uuid = decodeId(id, 'Job');
      } catch {
        return null;
      }
      return ctx.prisma.job.findFirst({ ...query, where: { id: uuid, ownerId: requireUser(ctx) } });
    },
  }),
  jobs: t.prismaConnection(
    {
      type: 'Job',
      cursor: 'id',
      authScopes: { user: true },
      args: { status: t.arg({ type: [JobStatusEnum], required: false }) },
      defaultSize: 20,
      maxSize: 100,
      totalCount: (_c, args, ctx) =>
        ctx.prisma.job.count({ where: { ownerId: requireUser(ctx), ...(args.status?.length ? { status: { in: args.status } } : {}) } }),
      resolve: (query, _p, args, ctx) =>
        ctx.prisma.job.findMany({
          ...query,
          where: { ownerId: requireUser(ctx), ...(args.status?.length ? { status: { in: args.status } } : {}) },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        }),
    },
    {},
  ),
}));

const FileInput = builder.inputType('FileInput', {
  fields: (t) => ({
    path: t.string({ validate: z.string().min(1).max(1024) }),
    sha256: t.string({ validate: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex characters') }),
    mode: t.int({ required: false }),
  }),
});
const ArchiveInput = builder.inputType('ArchiveInput', {
  fields: (t) => ({
    sha256: t.string({ validate: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex characters') }),
  }),
});
const CreateJobInput = builder.inputType('CreateJobInput', {
  fields: (t) => ({
    title: t.string({ validate: z.string().trim().min(1, 'Give the job a title.').max(200) }),
    request: t.string({ validate: z.string().trim().min(1, 'Say what you want done.').max(20_000) }),
    spendingCapCad: t.float({ required: false, validate: z.number().positive('The cap must be above 0.').max(1_000_000).nullish() }),
    hardwarePreference: t.string({ required: false, validate: z.enum(['any', 'cpu', 'nvidia', 'amd', 'apple']).nullish() }),
    files: t.field({ type: [FileInput], required: false, validate: z.array(z.any()).max(10_000).nullish() }),
    archive: t.field({ type: ArchiveInput, required: false }),
  }),
});
const AnswerQuestionInput = builder.inputType('AnswerQuestionInput', {
  fields: (t) => ({
    questionId: t.id(),
    answer: t.string({ validate: z.string().trim().min(1, 'The answer is empty.').max(10_000) }),
  }),
});

builder.mutationFields((t) => ({
  createJob: t.prismaField({
    type: 'Job',
    authScopes: { user: true },
    args: { input: t.arg({ type: CreateJobInput }) },
    errors: { types: [ValidationError, NotFoundError] },
    resolve: async (query, _p, { input }, ctx) => {
      const job = await createJob(ctx, requireUser(ctx), input);
      return ctx.prisma.job.findUniqueOrThrow({ ...query, where: { id: job.id } });
    },
  }),
  cancelJob: t.prismaField({
    type: 'Job',
    authScopes: { user: true },
    args: { id: t.arg.id() },
    errors: { types: [NotFoundError, ConflictError] },
    resolve: async (query, _p, { id }, ctx) => {
      const job = await cancelJob(ctx, requireUser(ctx), decodeId(id, 'Job'));
      return ctx.prisma.job.findUniqueOrThrow({ ...query, where: { id: job.id } });
    },
  }),
  answerQuestion: t.prismaField({
    type: 'Question',
    authScopes: { user: true },
    args: { input: t.arg({ type: AnswerQuestionInput }) },
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    resolve: async (query, _p, { input }, ctx) => {
      const q = await answerQuestion(ctx, requireUser(ctx), String(input.questionId), input.answer);
      return ctx.prisma.question.findUniqueOrThrow({ ...query, where: { id: q.id } });
    },
  }),
}));
