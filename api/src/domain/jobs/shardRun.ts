/**
 * A sharded job on the job engine (issue 14; the pure parts are shards.ts):
 *
 *   plan accepted        → the adaptation check: PROBE tasks `adapt:original` (the unsharded
 *                          bounded workload) and `adapt:shard-i` (the same workload split), in
 *                          parallel; no smoke run (the check plays its role)
 *   all check tasks done → their result files merged and compared (checkMerged); a
 *                          PreparationRecord (kind adaptation) either way; passed → one SHARD
 *                          task per shard (`shard-i`), each with its own attempts, leases and
 *                          retries; failed → rejected with its report: the job runs unsharded
 *                          (one RUN task), or fails when the plan made sharding required
 *   a SHARD failed       → the job fails (its retries are spent), naming the shard
 *   all SHARDs succeeded → (checkable shards: once each one's trust check settled, with the
 *                          verified results, trust/replication.ts) the MERGE, once: a pure function over the shards' outputs in this
 *                          process (shardMerge.ts: fields, list, rows, files), the merged files
 *                          stored as blobs — or, for the user's merge script, a MERGE task
 *                          (`merge`) on a worker, sandboxed like any task, whose inputs are the
 *                          shards' outputs under shards/shard-i/; the job's outputs are the merged
 *                          files and each shard's files under shards/shard-i/; then the acceptance
 *                          checks like any run
 * With a merge script the check has its own MERGE task too (`adapt:merge`, over the check's
 * shards), queued once they are all done; what it writes is what the check compares.
 * Exactly once across callers: decisions are taken under the job's row lock (a `shard-1` or
 * `run` task already there means done) or by the conditional startValidation transition,
 * in whose transaction the `shards.merged` event is written.
 */
import type { Prisma as P } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import type { ManifestEntry } from '../blobs/paths.js';
import { putBuffer, readBlobBuffer } from '../blobs/blobStore.js';
import { registerBlob } from '../blobs/blobAccess.js';
import type { Resources } from '../resources.js';
import { insertRecord } from '../preparation/records.js';
import { lockJob } from '../../db/sql/lockJob.js';
import { insertTask, type CreateTaskInput, type Requirements } from './createTask.js';
import { recordJobEvent } from './jobEvents.js';
import { applyTransition, commitTransition, transitionIfAllowed } from './jobLifecycle.js';
import { runTask } from './runTask.js';
import type { ShardsSpec } from './shards.js';
import { compareMerged, mergeOutputs, type OutFile } from './shardMerge.js';
import { lastErrorOutput } from './lastErrorOutput.js';
import { checkedResult } from '../trust/replication.js';

export const ADAPT_PREFIX = 'adapt:';
export const SHARD_PREFIX = 'shard-';
/** The MERGE task of a merge script: `merge` in the full run, `adapt:merge` in the check. */
export const MERGE_TASK = 'merge';

interface FinishedTask {
  id: string;
  jobId: string;
  name: string;
  role: string;
  kind: string;
  status: string;
  statusReason: string | null;
  command: string;
  codeVersionId: string;
  currentAttemptId: string | null;
  result: unknown;
  job: { status: string; currentPlanId: string | null; frozenCodeId: string | null; ownerId: string };
}
interface Outputs {
  outputs?: ManifestEntry[];
  metrics?: Record<string, number> | null;
  exitCode?: number;
}

/** The check's tasks: the unsharded bounded run and the same workload in shards (PROBE: their outputs are never the job's). */
export function adaptationCheckTasks(
  jobId: string,
  codeVersionId: string,
  spec: ShardsSpec,
  environment: Record<string, unknown>,
  requirements: Requirements,
): CreateTaskInput[] {
  const timeoutSec = spec.check.timeoutSec ?? Math.min(requirements.timeoutSec ?? 900, 900);
  const probe = (name: string, command: string): CreateTaskInput => ({
    jobId,
    kind: 'PROBE',
    role: 'SHARD_CHECK',
    name,
    codeVersionId,
    command,
    environment,
    requirements: { ...requirements, timeoutSec },
    maxAttempts: 3,
  });
  return [
    probe(`${ADAPT_PREFIX}original`, spec.check.original),
    ...spec.check.shards.map((c, i) => probe(`${ADAPT_PREFIX}${SHARD_PREFIX}${i + 1}`, c)),
  ];
}

function shardTasks(
  jobId: string,
  codeVersionId: string,
  spec: ShardsSpec,
  environment: Record<string, unknown>,
  requirements: Requirements,
): CreateTaskInput[] {
  return spec.shards.map((s, i) => ({
    jobId,
    kind: 'SHARD',
    name: `${SHARD_PREFIX}${i + 1}`,
    codeVersionId,
    command: s.command,
    environment,
    requirements,
    maxAttempts: 3,
  }));
}

async function loadPlan(r: Resources, task: FinishedTask) {
  const plan = task.job.currentPlanId ? await r.prisma.plan.findUnique({ where: { id: task.job.currentPlanId } }) : null;
  const spec = plan?.shards as unknown as ShardsSpec | null;
  return plan && spec ? { plan, spec } : null;
}

const outputsOf = (t: { result: unknown }): OutFile[] => (t.result as Outputs | null)?.outputs ?? [];
const reader = (r: Resources) => (sha: string) => readBlobBuffer(r.blobs, sha);
const shardIndex = (name: string) => Number(/(\d+)$/.exec(name)?.[1] ?? 0);

/**
 * The MERGE task of a merge script: the project's code, the merge command, and each shard's
 * outputs as inputs under shards/<shard-i>/ (the check's shards are named the same there).
 */
function mergeTask(
  jobId: string,
  /** The full run's merge (MERGE), or the check's (SHARD_CHECK). */
  role: 'MERGE' | 'SHARD_CHECK',
  name: string,
  codeVersionId: string,
  spec: ShardsSpec,
  shards: { name: string; result: unknown }[],
  environment: Record<string, unknown>,
  requirements: Requirements,
): CreateTaskInput {
  const inputs = shards.flatMap((s) => outputsOf(s).map((o) => ({ ...o, path: `shards/${s.name.replace(ADAPT_PREFIX, '')}/${o.path}` })));
  const timeoutSec = Math.min(requirements.timeoutSec ?? 900, 900);
  return {
    jobId,
    kind: 'MERGE',
    role,
    name,
    codeVersionId,
    command: spec.merge.script!.command,
    environment: { ...environment, inputs },
    requirements: { ...requirements, timeoutSec },
    maxAttempts: 3,
  };
}

/** Queues a MERGE task once (under the job's row lock: a task of that name already there means done). */
async function queueMergeOnce(r: Resources, jobId: string, input: CreateTaskInput): Promise<void> {
  const queued = await commitTransition(r, jobId, async (tx, now) => {
    if ((await lockJob(tx, jobId)) !== 'RUNNING' || (await tx.task.count({ where: { jobId, name: input.name } })) > 0)
      return { eventIds: [], queued: false };
    return { eventIds: [(await insertTask(tx, now, input)).eventId], queued: true };
  });
  if (queued.queued) await r.events.emit({ type: 'tasks.available' });
}

/** A check task finished: when all have, decide (see the file comment). */
export async function afterAdaptationCheck(r: Resources, task: FinishedTask): Promise<void> {
  const jobId = task.jobId;
  if (task.job.status !== 'RUNNING') return;
  const loaded = await loadPlan(r, task);
  if (!loaded) return;
  const { plan, spec } = loaded;
  // Decided already (the reconcile's sweep re-advances finished tasks of RUNNING jobs): nothing to read.
  if ((await r.prisma.task.count({ where: { jobId, role: { in: ['RUN', 'SHARD'] } } })) > 0) return;
  const tasks = await r.prisma.task.findMany({
    where: { jobId, role: 'SHARD_CHECK' },
    include: { currentAttempt: { include: { worker: { select: { id: true, name: true, accelVendor: true } } } } },
  });
  if (tasks.some((t) => t.status !== 'SUCCEEDED' && t.status !== 'FAILED')) return;
  const original = tasks.find((t) => t.name === `${ADAPT_PREFIX}original`)!;
  const merger = tasks.find((t) => t.kind === 'MERGE');
  const shards = tasks.filter((t) => t !== original && t !== merger).sort((a, b) => shardIndex(a.name) - shardIndex(b.name));
  const failed = tasks.filter((t) => t.status === 'FAILED');
  const script = spec.merge.kind === 'script';
  // A merge script: once the check's shards are done, its MERGE runs on them first.
  if (script && !merger && !failed.length) {
    await queueMergeOnce(
      r,
      jobId,
      mergeTask(
        jobId,
        'SHARD_CHECK',
        `${ADAPT_PREFIX}${MERGE_TASK}`,
        original.codeVersionId,
        spec,
        shards,
        (plan.environment ?? {}) as Record<string, unknown>,
        plan.requirements as unknown as Requirements,
      ),
    );
    return;
  }
  let ok = false;
  let report: string;
  let check: unknown = null;
  if (failed.length)
    report = `The check could not compare: ${failed.map((t) => `${t.name.slice(ADAPT_PREFIX.length)} (\`${t.command}\`) failed: ${t.statusReason ?? 'no reason recorded'}`).join('; ')}.`;
  else {
    try {
      const merged = script ? { files: outputsOf(merger!), value: null } : await mergeOutputs(spec.merge, shards.map(outputsOf), reader(r));
      const c = await compareMerged(spec, merged.files, outputsOf(original), reader(r));
      ok = c.ok;
      report = c.report;
      check = { ...(c.detail as object), ...(script ? { script: spec.merge.script!.command } : {}) };
    } catch (err) {
      report = `The shards' results could not be merged: ${(err as Error).message}.`;
    }
  }
  const workers = [
    ...new Map(tasks.flatMap((t) => (t.currentAttempt?.worker ? [[t.currentAttempt.worker.id, t.currentAttempt.worker]] : []))).values(),
  ];
  const code = await r.prisma.codeVersion.findUniqueOrThrow({
    where: { id: original.codeVersionId },
    select: { id: true, manifest: true },
  });
  const requirements = plan.requirements as unknown as Requirements;
  const environment = (plan.environment ?? {}) as Record<string, unknown>;
  const outcome = ok ? 'ACCEPTED' : 'REJECTED';
  const next = ok
    ? `running ${spec.shards.length} shards in parallel`
    : spec.required
      ? 'sharding was required, so the job stops'
      : 'running it unsharded';
  const reason = `${ok ? 'Adaptation accepted' : 'Adaptation rejected'} (${spec.shards.length} shards of ${spec.total} ${spec.unit}s): ${report} Next: ${next}.`;
  const queued = await commitTransition(r, jobId, async (tx, now) => {
    if ((await lockJob(tx, jobId)) !== 'RUNNING' || (await tx.task.count({ where: { jobId, role: { in: ['RUN', 'SHARD'] } } })) > 0)
      return { eventIds: [], queued: false };
    const rec = await insertRecord(tx, r, {
      jobId,
      step: 'shard',
      kind: 'adaptation',
      revision: 0,
      required: spec.required,
      hardware: { workers: workers.map((w) => w.name) },
      workload: requirements.workload,
      accelerator: workers[0]?.accelVendor ?? null,
      taskId: original.id,
      attemptId: original.currentAttemptId,
      workerId: workers[0]?.id ?? null,
      original: { id: code.id, manifest: code.manifest as unknown as ManifestEntry[] },
      candidate: null,
      transformation: `shard ×${spec.shards.length}`,
      numericalCheck: { ok, report, ...(check as object | null) },
      timings: { commands: { original: spec.check.original, shards: spec.check.shards }, seeds: spec.shards.map((s) => s.seed ?? null) },
      outcome,
      reason,
    });
    const eventIds = [...rec.eventIds];
    if (!ok && spec.required) {
      const f = await applyTransition(tx, now, jobId, 'fail', {
        reason: `The work had to be split into shards, but the adaptation check failed: ${report}`,
      });
      return { eventIds: [...eventIds, ...f.eventIds], queued: false };
    }
    const specs = ok
      ? shardTasks(jobId, original.codeVersionId, spec, environment, requirements)
      : [runTask(jobId, original.codeVersionId, plan.command, environment, requirements, [])];
    for (const s of specs) eventIds.push((await insertTask(tx, now, s)).eventId);
    return { eventIds, queued: true };
  });
  if (queued.queued) await r.events.emit({ type: 'tasks.available' });
}

/**
 * A SHARD finished. Failed for good → the job fails naming it. All succeeded → the merge, then
 * `validate` (the acceptance checks of any run) with the merged result; `extraEvents` runs inside
 * the validation's transaction, so the `shards.merged` event is written exactly once.
 */
export async function afterShard(
  r: Resources,
  task: FinishedTask,
  validate: (result: Outputs, extraEvents: (tx: Db) => Promise<string[]>) => Promise<void>,
): Promise<void> {
  const jobId = task.jobId;
  if (task.job.status !== 'RUNNING') return;
  if (task.status === 'FAILED') {
    await transitionIfAllowed(r, jobId, 'fail', {
      reason: `Shard ${task.name} (\`${task.command}\`) failed after its retries: ${task.statusReason ?? 'no reason recorded'}`,
      onlyFrom: ['RUNNING'],
    });
    return;
  }
  const loaded = await loadPlan(r, task);
  if (!loaded) return;
  const { plan, spec } = loaded;
  const all = (await r.prisma.task.findMany({ where: { jobId, kind: 'SHARD' } })).sort((a, b) => shardIndex(a.name) - shardIndex(b.name));
  if (all.length !== spec.shards.length || all.some((t) => t.status !== 'SUCCEEDED')) return;
  // Checkable shards: each one's trust check settled first, and the verified results merged.
  const shards = await verifiedShards(r, all);
  if (!shards) return;
  if (spec.merge.kind === 'script') {
    await queueMergeOnce(
      r,
      jobId,
      mergeTask(
        jobId,
        'MERGE',
        MERGE_TASK,
        task.codeVersionId,
        spec,
        shards,
        (plan.environment ?? {}) as Record<string, unknown>,
        plan.requirements as unknown as Requirements,
      ),
    );
    return;
  }
  let merged: Awaited<ReturnType<typeof mergeOutputs>>;
  try {
    merged = await mergeOutputs(spec.merge, shards.map(outputsOf), reader(r));
  } catch (err) {
    await transitionIfAllowed(r, jobId, 'fail', {
      reason: `All ${shards.length} shards succeeded, but their results could not be merged: ${(err as Error).message}.`,
      onlyFrom: ['RUNNING'],
    });
    return;
  }
  const files: ManifestEntry[] = [];
  for (const f of merged.files) {
    if (f.bytes) {
      const bytes = f.bytes;
      const put = await putBuffer(r.blobs, bytes);
      // The last two shards may finish at once and both merge (same bytes, same blob): the loser of
      // the upsert race on the new blob row retries once; only one of them passes startValidation.
      await registerBlob(r, put.sha256, bytes.length, task.job.ownerId).catch((err: { code?: string }) => {
        if (err?.code !== 'P2002') throw err;
        return registerBlob(r, put.sha256, bytes.length, task.job.ownerId);
      });
    }
    files.push({ path: f.path, sha256: f.sha256, size: f.size, mode: f.mode ?? 0o644 });
  }
  await finishMerge(r, jobId, spec, shards, files, merged.value, validate);
}

type Validate = (result: Outputs, extraEvents: (tx: Db) => Promise<string[]>) => Promise<void>;

/** The merged files are the job's result: validate it (the `shards.merged` event in the validation's transaction). */
async function finishMerge(
  r: Resources,
  jobId: string,
  spec: ShardsSpec,
  shards: { name: string; result: unknown }[],
  merged: ManifestEntry[],
  value: unknown,
  validate: Validate,
): Promise<void> {
  const outputs = [...merged, ...shardFiles(shards)];
  const metrics: Record<string, number> = {};
  for (const s of shards) for (const [k, v] of Object.entries((s.result as Outputs | null)?.metrics ?? {})) metrics[`${s.name}.${k}`] = v;
  const kind = spec.merge.kind ?? 'fields';
  await validate({ outputs, metrics, exitCode: 0 }, async (tx) => [
    await recordJobEvent(tx, jobId, 'shards.merged', {
      shards: shards.length,
      file: spec.merge.file,
      kind,
      sha256: merged.find((f) => f.path === spec.merge.file)?.sha256 ?? null,
      files: merged.length,
      merged: (value ?? null) as P.InputJsonValue,
      outputs: outputs as unknown as P.InputJsonValue,
      rules:
        kind === 'script'
          ? [`script: ${spec.merge.script!.command}`]
          : kind === 'fields'
            ? spec.merge.fields.map((f) => `${f.name}: ${f.how}`)
            : [`${kind}: ${spec.merge.file}`],
    }),
  ]);
}

/**
 * A MERGE task (a merge script) finished. The check's (`adapt:merge`) → the check decides. The
 * full run's: failed for good → the job fails naming it; succeeded → what it wrote is the
 * merged result, validated like any run's.
 */
export async function afterMergeTask(r: Resources, task: FinishedTask, validate: Validate): Promise<void> {
  if (task.role === 'SHARD_CHECK') return afterAdaptationCheck(r, task);
  const jobId = task.jobId;
  if (task.job.status !== 'RUNNING') return;
  if (task.status === 'FAILED') {
    await transitionIfAllowed(r, jobId, 'fail', {
      reason: `The merge (\`${task.command}\`) failed: ${task.statusReason ?? 'no reason recorded'}${await lastErrorOutput(r, task.currentAttemptId)}`,
      onlyFrom: ['RUNNING'],
    });
    return;
  }
  const loaded = await loadPlan(r, task);
  if (!loaded) return;
  const shards = await verifiedShards(
    r,
    (await r.prisma.task.findMany({ where: { jobId, kind: 'SHARD' } })).sort((a, b) => shardIndex(a.name) - shardIndex(b.name)),
  );
  if (!shards) return;
  const written = outputsOf(task).map((o) => ({ path: o.path, sha256: o.sha256, size: o.size, mode: o.mode ?? 0o644 }));
  if (!written.some((o) => o.path === loaded.spec.merge.file)) {
    await transitionIfAllowed(r, jobId, 'fail', {
      reason: `The merge (\`${task.command}\`) wrote no ${loaded.spec.merge.file}.`,
      onlyFrom: ['RUNNING'],
    });
    return;
  }
  await finishMerge(r, jobId, loaded.spec, shards, written, { script: loaded.spec.merge.script!.command, files: written.length }, validate);
}

/**
 * The shards with the results the job goes on with (trust/replication.ts checkedResult: its own,
 * or the agreeing replica's when its worker was found wrong); null while a check is under way.
 */
async function verifiedShards<T extends Parameters<typeof checkedResult>[1]>(r: Resources, shards: T[]): Promise<T[] | null> {
  const results: Awaited<ReturnType<typeof checkedResult>>[] = [];
  for (const s of shards) results.push(await checkedResult(r, s));
  if (results.some((x) => x === null)) return null;
  return shards.map((s, i) => ({ ...s, result: results[i] }));
}

/** Every shard's own files, each under shards/<shard>/ (never one shard's file as the job's). */
function shardFiles(shards: { name: string; result: unknown }[]): ManifestEntry[] {
  return shards.flatMap((s) => ((s.result as Outputs | null)?.outputs ?? []).map((o) => ({ ...o, path: `shards/${s.name}/${o.path}` })));
}

/** The job's outputs when it ran in shards: what the merge stored (null: not sharded, or not merged yet). */
export async function shardedOutputs(prisma: Resources['prisma'], jobId: string): Promise<ManifestEntry[] | null> {
  const ev = await prisma.jobEvent.findFirst({
    where: { jobId, kind: 'shards.merged' },
    orderBy: { id: 'desc' },
    select: { payload: true },
  });
  return ev ? ((ev.payload as { outputs?: ManifestEntry[] }).outputs ?? []) : null;
}
