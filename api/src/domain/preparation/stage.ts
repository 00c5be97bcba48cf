/**
 * The preparation stage (docs/architecture.md §4): what a PREPARING job does before its
 * full run. `advancePreparation(r, jobId)` looks at what is stored — the plan's
 * preparation spec, the job's code versions, its REFERENCE/CANDIDATE/BENCHMARK tasks and
 * its PreparationRecords — and does the next thing. It is called on every relevant event
 * and by the tick's reconcile, so a crashed API process loses nothing: the state is the
 * database, and every step is made once (unique (job, step, revision) on code versions and
 * records; task creation under the job's row lock).
 *
 *   reference   a REFERENCE task runs the unchanged code with the bounded workload on the
 *               reference environment. No worker of that environment online and the first
 *               required step is the PyTorch device-agnostic migration → the reference is
 *               the rewrite on the target environment instead (record FALLBACK, with why);
 *               so is it when the first required step is pytorch-version-compat (the unchanged
 *               code calls a torch newer than every online worker's: it runs nowhere).
 *               The unchanged code's reference, once it succeeded, gets its record too
 *               (ACCEPTED, transformation "none", on the worker that ran it).
 *   each step   (in the plan's order; revision 0 from the transformation, later revisions
 *               from the preparation agent's patches)
 *       candidate   CodeVersion CANDIDATE (parent: the last accepted version); no change →
 *                   record SKIPPED; static checks (parse, compile) before any worker sees it
 *       run         a CANDIDATE task: the bounded workload on the target environment (or
 *                   the reference environment for a step `on: 'reference'`: an optimization
 *                   tried on the source GPU before a migration); its outputs compared with
 *                   the reference's (compare.py, the step's tolerances)
 *       benchmark   optimizations only: a BENCHMARK task on the same worker times the last
 *                   accepted version and the candidate alternately (chatgpu.bench);
 *                   compareTimings decides "faster"
 *       decision    acceptCandidate (ACCEPTED, evidence bundle) or rejectCandidate
 *                   (REJECTED). A rejected optional step leaves the last accepted version; a
 *                   rejected required step asks for a revision within the revision budget,
 *                   then fails the job with what was tried and why it failed.
 *   freeze      the last accepted version is frozen; startRun queues the RUN task on it
 *               (pinned to the validating worker when the plan says so).
 *
 * The acceptance criteria are never read for writing here: they were fixed with the plan.
 */
import type { Prisma as P, Task } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import type { ComparisonReport } from '../../preparation/compareOutputs.js';
import { apiPython, compareTaskOutputs, toleranceCriteria } from './compareTaskOutputs.js';
import { compareTimings, type TimingComparison } from '../../preparation/compareTimings.js';
import { runStaticChecks, type StaticCheckResult } from '../../preparation/runStaticChecks.js';
import { targetOfWorkload, transformationByName } from '../../preparation/transformations.js';
import type { TransformResult } from '../../preparation/types.js';
import { readBlobBuffer } from '../blobs/blobStore.js';
import { normalizeUploadPath, type ManifestEntry } from '../blobs/paths.js';
import type { Criteria } from '../jobs/acceptance.js';
import { planRequirements } from '../jobs/acceptPlan.js';
import { insertTask, type Requirements } from '../jobs/createTask.js';
import { estimateRequirement, measureSmokeRun } from '../jobs/estimate.js';
import { recordJobEvent } from '../jobs/jobEvents.js';
import { applyTransition, commitTransition, InvalidTransitionError } from '../jobs/jobLifecycle.js';
import { cancelOutstandingWork } from '../jobs/outstandingWork.js';
import type { PlanInput, PreparationSpec } from '../jobs/planSchema.js';
import type { Resources } from '../resources.js';
import { networkCapacity, workersTorch } from '../workers/networkCapacity.js';
import { changedPaths, loadTree, manifestFromTree, putEvidence, unifiedDiff } from './codeTrees.js';
import { insertRecord, type RecordInput } from './records.js';
import { modelFamilyOf, orderSteps, similarPreparations, verdictOf, type Verdict } from './similar.js';
import { lockJob } from '../../db/sql/lockJob.js';
import { candidateRun, describeResumeCheck, isResumeStep, readResumeCheck, unchangedReason, WITHOUT_RESUME } from './resumeCheck.js';

export const DEFAULT_REVISION_BUDGET = 3;
const BENCH_REPEATS = 9; // 1 warm-up + 8 measured per side: compareTimings' minimum
const REFERENCE_STEP = 'reference';

export type StageState =
  | { state: 'not-preparing' }
  | { state: 'waiting'; on: string }
  | { state: 'revision'; step: string; revision: number; feedback: string }
  | { state: 'running' }
  | { state: 'failed'; reason: string };

type Step = PreparationSpec['steps'][number];

interface Ctx {
  r: Resources;
  jobId: string;
  ownerId: string;
  plan: PlanInput & { id: string };
  spec: PreparationSpec;
  criteria: Criteria;
  original: { id: string; manifest: ManifestEntry[] };
  /** The original code's kind of program (similar.ts), for the records and similar cases. */
  modelFamily: string;
  /** When the plan was made: only records before it count as similar cases (a stable verdict). */
  planCreatedAt: Date;
}

/** The model family of an original code version (immutable, so computed once per process). */
const familyCache = new Map<string, string>();
async function familyOf(r: Resources, codeId: string, manifest: ManifestEntry[]): Promise<string> {
  let f = familyCache.get(codeId);
  if (!f) {
    f = modelFamilyOf((await loadTree(r, manifest)).text);
    if (familyCache.size > 1000) familyCache.clear();
    familyCache.set(codeId, f);
  }
  return f;
}

/** Does the next thing the stage needs; safe to call at any time, from any process, any number of times. */
export async function advancePreparation(r: Resources, jobId: string): Promise<StageState> {
  const ctx = await loadContext(r, jobId);
  if (!ctx) return { state: 'not-preparing' };
  try {
    return await advance(ctx);
  } catch (err) {
    // The job moved on while we worked (cancelled, or another process decided): nothing to do.
    if (err instanceof InvalidTransitionError) return { state: 'not-preparing' };
    throw err;
  }
}

async function loadContext(r: Resources, jobId: string): Promise<Ctx | null> {
  const job = await r.prisma.job.findUnique({ where: { id: jobId }, include: { currentPlan: true } });
  if (!job || job.status !== 'PREPARING' || !job.currentPlan?.preparationWorkload) return null;
  const planRow = job.currentPlan;
  const original = await r.prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
  const plan = {
    id: planRow.id,
    summary: planRow.summary,
    steps: planRow.steps as string[],
    command: planRow.command,
    environment: Object.entries(planRow.environment as Record<string, string>).map(([name, value]) => ({ name, value })),
    hardware: planHardware(planRow.requirements as Requirements),
    ...((planRow.requirements as Requirements).timeoutSec ? { timeoutSec: (planRow.requirements as Requirements).timeoutSec } : {}),
    outputs: planRow.outputs as string[],
    acceptance: planRow.acceptanceCriteria as unknown as PlanInput['acceptance'],
  } as PlanInput & { id: string };
  return {
    r,
    jobId,
    ownerId: job.ownerId,
    plan,
    spec: planRow.preparationWorkload as unknown as PreparationSpec,
    criteria: job.acceptanceCriteria as unknown as Criteria,
    original: { id: original.id, manifest: original.manifest as unknown as ManifestEntry[] },
    modelFamily: await familyOf(r, original.id, original.manifest as unknown as ManifestEntry[]),
    planCreatedAt: planRow.createdAt,
  };
}

function planHardware(req: Requirements): PlanInput['hardware'] {
  return {
    workload: req.workload,
    ...(req.accelVendor ? { accelVendor: req.accelVendor } : {}),
    ...(req.minMemoryMiB ? { minMemoryMiB: req.minMemoryMiB } : {}),
    ...(req.minAccelMemoryMiB ? { minAccelMemoryMiB: req.minAccelMemoryMiB } : {}),
    ...(req.devices ? { devices: req.devices } : {}),
  };
}

/**
 * `readOnly`: only say where the stage stands, writing nothing — what a reader (the preparer's
 * tools) needs; the next thing is then left to the stage's own advance. It differs from a full
 * advance only where that would write: no task queued, no record or decision, no failure, no freeze.
 */
async function advance(ctx: Ctx, opts: { readOnly?: boolean } = {}): Promise<StageState> {
  const { r, jobId, spec } = ctx;
  const { readOnly = false } = opts;
  // 1. The reference.
  const reference = readOnly ? await referenceState(ctx) : await ensureReference(ctx);
  if (reference.state === 'failed') return readOnly ? reference : failJob(ctx, reference.reason);
  if (reference.state !== 'done') return { state: 'waiting', on: 'the reference run' };
  const refTask = reference.task;

  // 2. The steps, in order — consecutive optional ones by how often similar cases accepted them.
  let accepted = await lastAccepted(ctx);
  const verdicts = await similarVerdicts(ctx);
  for (const step of orderSteps(spec.steps, (s) => verdicts.get(s.name)?.acceptRate ?? null)) {
    for (let revision = 0; ; revision++) {
      const record = await r.prisma.preparationRecord.findUnique({ where: { jobId_step_revision: { jobId, step: step.name, revision } } });
      if (record) {
        if (record.outcome === 'ACCEPTED' || record.outcome === 'SKIPPED' || !step.required) break;
        // A required step was rejected: the next revision, if the budget allows one.
        const budget = spec.revisionBudget ?? DEFAULT_REVISION_BUDGET;
        const next = await r.prisma.codeVersion.findUnique({
          where: { jobId_step_revision: { jobId, step: step.name, revision: revision + 1 } },
        });
        if (next) continue;
        if (revision >= budget)
          return readOnly
            ? { state: 'failed', reason: `${step.name}: the revision budget is spent` }
            : failJob(ctx, await explainExhausted(ctx, step, revision));
        return { state: 'revision', step: step.name, revision: revision + 1, feedback: feedbackOf(record) };
      }
      if (readOnly) return { state: 'waiting', on: `${step.name}${revision ? ` revision ${revision}` : ''}` };
      const s = await advanceCandidate(ctx, step, revision, accepted, refTask);
      if (s) return s;
      // Decided just now: loop again to read the record.
      revision--;
    }
    accepted = await lastAccepted(ctx);
  }

  // 3. Freeze and run.
  if (readOnly) return { state: 'waiting', on: 'the freeze' };
  await freezeAndRun(ctx, accepted);
  return { state: 'running' };
}

// ───────────────────────────── reference ─────────────────────────────

type ReferenceState = { state: 'waiting' } | { state: 'failed'; reason: string } | { state: 'done'; task: Task };

async function ensureReference(ctx: Ctx): Promise<ReferenceState> {
  const { r, jobId, spec } = ctx;
  let task = await r.prisma.task.findFirst({ where: { jobId, kind: 'REFERENCE' } });
  if (!task) {
    const cap = await networkCapacity(r);
    const online = cap.classes.some(
      (c) => c.workloads.includes(spec.reference.workload) && (!spec.reference.accelVendor || c.accelVendor === spec.reference.accelVendor),
    );
    const firstRequired = spec.steps.find((s) => s.required);
    let codeId = ctx.original.id;
    let env = spec.reference;
    let fallback: string | null = null;
    const deviceFallback = !online && firstRequired?.transformation === 'pytorch-device-agnostic' && !sameEnv(spec.reference, spec.target);
    // PyTorch calls newer than every online worker's torch: the unchanged code runs nowhere.
    const versionFallback = firstRequired?.transformation === 'pytorch-version-compat';
    if (deviceFallback || versionFallback) {
      // The unchanged code cannot run anywhere online: take the reference from the rewrite
      // (with the target's torch version) on the target instead, and say so in the record.
      const rewrite = await transform(ctx, firstRequired!, ctx.original);
      const manifest = await manifestFromTree(r, ctx.original.manifest, rewrite.tree, ctx.ownerId);
      const cv = await upsertVersion(r, {
        jobId,
        step: REFERENCE_STEP,
        revision: 0,
        parentId: ctx.original.id,
        origin: `${firstRequired!.transformation} (reference fallback)`,
        manifest,
      });
      codeId = cv.id;
      env = spec.target;
      const newer = rewrite.hazards.filter((h) => h.rule === 'torch-version').map((h) => `${h.file}:${h.line} ${h.what}`);
      fallback = deviceFallback
        ? `No ${envWords(spec.reference)} worker was online to run the unchanged code (online: ${cap.summary}), so the reference was taken from its device-agnostic rewrite on a ${envWords(spec.target)} worker. The comparison then checks the rewrite is repeatable there, not that it matches the original on its own hardware.`
        : `The unchanged code calls PyTorch newer than the online workers' (${newer.slice(0, 5).join('; ') || 'none found'}), so it runs on no online worker (online: ${cap.summary}): the reference was taken from its rewrite to the workers' PyTorch on a ${envWords(spec.target)} worker. The comparison then checks the rewrite is repeatable there, not that it matches the original on a newer PyTorch.`;
    }
    const record: RecordInput | null = fallback
      ? {
          jobId,
          step: REFERENCE_STEP,
          kind: 'reference',
          revision: 0,
          required: true,
          hardware: { planned: env, online: cap.summary },
          workload: env.workload,
          accelerator: env.accelVendor ?? 'none',
          modelFamily: ctx.modelFamily,
          taskId: null,
          attemptId: null,
          workerId: null,
          original: ctx.original,
          candidate: {
            id: codeId,
            manifest: (await r.prisma.codeVersion.findUniqueOrThrow({ where: { id: codeId } })).manifest as unknown as ManifestEntry[],
          },
          transformation: firstRequired!.transformation,
          outcome: 'FALLBACK',
          reason: fallback,
        }
      : null;
    task = await createStageTask(ctx, {
      kind: 'REFERENCE',
      name: 'reference',
      codeVersionId: codeId,
      env,
      command: spec.workload.command,
      environment: {},
      record,
    });
    if (!task) return { state: 'waiting' };
  }
  if (task.status === 'FAILED') {
    const fallback = task.codeVersionId !== ctx.original.id;
    return {
      state: 'failed',
      reason: `The reference run (${fallback ? `the rewrite (${spec.steps.find((s) => s.required)?.transformation})` : 'the unchanged code'} with the bounded workload \`${spec.workload.command}\`) failed: ${task.statusReason ?? 'no reason recorded'}${await errorTail(r, task.currentAttemptId)}`,
    };
  }
  if (task.status !== 'SUCCEEDED') return { state: 'waiting' };
  if (task.codeVersionId === ctx.original.id) await recordReference(ctx, task);
  return { state: 'done', task };
}

/** The reference as it stands, creating and recording nothing (advance's readOnly). */
async function referenceState(ctx: Ctx): Promise<ReferenceState> {
  const task = await ctx.r.prisma.task.findFirst({ where: { jobId: ctx.jobId, kind: 'REFERENCE' } });
  if (task?.status === 'FAILED') return { state: 'failed', reason: task.statusReason ?? 'the reference run failed' };
  return task?.status === 'SUCCEEDED' ? { state: 'done', task } : { state: 'waiting' };
}

/**
 * The reference that ran the unchanged code gets its record too (step 1 of the flow, on the
 * worker and hardware that produced it), once: the (job, step, revision) key keeps it single.
 */
async function recordReference(ctx: Ctx, task: Task): Promise<void> {
  const { r, jobId, spec } = ctx;
  if (await r.prisma.preparationRecord.findUnique({ where: { jobId_step_revision: { jobId, step: REFERENCE_STEP, revision: 0 } } })) return;
  const attempt = await attemptOf(r, task);
  const outputs = ((task.result as { outputs?: ManifestEntry[] } | null)?.outputs ?? []).length;
  const record: RecordInput = {
    jobId,
    step: REFERENCE_STEP,
    kind: 'reference',
    revision: 0,
    required: true,
    hardware: attempt.hardware,
    workload: task.workload,
    accelerator: attempt.accelerator,
    modelFamily: ctx.modelFamily,
    taskId: task.id,
    attemptId: attempt.id,
    workerId: attempt.workerId,
    original: ctx.original,
    candidate: null,
    transformation: 'none',
    outcome: 'ACCEPTED',
    reason: `The unchanged code ran the bounded workload \`${spec.workload.command}\` on ${attempt.workerName} (${envWords(spec.reference)}${attempt.hardware.simulatedAccelerator ? `, simulated accelerator ${String(attempt.hardware.simulatedAccelerator)}: numerics on the CPU` : ''}); its ${outputs} output file(s) are the fixed reference every candidate is compared with.`,
  };
  try {
    await commitTransition(r, jobId, async (tx) => ({ eventIds: (await insertRecord(tx, r, record)).eventIds }));
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
}

// ───────────────────────────── candidates ─────────────────────────────

/** Moves (step, revision) forward; returns a state to stop at, or null once it is decided. */
async function advanceCandidate(ctx: Ctx, step: Step, revision: number, accepted: Version, refTask: Task): Promise<StageState | null> {
  const { r, jobId, spec } = ctx;
  let cv = await r.prisma.codeVersion.findUnique({ where: { jobId_step_revision: { jobId, step: step.name, revision } } });
  if (!cv) {
    if (revision > 0) return { state: 'waiting', on: `a revision of ${step.name}` };
    // An optional step that similar cases rejected most of the time is not tried (with why).
    const verdict = step.required ? null : (await similarVerdicts(ctx)).get(step.name);
    if (verdict?.skip) {
      await decide(ctx, step, revision, accepted, null, { outcome: 'SKIPPED', reason: verdict.reason });
      return null;
    }
    const made = await transform(ctx, step, accepted);
    if (!made.changed) {
      const why = isResumeStep(step)
        ? unchangedReason(made.hazards)
        : `No change: ${step.transformation} finds nothing to change in the code (it already fits ${envWords(envOf(spec, step))}).`;
      await decide(ctx, step, revision, accepted, null, { outcome: 'SKIPPED', reason: why });
      return null;
    }
    const manifest = await manifestFromTree(r, accepted.manifest, made.tree, ctx.ownerId);
    cv = await upsertVersion(r, { jobId, step: step.name, revision, parentId: accepted.id, origin: step.transformation, manifest });
  }
  const candidate: Version = { id: cv.id, manifest: cv.manifest as unknown as ManifestEntry[] };

  // Static checks before any worker sees it.
  let checks = cv.staticChecks as unknown as StaticCheckResult | null;
  if (!checks) {
    checks = await runStaticChecks((await loadTree(r, candidate.manifest)).text, {
      target: targetOfWorkload(envOf(spec, step).workload),
      python: await apiPython(),
    });
    // Deterministic for a given tree, so a second process checking at the same time writes the same.
    await r.prisma.codeVersion.update({ where: { id: cv.id }, data: { staticChecks: checks as unknown as P.InputJsonValue } });
  }
  if (!checks.ok) {
    await decide(ctx, step, revision, accepted, candidate, {
      outcome: 'REJECTED',
      staticChecks: checks,
      reason: `The candidate did not pass its static checks: ${describeFeedback(checks)}`,
    });
    return null;
  }

  // The candidate run.
  const runName = `candidate:${step.name}:${revision}`;
  let run = await r.prisma.task.findFirst({ where: { jobId, name: runName } });
  if (!run) {
    run = await createStageTask(ctx, {
      kind: 'CANDIDATE',
      name: runName,
      codeVersionId: cv.id,
      env: envOf(spec, step),
      environment: {},
      ...candidateRun(step, spec.workload.command),
    });
    return { state: 'waiting', on: runName };
  }
  // A checkpoint-resume candidate's run is its kill-and-resume check (resumeCheck.ts): its report is evidence either way.
  const resumeCheck = isResumeStep(step) && (run.status === 'FAILED' || run.status === 'SUCCEEDED') ? await readResumeCheck(r, run) : null;
  if (run.status === 'FAILED') {
    const attempt = await attemptOf(r, run).catch(() => null);
    const failed =
      isResumeStep(step) && resumeCheck
        ? `${describeResumeCheck(resumeCheck)}. ${WITHOUT_RESUME}`
        : `The candidate failed on the worker with the bounded workload: ${run.statusReason ?? 'no reason recorded'}${await errorTail(r, run.currentAttemptId)}${isResumeStep(step) ? ` ${WITHOUT_RESUME}` : ''}`;
    await decide(ctx, step, revision, accepted, candidate, {
      outcome: 'REJECTED',
      staticChecks: checks,
      run,
      attempt,
      ...(resumeCheck ? { resumeCheck } : {}),
      reason: failed,
    });
    return null;
  }
  if (run.status !== 'SUCCEEDED') return { state: 'waiting', on: runName };
  const attempt = await attemptOf(r, run);
  const report = await compareRuns(ctx, refTask, run, step);
  if (isResumeStep(step) && !resumeCheck?.equal) {
    await decide(ctx, step, revision, accepted, candidate, {
      outcome: 'REJECTED',
      staticChecks: checks,
      run,
      attempt,
      comparison: report,
      ...(resumeCheck ? { resumeCheck } : {}),
      reason: `${describeResumeCheck(resumeCheck)}. ${WITHOUT_RESUME}`,
    });
    return null;
  }
  const nothingCompared = report.summary.files === 0;
  if (nothingCompared) {
    // Neither run wrote anything under the compared paths: there are no numbers to check,
    // only that the candidate ran. Said in the record rather than passed silently.
    report.ok = true;
    report.suspicious.push(
      `nothing to compare: neither run wrote files under ${(spec.compare ?? ['outputs']).join(', ')}; the candidate was checked by its exit code only`,
    );
  }
  if (!report.ok) {
    await decide(ctx, step, revision, accepted, candidate, {
      outcome: 'REJECTED',
      staticChecks: checks,
      run,
      attempt,
      comparison: report,
      ...(resumeCheck ? { resumeCheck } : {}),
      reason: `The candidate's outputs differ from the reference beyond the tolerances: ${describeComparison(report)}${isResumeStep(step) ? ` ${WITHOUT_RESUME}` : ''}`,
    });
    return null;
  }
  if (step.kind !== 'optimization') {
    const compared = nothingCompared
      ? 'ran with exit code 0 (neither it nor the reference wrote outputs to compare, so no numbers were checked)'
      : `its outputs match the reference within the tolerances (${report.summary.files} file(s), ${report.summary.tensors} tensor(s) compared)`;
    const resumed = resumeCheck ? `; ${describeResumeCheck(resumeCheck)}` : '';
    await decide(ctx, step, revision, accepted, candidate, {
      outcome: 'ACCEPTED',
      staticChecks: checks,
      run,
      attempt,
      comparison: report,
      ...(resumeCheck ? { resumeCheck } : {}),
      reason: `The candidate passed its static checks and ${compared} on ${attempt.workerName}${resumed}.`,
    });
    return null;
  }

  // Optimizations must also be faster, timed on the same worker.
  const benchName = `benchmark:${step.name}:${revision}`;
  let bench = await r.prisma.task.findFirst({ where: { jobId, name: benchName } });
  if (!bench) {
    const composed = [
      ...accepted.manifest.map((e) => ({ ...e, path: `accepted/${e.path}` })),
      ...candidate.manifest.map((e) => ({ ...e, path: `candidate/${e.path}` })),
    ];
    const benchCv = await upsertVersion(r, {
      jobId,
      step: `bench:${step.name}`,
      revision,
      parentId: cv.id,
      origin: 'benchmark',
      manifest: composed,
    });
    const command = `python -m chatgpu.bench --a accepted --b candidate --repeats ${BENCH_REPEATS} -- ${spec.workload.command}`;
    bench = await createStageTask(ctx, {
      kind: 'BENCHMARK',
      name: benchName,
      codeVersionId: benchCv.id,
      env: envOf(spec, step),
      command,
      environment: {},
      pinnedWorkerId: attempt.workerId,
      timeoutFactor: 2 * BENCH_REPEATS + 1,
    });
    return { state: 'waiting', on: benchName };
  }
  if (bench.status === 'FAILED') {
    await decide(ctx, step, revision, accepted, candidate, {
      outcome: 'REJECTED',
      staticChecks: checks,
      run,
      attempt,
      comparison: report,
      reason: `The timing runs failed: ${bench.statusReason ?? 'no reason recorded'}${await errorTail(r, bench.currentAttemptId)}`,
    });
    return null;
  }
  if (bench.status !== 'SUCCEEDED') return { state: 'waiting', on: benchName };
  const samples = await benchSamples(r, bench);
  const timing = compareTimings(samples.a, samples.b, { warmup: 1 });
  const faster = timing.decision === 'faster' && !timing.suspicious;
  const speed =
    timing.speedup === null
      ? 'no decision'
      : `median speedup ${timing.speedup.toFixed(3)}×${timing.interval ? ` (99% interval ${timing.interval[0].toFixed(3)}–${timing.interval[1].toFixed(3)})` : ''}`;
  await decide(ctx, step, revision, accepted, candidate, {
    outcome: faster ? 'ACCEPTED' : 'REJECTED',
    staticChecks: checks,
    run,
    attempt,
    comparison: report,
    timings: { samples, statistics: timing },
    reason: faster
      ? `Faster by the timing statistics (${speed}, p = ${timing.pValue?.toPrecision(2)}) and its outputs match the reference within the tolerances.`
      : `Not kept: ${timing.decision === 'insufficient-samples' ? 'too few timing samples' : timing.suspicious ? `suspicious timings (${timing.reasons.join('; ')})` : `not faster (${speed})`}. The last accepted version stays.`,
  });
  return null;
}

interface Version {
  id: string;
  manifest: ManifestEntry[];
}

/**
 * What similar cases say of each optional step (similar.ts): same transformation, same model
 * family, same accelerator, records made before this job's plan, other jobs only.
 */
/**
 * Per plan, once per process: the verdicts read only records made before the plan, so they
 * never change — the stage advances on every event and need not ask the database each time.
 */
const verdictCache = new Map<string, Promise<Map<string, Verdict>>>();
function similarVerdicts(ctx: Ctx): Promise<Map<string, Verdict>> {
  let v = verdictCache.get(ctx.plan.id);
  if (!v) {
    if (verdictCache.size > 1000) verdictCache.clear();
    v = loadVerdicts(ctx);
    verdictCache.set(ctx.plan.id, v);
    v.catch(() => verdictCache.delete(ctx.plan.id));
  }
  return v;
}

async function loadVerdicts(ctx: Ctx): Promise<Map<string, Verdict>> {
  const out = new Map<string, Verdict>();
  for (const step of ctx.spec.steps) {
    if (step.required) continue;
    const cases = await similarPreparations(
      ctx.r,
      ctx.ownerId,
      { transformation: step.transformation, modelFamily: ctx.modelFamily, accelerator: envOf(ctx.spec, step).accelVendor ?? 'none' },
      { before: ctx.planCreatedAt, excludeJobId: ctx.jobId },
    );
    out.set(step.name, verdictOf(cases));
  }
  return out;
}

async function lastAccepted(ctx: Ctx): Promise<Version> {
  const cv = await ctx.r.prisma.codeVersion.findFirst({ where: { jobId: ctx.jobId, status: 'ACCEPTED' }, orderBy: { createdAt: 'desc' } });
  return cv ? { id: cv.id, manifest: cv.manifest as unknown as ManifestEntry[] } : ctx.original;
}

async function transform(ctx: Ctx, step: Step, from: Version): Promise<TransformResult> {
  const tree = (await loadTree(ctx.r, from.manifest)).text;
  const env = envOf(ctx.spec, step);
  const torch = workersTorch(await networkCapacity(ctx.r), env.workload);
  const tctx = { target: targetOfWorkload(env.workload), ...(torch ? { runtime: { torch } } : {}) };
  return transformationByName(step.transformation)(tree, tctx, { python: await apiPython() });
}

interface Decision {
  outcome: 'ACCEPTED' | 'REJECTED' | 'SKIPPED';
  reason: string;
  staticChecks?: StaticCheckResult;
  run?: Task;
  attempt?: AttemptInfo | null;
  comparison?: ComparisonReport;
  timings?: { samples: { a: number[]; b: number[] }; statistics: TimingComparison };
  /** A checkpoint-resume candidate's kill-and-resume report (kept in the record's numerical check). */
  resumeCheck?: unknown;
}

/**
 * Records a decision about (step, revision) and applies it, in one transaction: the record
 * (unique per job, step and revision: a second decider's transaction fails and changes
 * nothing), the candidate's status, and the job engine's acceptCandidate / rejectCandidate.
 */
async function decide(ctx: Ctx, step: Step, revision: number, accepted: Version, candidate: Version | null, d: Decision): Promise<void> {
  const { r, jobId } = ctx;
  const evidenceSha = d.outcome === 'ACCEPTED' && candidate ? await evidenceBundle(ctx, step, revision, accepted, candidate, d) : null;
  const input: RecordInput = {
    jobId,
    step: step.name,
    kind: step.kind,
    revision,
    required: step.required,
    hardware: d.attempt?.hardware ?? {},
    workload: d.run?.workload ?? envOf(ctx.spec, step).workload,
    accelerator: d.attempt?.accelerator ?? envOf(ctx.spec, step).accelVendor ?? 'none',
    modelFamily: ctx.modelFamily,
    taskId: d.run?.id ?? null,
    attemptId: d.attempt?.id ?? null,
    workerId: d.attempt?.workerId ?? null,
    original: accepted,
    candidate,
    transformation: revision > 0 ? 'agent patch' : step.transformation,
    staticChecks: d.staticChecks ?? null,
    numericalCheck: d.resumeCheck ? { ...(d.comparison ?? {}), resumeCheck: d.resumeCheck } : (d.comparison ?? null),
    timings: d.timings ?? null,
    outcome: d.outcome,
    reason: d.reason,
    evidenceSha,
  };
  try {
    await commitTransition(r, jobId, async (tx, now) => {
      const rec = await insertRecord(tx, r, input);
      if (candidate)
        await tx.codeVersion.update({ where: { id: candidate.id }, data: { status: d.outcome === 'ACCEPTED' ? 'ACCEPTED' : 'REJECTED' } });
      const t = await applyTransition(tx, now, jobId, d.outcome === 'ACCEPTED' ? 'acceptCandidate' : 'rejectCandidate', {
        reason: `${step.name}${revision ? ` (revision ${revision})` : ''}: ${d.outcome.toLowerCase()}. ${d.reason}`,
        detail: { step: step.name, revision, outcome: d.outcome, recordId: rec.id },
      });
      return { eventIds: [...rec.eventIds, ...t.eventIds] };
    });
  } catch (err) {
    if (isUniqueViolation(err)) return; // another process decided this step first
    throw err;
  }
}

async function freezeAndRun(ctx: Ctx, accepted: Version): Promise<void> {
  const { r, jobId, spec, plan } = ctx;
  // A kill-and-resume check ran the workload about twice over (resumeCheck.ts): not a timing of it.
  // Without another candidate, the reference on the same class is.
  const lastRun =
    (await r.prisma.task.findFirst({
      where: { jobId, role: 'CANDIDATE', status: 'SUCCEEDED' },
      orderBy: { finishedAt: 'desc' },
      include: { currentAttempt: { select: { workerId: true } } },
    })) ??
    (sameEnv(spec.reference, spec.target) && spec.steps.some(isResumeStep)
      ? await r.prisma.task.findFirst({
          where: { jobId, kind: 'REFERENCE', status: 'SUCCEEDED' },
          include: { currentAttempt: { select: { workerId: true } } },
        })
      : null);
  // The last candidate ran the bounded workload on the target class: it is the full run's smoke
  // run (docs/architecture.md §4, "Smoke run"), so its timing gives the estimate.
  const estimate = lastRun ? await measureSmokeRun(r, lastRun, spec.workload.scale, 'preparation run') : null;
  const records = await r.prisma.preparationRecord.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
  const summary = records
    .filter((x) => x.step !== REFERENCE_STEP)
    .map((x) => `${x.step} ${x.outcome.toLowerCase()}`)
    .join(', ');
  const pinned = spec.pinRun && lastRun?.currentAttempt ? lastRun.currentAttempt.workerId : null;
  await commitTransition(r, jobId, async (tx, now) => {
    if ((await lockJob(tx, jobId)) === null || (await tx.task.count({ where: { jobId, kind: 'RUN' } })) > 0) return { eventIds: [] };
    const frozen = await applyTransition(tx, now, jobId, 'freeze', {
      reason: `Froze the accepted code (${summary || 'no change'}).`,
      data: { frozenCodeId: accepted.id },
      detail: { codeVersionId: accepted.id },
    });
    const started = await applyTransition(tx, now, jobId, 'startRun', {
      reason: pinned ? 'Running the frozen code on the worker that validated it.' : 'Running the frozen code.',
    });
    const requirements = planRequirements(plan);
    const estimated = estimate
      ? [await recordJobEvent(tx, jobId, 'smoke.result', { ok: true, estimate: estimate as unknown as P.InputJsonValue })]
      : [];
    if (estimate) await tx.job.update({ where: { id: jobId }, data: { estimate: estimate as unknown as P.InputJsonValue } });
    const { eventId } = await insertTask(tx, now, {
      jobId,
      kind: 'RUN',
      role: 'RUN',
      name: 'run',
      codeVersionId: accepted.id,
      command: plan.command,
      environment: Object.fromEntries((plan.environment ?? []).map((e) => [e.name, e.value])),
      requirements: {
        ...requirements,
        workload: spec.target.workload,
        ...(spec.target.accelVendor ? { accelVendor: spec.target.accelVendor } : {}),
        ...estimateRequirement(estimate?.highSec, requirements.timeoutSec),
      },
      pinnedWorkerId: pinned,
      maxAttempts: 3,
    });
    return { eventIds: [...frozen.eventIds, ...started.eventIds, ...estimated, eventId] };
  });
  await r.events.emit({ type: 'tasks.available' });
}

async function failJob(ctx: Ctx, reason: string): Promise<StageState> {
  const { workers } = await commitTransition(ctx.r, ctx.jobId, async (tx, now) => {
    const t = await applyTransition(tx, now, ctx.jobId, 'fail', { reason, onlyFrom: ['PREPARING'] });
    const workers = await cancelOutstandingWork(tx, ctx.r, now, ctx.jobId, 'The job failed in preparation.');
    return { eventIds: t.eventIds, workers };
  });
  for (const workerId of workers) await ctx.r.events.emit({ type: 'worker.orders', workerId });
  return { state: 'failed', reason };
}

async function explainExhausted(ctx: Ctx, step: Step, revision: number): Promise<string> {
  const records = await ctx.r.prisma.preparationRecord.findMany({
    where: { jobId: ctx.jobId, step: step.name },
    orderBy: { revision: 'asc' },
  });
  const tried = records
    .map((x) => `${x.revision === 0 ? x.transformation : `revision ${x.revision} (agent patch)`}: ${x.reason}`)
    .join(' | ');
  return `The required step ${step.name} (${step.transformation}) could not pass after ${revision} revision${revision === 1 ? '' : 's'} (budget ${ctx.spec.revisionBudget ?? DEFAULT_REVISION_BUDGET}). What was tried: ${tried}. The acceptance criteria were not changed.`;
}

/** The structured feedback a revision works from: compiler messages, the comparison, the failure. */
export function feedbackOf(record: { reason: string; staticChecks: unknown; numericalCheck: unknown }): string {
  const parts = [record.reason];
  const checks = record.staticChecks as StaticCheckResult | null;
  if (checks && !checks.ok)
    parts.push(
      `Compiler/parser feedback:\n${checks.feedback.map((f) => `${f.file}:${f.line}:${f.col}: ${f.severity}: ${f.message} [${f.tool}]`).join('\n')}`,
    );
  const report = record.numericalCheck as ComparisonReport | null;
  if (report && !report.ok) parts.push(`Comparison with the reference:\n${describeComparison(report, 20)}`);
  return parts.join('\n\n');
}

function describeFeedback(checks: StaticCheckResult): string {
  const first = checks.feedback.filter((f) => f.severity === 'error').slice(0, 5);
  return first.length ? first.map((f) => `${f.file}:${f.line}: ${f.message}`).join('; ') : `${checks.feedback.length} problem(s)`;
}

function describeComparison(report: ComparisonReport, max = 5): string {
  const lines: string[] = [];
  for (const f of report.files) {
    if (f.ok) continue;
    const bad = [...(f.tensors ?? []), ...(f.metrics ?? [])].filter((t) => !t.ok);
    if (bad.length)
      for (const t of bad.slice(0, max))
        lines.push(
          `${f.path}: ${t.name}: ${t.problem ?? 'outside tolerance'}${'max_abs_error' in t && t.max_abs_error !== undefined ? ` (max abs error ${String(t.max_abs_error)})` : ''}`,
        );
    else lines.push(`${f.path}: ${f.problem ?? f.kind}`);
  }
  for (const s of report.suspicious) lines.push(`suspicious: ${s}`);
  return lines.slice(0, max).join('; ') || 'the comparison failed';
}

// ───────────────────────────── helpers ─────────────────────────────

interface TaskSpec {
  kind: 'REFERENCE' | 'CANDIDATE' | 'BENCHMARK';
  /** Default: the kind's own role; a kill-and-resume check is a RESUME_CHECK. */
  role?: 'CANDIDATE' | 'RESUME_CHECK';
  name: string;
  codeVersionId: string;
  env: PreparationSpec['target'];
  command: string;
  environment: Record<string, string>;
  pinnedWorkerId?: string | null;
  timeoutFactor?: number;
  /** Files outside outputs/ the task's result must carry (a check's report). */
  outputs?: string[];
  /** A record written with the task (the reference's FALLBACK decision is made when it is queued). */
  record?: RecordInput | null;
}

/** Creates a preparation task once (under the job's row lock); null when the job is no longer PREPARING. */
async function createStageTask(ctx: Ctx, t: TaskSpec): Promise<Task | null> {
  const { r, jobId, spec } = ctx;
  const created = await commitTransition(r, jobId, async (tx, now) => {
    if ((await lockJob(tx, jobId)) !== 'PREPARING') return { eventIds: [], task: null };
    const existing = await tx.task.findFirst({ where: { jobId, name: t.name } });
    if (existing) return { eventIds: [], task: existing };
    const compareOutside = (spec.compare ?? ['outputs']).filter((o) => !o.startsWith('outputs/') && o !== 'outputs');
    const requirements: Requirements = {
      workload: t.env.workload,
      ...(t.env.accelVendor ? { accelVendor: t.env.accelVendor } : {}),
      timeoutSec: Math.min((spec.workload.timeoutSec ?? 900) * (t.timeoutFactor ?? 1), 7 * 86400),
      outputs: [...compareOutside, ...(t.outputs ?? [])],
    };
    const { task, eventId } = await insertTask(tx, now, {
      jobId,
      kind: t.kind,
      ...(t.role ? { role: t.role } : {}),
      name: t.name,
      codeVersionId: t.codeVersionId,
      command: t.command,
      environment: t.environment,
      requirements,
      pinnedWorkerId: t.pinnedWorkerId ?? null,
      priority: 1,
      maxAttempts: 3,
    });
    const rec = t.record ? await insertRecord(tx, r, { ...t.record, taskId: task.id }) : null;
    return { eventIds: [eventId, ...(rec?.eventIds ?? [])], task };
  });
  if (created.task) await r.events.emit({ type: 'tasks.available' });
  return created.task;
}

async function upsertVersion(
  r: Resources,
  v: { jobId: string; step: string; revision: number; parentId: string; origin: string; manifest: ManifestEntry[] },
) {
  const existing = await r.prisma.codeVersion.findUnique({
    where: { jobId_step_revision: { jobId: v.jobId, step: v.step, revision: v.revision } },
  });
  if (existing) return existing;
  try {
    return await r.prisma.codeVersion.create({
      data: {
        jobId: v.jobId,
        step: v.step,
        revision: v.revision,
        parentId: v.parentId,
        status: 'CANDIDATE',
        origin: v.origin,
        manifest: v.manifest as unknown as P.InputJsonValue,
        fileCount: v.manifest.length,
        totalBytes: BigInt(v.manifest.reduce((s, e) => s + e.size, 0)),
      },
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return r.prisma.codeVersion.findUniqueOrThrow({
      where: { jobId_step_revision: { jobId: v.jobId, step: v.step, revision: v.revision } },
    });
  }
}

export interface AttemptInfo {
  id: string;
  workerId: string;
  workerName: string;
  accelerator: string;
  hardware: Record<string, unknown>;
}

/** The attempt that produced a task's result, with the worker's hardware and runtime. */
async function attemptOf(r: Resources, task: Task): Promise<AttemptInfo> {
  const a = await r.prisma.attempt.findUniqueOrThrow({ where: { id: task.currentAttemptId ?? '' }, include: { worker: true } });
  const caps = a.worker.capabilities as {
    cpu?: unknown;
    memoryMiB?: number;
    accelerators?: unknown[];
    pythons?: { path: string; version: string; torch?: unknown; numpy?: unknown }[];
    python?: string;
    toolchains?: unknown;
    os?: string;
    arch?: string;
  };
  const python = caps.pythons?.find((p) => p.path === caps.python) ?? caps.pythons?.[0] ?? null;
  return {
    id: a.id,
    workerId: a.workerId,
    workerName: a.worker.name,
    accelerator: a.worker.accelVendor,
    hardware: {
      worker: a.worker.name,
      os: caps.os ?? null,
      arch: caps.arch ?? null,
      cpu: caps.cpu ?? null,
      memoryMiB: caps.memoryMiB ?? null,
      accelerators: caps.accelerators ?? [],
      python,
      toolchains: caps.toolchains ?? null,
      simulatedAccelerator: a.simulatedAccelerator,
    },
  };
}

function compareRuns(ctx: Ctx, reference: Task, candidate: Task, step: Step): Promise<ComparisonReport> {
  const outputs = (t: Task) => (t.result as { outputs?: ManifestEntry[] } | null)?.outputs ?? [];
  const criteria = toleranceCriteria(step.tolerance);
  return compareTaskOutputs(ctx.r, outputs(reference), outputs(candidate), {
    compare: ctx.spec.compare ?? ['outputs'],
    ...(criteria ? { criteria } : {}),
  });
}

async function benchSamples(r: Resources, bench: Task): Promise<{ a: number[]; b: number[] }> {
  const out = ((bench.result as { outputs?: ManifestEntry[] } | null)?.outputs ?? []).find((o) => o.path === 'outputs/bench.json');
  if (!out) return { a: [], b: [] };
  const parsed = JSON.parse((await readBlobBuffer(r.blobs, out.sha256)).toString('utf8')) as { a?: number[]; b?: number[] };
  return { a: (parsed.a ?? []).filter(Number.isFinite), b: (parsed.b ?? []).filter(Number.isFinite) };
}

async function evidenceBundle(ctx: Ctx, step: Step, revision: number, accepted: Version, candidate: Version, d: Decision): Promise<string> {
  const { r } = ctx;
  const before = (await loadTree(r, accepted.manifest)).text;
  const after = (await loadTree(r, candidate.manifest)).text;
  const reference = await r.prisma.task.findFirst({ where: { jobId: ctx.jobId, kind: 'REFERENCE' } });
  const refAttempt = reference ? await attemptOf(r, reference).catch(() => null) : null;
  const files: Record<string, string> = {
    'README.txt': [
      `Evidence for ${step.name}${revision ? ` revision ${revision}` : ''} (${step.kind}, ${revision ? 'agent patch' : step.transformation}) of job ${ctx.jobId}.`,
      `Outcome: ${d.outcome}. ${d.reason}`,
      '',
      'diff.patch            the change, from the last accepted version to the candidate',
      'reference.json        the reference run: command, worker hardware, outputs, metrics',
      'candidate.json        the candidate run: worker hardware, outputs, metrics, static checks',
      'comparison.json       the numerical comparison of the outputs (per tensor: shape, dtype, max abs/rel error)',
      ...(d.timings ? ['timings.json          timing samples (seconds; alternating runs) and their statistics'] : []),
      ...(d.resumeCheck
        ? ['resume-check.json     the kill-and-resume check: the run SIGKILLed half-way and resumed, compared with an uninterrupted run']
        : []),
      'hardware.json         the worker that ran the candidate',
    ].join('\n'),
    'diff.patch': unifiedDiff(before, after),
    'reference.json': JSON.stringify(
      {
        command: ctx.spec.workload.command,
        taskId: reference?.id ?? null,
        hardware: refAttempt?.hardware ?? null,
        result: reference?.result ?? null,
      },
      null,
      2,
    ),
    'candidate.json': JSON.stringify(
      {
        codeVersionId: candidate.id,
        changed: changedPaths(accepted.manifest, candidate.manifest),
        taskId: d.run?.id ?? null,
        result: d.run?.result ?? null,
        staticChecks: d.staticChecks ?? null,
      },
      null,
      2,
    ),
    'comparison.json': JSON.stringify(d.comparison ?? null, null, 2),
    'hardware.json': JSON.stringify(d.attempt?.hardware ?? null, null, 2),
  };
  if (d.timings) files['timings.json'] = JSON.stringify(d.timings, null, 2);
  if (d.resumeCheck) files['resume-check.json'] = JSON.stringify(d.resumeCheck, null, 2);
  return putEvidence(r, files, ctx.ownerId);
}

async function errorTail(r: Resources, attemptId: string | null): Promise<string> {
  if (!attemptId) return '';
  const tail = await r.prisma.logChunk.findMany({ where: { attemptId, stream: 'stderr' }, orderBy: { seq: 'desc' }, take: 3 });
  const text = tail
    .reverse()
    .map((l) => l.text)
    .join(' | ');
  return text ? ` Last error output: ${text.slice(0, 500)}` : '';
}

/**
 * Where a step's candidates are transformed for, run and timed: the target (default), or the
 * reference environment for a step marked `on: 'reference'` (an optimization tried on the source
 * GPU against the original before the code is migrated).
 */
function envOf(spec: PreparationSpec, step: Step): PreparationSpec['target'] {
  return step.on === 'reference' ? spec.reference : spec.target;
}

function sameEnv(a: PreparationSpec['target'], b: PreparationSpec['target']): boolean {
  return a.workload === b.workload && (a.accelVendor ?? null) === (b.accelVendor ?? null);
}

function envWords(e: PreparationSpec['target']): string {
  return e.accelVendor === 'nvidia' ? 'NVIDIA' : e.accelVendor === 'amd' ? 'AMD' : e.accelVendor === 'apple' ? 'Apple' : 'CPU';
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string; meta?: unknown };
  return e?.code === 'P2002' || /Unique constraint failed|duplicate key value/.test(e?.message ?? '');
}

export { REFERENCE_STEP };

/**
 * The revision the stage waits for, if any: the step, the number, the rejected candidate and the
 * feedback. Read-only (the preparer's tools call it, refusals included): a job the stage has
 * work to do on is not pending until the stage did it.
 */
export async function pendingRevision(
  r: Resources,
  jobId: string,
): Promise<{ step: Step; revision: number; candidate: Version; feedback: string; budget: number; protectedFiles: string[] } | null> {
  const ctx = await loadContext(r, jobId);
  if (!ctx) return null;
  const state = await advance(ctx, { readOnly: true });
  if (state?.state !== 'revision') return null;
  const step = ctx.spec.steps.find((s) => s.name === state.step)!;
  const rejected = await r.prisma.codeVersion.findUnique({
    where: { jobId_step_revision: { jobId, step: step.name, revision: state.revision - 1 } },
  });
  const candidate = rejected ? { id: rejected.id, manifest: rejected.manifest as unknown as ManifestEntry[] } : await lastAccepted(ctx);
  return {
    step,
    revision: state.revision,
    candidate,
    feedback: state.feedback,
    budget: ctx.spec.revisionBudget ?? DEFAULT_REVISION_BUDGET,
    protectedFiles: protectedFiles(ctx),
  };
}

/**
 * Files no revision may touch: the ones the plan freezes and the evaluation script (the
 * criteria themselves live in the database, fixed with the plan).
 */
function protectedFiles(ctx: Ctx): string[] {
  const evalScript = ctx.criteria.evaluate?.command.split(/\s+/).find((w) => /\.py$/.test(w));
  // As paths of the tree (./eval.py is eval.py), so a patch's paths compare with them.
  const canonical = (p: string) => {
    try {
      return normalizeUploadPath(p);
    } catch {
      return p;
    }
  };
  return [...new Set([...(ctx.spec.frozenFiles ?? []), ...(evalScript ? [evalScript] : [])].map(canonical))];
}

/**
 * A revision proposed by the preparation agent becomes the candidate for (step, revision),
 * inside the caller's (Action) transaction. The stage then checks and runs it like any
 * other candidate. Refused when it touches a protected file.
 */
export async function proposeRevision(
  tx: Db,
  input: {
    jobId: string;
    step: string;
    revision: number;
    parentId: string;
    manifest: ManifestEntry[];
    changed: string[];
    protectedFiles: string[];
  },
) {
  const touched = input.changed.filter((p) => input.protectedFiles.includes(p));
  if (touched.length) throw new ProtectedFileError(touched);
  return tx.codeVersion.create({
    data: {
      jobId: input.jobId,
      step: input.step,
      revision: input.revision,
      parentId: input.parentId,
      status: 'CANDIDATE',
      origin: 'agent patch',
      manifest: input.manifest as unknown as P.InputJsonValue,
      fileCount: input.manifest.length,
      totalBytes: BigInt(input.manifest.reduce((s, e) => s + e.size, 0)),
    },
  });
}

export class ProtectedFileError extends Error {
  constructor(readonly files: string[]) {
    super(`The patch touches ${files.join(', ')}, which no revision may change (the evaluation script or a file the plan freezes).`);
  }
}
