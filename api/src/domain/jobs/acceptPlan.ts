import { isDeepStrictEqual } from 'node:util';
import type { Prisma as P } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import type { ManifestEntry } from '../blobs/paths.js';
import { ValidationError } from '../errors.js';
import { insertTask, type CreateTaskInput, type Requirements } from './createTask.js';
import { recordJobEvent } from './jobEvents.js';
import { applyTransition } from './jobLifecycle.js';
import { acceptServicePlan } from '../services/acceptServicePlan.js';
import { runTask } from './runTask.js';
import { adaptationCheckTasks } from './shardRun.js';
import { criteriaOf, type PipelineStep, type PlanInput, type SmokeRun } from './planSchema.js';
import { insertRecord } from '../preparation/records.js';
import type { SettingsVersion } from '../preparation/settingsVersion.js';

// The main run's task spec lives in runTask.ts (shardRun.ts builds it too, without importing this module); re-exported for the plan's callers.
export { runTask };

export interface AcceptPlanInput {
  jobId: string;
  /** builtin | openai:<model> | scripted */
  author: string;
  plan: PlanInput;
  /** The code the plan's `settings` make (domain/preparation/settingsVersion.ts), frozen instead of the upload. */
  settings?: SettingsVersion | null;
  /** No worker was online when it was planned: its hardware is a guess, re-planned once workers come (replanForNewWorkers.ts). */
  withoutWorkers?: boolean;
}

export interface AcceptedPlan {
  planId: string;
  version: number;
  /** The RUN task, when the code runs as it is. */
  taskId: string | null;
  /** The plan has preparation steps: the job is PREPARING. */
  preparing: boolean;
  eventIds: string[];
}

/** What the plan's tasks need from a worker (matched at claim time). */
export function planRequirements(plan: PlanInput): Requirements {
  return {
    workload: plan.hardware.workload,
    ...(plan.hardware.accelVendor ? { accelVendor: plan.hardware.accelVendor } : {}),
    ...(plan.hardware.minMemoryMiB ? { minMemoryMiB: plan.hardware.minMemoryMiB } : {}),
    ...(plan.hardware.minAccelMemoryMiB ? { minAccelMemoryMiB: plan.hardware.minAccelMemoryMiB } : {}),
    ...(plan.hardware.minTorch ? { minTorch: plan.hardware.minTorch } : {}),
    ...(plan.hardware.devices && plan.hardware.devices > 1 ? { devices: plan.hardware.devices } : {}),
    ...(plan.timeoutSec ? { timeoutSec: plan.timeoutSec } : {}),
    // outputs/ is always collected; the rest are the plan's extra paths.
    outputs: plan.outputs.filter((o) => !o.startsWith('outputs/') && o !== 'outputs'),
    ...(plan.install ? { setup: { pip: plan.install.pip } } : {}),
    ...(plan.checkpoint ? { checkpoint: { path: plan.checkpoint.path } } : {}),
    ...(plan.checkable ? { checkable: plan.checkable } : {}),
  };
}

/**
 * Invariant 6: the first accepted plan fixes the job's criteria; a plan after a replan keeps
 * them. Why `plan` may not be accepted for a job with these `fixed` criteria, or null.
 */
export function fixedCriteriaProblem(fixed: unknown, plan: PlanInput): string | null {
  if (fixed === null || fixed === undefined || isDeepStrictEqual(fixed, JSON.parse(JSON.stringify(criteriaOf(plan))))) return null;
  return `The acceptance criteria were fixed when the first plan was accepted and stay as they are: ${JSON.stringify(fixed)}. Submit the plan with these criteria.`;
}

/**
 * Stores the plan as the job's current plan and fixes its acceptance criteria (invariant 6),
 * inside the caller's transaction (the planner's Action transaction). Then either
 *   - the plan names preparation steps → `startPreparation` (PLANNING → PREPARING); the
 *     preparation stage (domain/preparation/stage.ts) takes it from there, or
 *   - the plan hosts a service → acceptServicePlan (its setup steps, `before`, first);
 *   - the code runs as it was uploaded → the ORIGINAL version is frozen and one RUN task
 *     queued (`acceptPlan`, PLANNING → RUNNING), saying that no preparation was needed —
 *     or, when the plan has a pipeline (`before`), the task of its first step; each finished
 *     step queues the next, and the last one the main run (advanceJob.ts). With a smoke run
 *     (`smoke`), its PROBE task comes right before the main run; the main run is queued only
 *     when it passed, with the estimate it gave (advanceJob.ts).
 * The caller publishes `eventIds` after commit, then emits `preparation.step` (preparing)
 * or wakes the workers.
 */
export async function acceptPlan(tx: Db, now: Date, input: AcceptPlanInput): Promise<AcceptedPlan> {
  const { jobId, plan } = input;
  const upload = await tx.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
  // Settings no flag reaches: the upload with exactly those literals changed, frozen in its place.
  const settings = input.settings ? await freezeSettings(tx, now, jobId, upload, input.settings) : null;
  const original = settings?.version ?? upload;
  const version = (await tx.plan.count({ where: { jobId } })) + 1;
  const criteria = criteriaOf(plan);
  const fixed = fixedCriteriaProblem(
    (await tx.job.findUniqueOrThrow({ where: { id: jobId }, select: { acceptanceCriteria: true } })).acceptanceCriteria,
    plan,
  );
  if (fixed) throw new ValidationError(fixed, [{ path: ['acceptance'], message: 'differs from the fixed acceptance criteria' }]);
  const requirements = planRequirements(plan);
  const environment = Object.fromEntries((plan.environment ?? []).map((e) => [e.name, e.value]));
  const row = await tx.plan.create({
    data: {
      jobId,
      version,
      author: input.author,
      summary: plan.summary,
      steps: plan.steps,
      command: plan.command,
      environment,
      requirements: requirements as P.InputJsonValue,
      outputs: plan.outputs,
      acceptanceCriteria: criteria as unknown as P.InputJsonValue,
      asks: plan.asks as unknown as P.InputJsonValue,
      ...(plan.settings?.length ? { settings: plan.settings as unknown as P.InputJsonValue } : {}),
      ...(plan.preparation ? { preparationWorkload: plan.preparation as unknown as P.InputJsonValue } : {}),
      ...(plan.before?.length ? { pipeline: plan.before as unknown as P.InputJsonValue } : {}),
      ...(plan.shards ? { shards: plan.shards as unknown as P.InputJsonValue } : {}),
      ...(plan.smoke && !plan.preparation ? { smokeRun: plan.smoke as unknown as P.InputJsonValue } : {}),
    },
  });
  const planEvent = await recordJobEvent(tx, jobId, 'plan.created', {
    planId: row.id,
    version,
    command: plan.command,
    hardware: plan.hardware as P.InputJsonValue,
    outputs: plan.outputs,
    acceptance: criteria as unknown as P.InputJsonValue,
    ...(input.withoutWorkers ? { withoutWorkers: true } : {}),
  });
  const settingsEvents = settings?.eventIds ?? [];
  if (plan.preparation) {
    const steps = plan.preparation.steps.map((s) => `${s.name} (${s.transformation}, ${s.required ? 'required' : 'optional'})`).join(', ');
    const preparing = await applyTransition(tx, now, jobId, 'startPreparation', {
      reason: `Preparing the code before the full run: a reference run, then ${steps}.`,
      data: { currentPlanId: row.id, acceptanceCriteria: criteria as unknown as P.InputJsonValue },
    });
    return { planId: row.id, version, taskId: null, preparing: true, eventIds: [planEvent, ...settingsEvents, ...preparing.eventIds] };
  }
  if (plan.service) {
    // Setup steps (`before`) run first as RUN tasks; the last one's success starts the service (advanceJob.ts).
    const setup = plan.before?.[0] ? pipelineTask(jobId, original.id, plan.before[0], environment, requirements, []) : null;
    return {
      planId: row.id,
      version,
      preparing: false,
      ...(await acceptServicePlan(
        tx,
        now,
        { jobId, planId: row.id, codeVersionId: original.id, plan, service: plan.service, environment, requirements, criteria, setup },
        [planEvent, ...settingsEvents],
      )),
    };
  }
  if (plan.shards) {
    const n = plan.shards.shards.length;
    const moved = await applyTransition(tx, now, jobId, 'acceptPlan', {
      reason: `No code changes needed; the work is split into ${n} shards (${plan.shards.total} ${plan.shards.unit}s): first the adaptation check — \`${plan.shards.check.original}\` against the same workload in ${n} shards, merged — then the shards in parallel and their merge.`,
      data: { currentPlanId: row.id, acceptanceCriteria: criteria as unknown as P.InputJsonValue, frozenCodeId: original.id },
    });
    const eventIds = [planEvent, ...settingsEvents, ...moved.eventIds];
    for (const t of adaptationCheckTasks(jobId, original.id, plan.shards, environment, requirements))
      eventIds.push((await insertTask(tx, now, t)).eventId);
    return { planId: row.id, version, taskId: null, preparing: false, eventIds };
  }
  const first = plan.before?.[0];
  const smoke = plan.smoke ? ', a smoke run of the bounded workload on the same hardware' : '';
  const moved = await applyTransition(tx, now, jobId, 'acceptPlan', {
    reason: `${settings ? `The settings you named were set in the code (${settings.names}; the diff is in the evidence), and it` : 'No preparation needed: the code'} fits ${describeHardware(plan)} as it is; ${first ? `running ${plan.before!.map((b) => b.name).join(', then ')}${smoke}, then the main run` : plan.smoke ? `testing it first with a smoke run (\`${plan.smoke.command}\`), then the full run` : 'running it'}.`,
    data: { currentPlanId: row.id, acceptanceCriteria: criteria as unknown as P.InputJsonValue, frozenCodeId: original.id },
  });
  const { task, eventId } = await insertTask(
    tx,
    now,
    first
      ? pipelineTask(jobId, original.id, first, environment, requirements, [])
      : plan.smoke
        ? smokeTask(jobId, original.id, plan.smoke, environment, requirements, [])
        : runTask(jobId, original.id, plan.command, environment, requirements, []),
  );
  return {
    planId: row.id,
    version,
    taskId: task.id,
    preparing: false,
    eventIds: [planEvent, ...settingsEvents, ...moved.eventIds, eventId],
  };
}

/** A pipeline step's task name ("step:prepare-data"; its role is STEP); the main run is "run". */
export const stepTaskName = (step: { name: string }) => `step:${step.name}`;

/**
 * The task of one pipeline step (docs/architecture.md §4, "Pipelines"): the plan's hardware,
 * its own command and time limit, what it produces collected as its outputs, and the
 * artifacts of the steps before it as inputs at their paths.
 */
export function pipelineTask(
  jobId: string,
  codeVersionId: string,
  step: PipelineStep,
  environment: Record<string, unknown>,
  requirements: Requirements,
  inputs: ManifestEntry[],
): CreateTaskInput {
  return {
    jobId,
    kind: 'RUN',
    role: 'STEP',
    name: stepTaskName(step),
    codeVersionId,
    command: step.command,
    environment: { ...environment, ...(inputs.length ? { inputs } : {}) },
    requirements: {
      ...requirements,
      outputs: step.produces,
      ...(step.timeoutSec ? { timeoutSec: step.timeoutSec } : {}),
      // A data download: the network for this step only (the plan's requirements, and so the run's, have none).
      ...(step.network === 'download' ? { network: true, download: { urls: step.urls ?? [], files: downloadFiles(step.command) } } : {}),
    },
    maxAttempts: 3,
  };
}

/** The Python files a step's command runs (`cd data && python prepare.py` → data/prepare.py): what its download cache key hashes. */
export function downloadFiles(command: string): string[] {
  const dir = /^cd\s+([\w./-]+)\s*&&/.exec(command)?.[1]?.replace(/\/$/, '');
  return [...command.matchAll(/\bpython3?\s+([\w./-]+\.py)\b/g)].map((m) => (dir ? `${dir}/${m[1]}` : m[1]!)).slice(0, 20);
}

/**
 * The smoke run's task (docs/architecture.md §4, "Smoke run"): the plan's bounded workload on
 * the plan's hardware, with the artifacts of the pipeline steps before it; its outputs are
 * collected (their sizes are part of what it measures) but never handed on.
 */
export function smokeTask(
  jobId: string,
  codeVersionId: string,
  smoke: SmokeRun,
  environment: Record<string, unknown>,
  requirements: Requirements,
  inputs: ManifestEntry[],
): CreateTaskInput {
  return {
    jobId,
    kind: 'PROBE',
    role: 'SMOKE',
    name: 'smoke',
    codeVersionId,
    command: smoke.command,
    environment: { ...environment, ...(inputs.length ? { inputs } : {}) },
    requirements: { ...requirements, timeoutSec: smoke.timeoutSec ?? Math.min(requirements.timeoutSec ?? 3600, 3600) },
    maxAttempts: 3,
  };
}

function describeHardware(plan: PlanInput): string {
  const v = plan.hardware.accelVendor;
  return `${v === 'nvidia' ? 'an NVIDIA' : v === 'amd' ? 'an AMD' : v === 'apple' ? 'an Apple' : 'a'} ${plan.hardware.workload} worker`;
}

/**
 * The set-settings step's code version (ACCEPTED, child of the upload) and its PreparationRecord
 * with the diff as evidence; a replan that changes other settings adds a revision.
 */
async function freezeSettings(tx: Db, now: Date, jobId: string, upload: { id: string; manifest: unknown }, s: SettingsVersion) {
  const revision = await tx.codeVersion.count({ where: { jobId, step: SETTINGS_STEP } });
  const version = await tx.codeVersion.create({
    data: {
      jobId,
      parentId: upload.id,
      status: 'ACCEPTED',
      origin: SETTINGS_STEP,
      manifest: s.manifest as unknown as P.InputJsonValue,
      fileCount: s.manifest.length,
      totalBytes: BigInt(s.manifest.reduce((n, m) => n + m.size, 0)),
      step: SETTINGS_STEP,
      revision,
    },
  });
  const names = s.edits.map((e) => `${e.name} = ${e.to} in ${e.file}`).join(', ');
  const record = await insertRecord(
    tx,
    { now: () => now },
    {
      jobId,
      step: SETTINGS_STEP,
      kind: 'settings',
      revision,
      required: true,
      hardware: {},
      workload: null,
      accelerator: null,
      taskId: null,
      attemptId: null,
      workerId: null,
      original: { id: upload.id, manifest: upload.manifest as ManifestEntry[] },
      candidate: { id: version.id, manifest: s.manifest },
      transformation: SETTINGS_STEP,
      staticChecks: {
        ok: true,
        changed: s.changed,
        check: 'each file parses; its syntax tree (or data) equals the original except at the named literals',
      },
      outcome: 'ACCEPTED',
      reason: `Set ${names}: exactly these literals changed (checked statically); no reference run, since you asked for the new values.`,
      evidenceSha: s.evidenceSha,
    },
  );
  return { version, names, eventIds: record.eventIds };
}

/** The step name, code version origin and transformation of a settings rewrite. */
export const SETTINGS_STEP = 'set-settings';
