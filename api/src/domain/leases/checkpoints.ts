/**
 * Checkpoints and drains (docs/architecture.md §5, "Drain and checkpoints").
 *
 * A task's program may write a checkpoint into its declared checkpoint path (the plan's
 * `checkpoint.path`, `checkpoint/` by default; the worker tells the program where in
 * CHATGPU_CHECKPOINT_DIR). The worker uploads it while the program runs, each time it changes
 * (`saveCheckpoint`, fenced like every report), and once more when it drains. The attempt keeps
 * the checkpoint it saved (its partial artifact) and the task keeps the latest one, which the
 * next attempt of the task gets restored into its directory before its program starts.
 *
 * Attempt status machine, the drain branch (currentAttempt.ts has the rest):
 *   LEASED|RUNNING → DRAINED (releaseDrainedAttempt: its worker's owner took the machine back)
 * The task goes back to QUEUED at once, and the drain does not use up one of its attempts
 * (maxAttempts grows by one): it is not a failure. The attempt's usage is the user's when it
 * carried its work over in a checkpoint; without one, nothing of it survives and it is the
 * contributor's loss, like a LOST attempt.
 */
import type { Prisma as P } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import { accrueUsage, writeOffAttemptUsage } from '../billing/usage.js';
import { checkTree, normalizeMode, normalizeUploadPath, type ManifestEntry } from '../blobs/paths.js';
import { readBlobBuffer } from '../blobs/blobStore.js';
import { StaleAttemptError, ValidationError } from '../errors.js';
import type { DomainEvent } from '../events.js';
import { recordJobEvent } from '../jobs/jobEvents.js';
import type { Resources } from '../resources.js';
import { loadOwnAttempt, recordStale, staleReason } from './currentAttempt.js';
import { moveAttempts, moveTasks } from './taskLifecycle.js';
import { lockAttemptAndTask } from '../../db/sql/lockAttemptAndTask.js';

export interface CheckpointInput {
  files: { path: string; sha256: string; mode?: number | null }[];
  /** The program's progress at the checkpoint (an epoch or step), when the worker knows it. */
  step?: number | null;
}

/** What Attempt.checkpoint and Task.checkpoint hold. */
export interface Checkpoint {
  attemptId: string;
  attemptNumber: number;
  files: ManifestEntry[];
  step: number | null;
  savedAt: string;
}

export const MAX_CHECKPOINT_FILES = 200;

/**
 * The manifest of files a worker names, each a blob it uploaded for this attempt (as outputs
 * are: PUT /blobs with X-ChatGPU-Attempt); anything else would let the worker hand the job's
 * owner, or the task's next worker, bytes it never held.
 */
export async function uploadedManifest(db: Db, attemptId: string, files: CheckpointInput['files'], what: string): Promise<ManifestEntry[]> {
  const entries = checkTree(
    files.map((o) => ({ path: normalizeUploadPath(o.path), sha256: o.sha256, size: 0, mode: normalizeMode(o.mode) })),
  );
  if (entries.length === 0) return entries;
  const uploads = await db.attemptUpload.findMany({
    where: { attemptId, sha256: { in: entries.map((o) => o.sha256) } },
    select: { sha256: true, blob: { select: { size: true } } },
  });
  const sizes = new Map(uploads.map((u) => [u.sha256, Number(u.blob.size)]));
  entries.forEach((o, i) => {
    if (!sizes.has(o.sha256)) {
      throw new ValidationError(
        `${what} ${o.path} was not uploaded for this attempt (PUT /blobs/${o.sha256} with the header X-ChatGPU-Attempt: ${attemptId} first).`,
        [{ path: ['files', String(i), 'sha256'], message: 'not uploaded for this attempt' }],
      );
    }
    o.size = sizes.get(o.sha256)!;
  });
  return entries;
}

/** Locks attempt → task (the order completeAttempt, heartbeat and the tick use) and checks the fencing. */
async function lockCurrent(tx: Db, attemptId: string, workerTokenId: string, fencingToken: string, now: Date, kind: string) {
  const pre = await loadOwnAttempt(tx, attemptId, workerTokenId);
  await lockAttemptAndTask(tx, pre.id, pre.taskId);
  const a = await loadOwnAttempt(tx, attemptId, workerTokenId);
  const reason = staleReason(a, fencingToken, now);
  if (reason) {
    await recordStale(tx, a.id, kind, { reason });
    return { stale: reason } as const;
  }
  return { stale: null, a } as const;
}

async function storeCheckpoint(
  tx: Db,
  a: { id: string; number: number; taskId: string },
  files: ManifestEntry[],
  step: number | null,
  now: Date,
): Promise<Checkpoint> {
  const cp: Checkpoint = { attemptId: a.id, attemptNumber: a.number, files, step, savedAt: now.toISOString() };
  await tx.attempt.update({ where: { id: a.id }, data: { checkpoint: cp as unknown as P.InputJsonValue } });
  await tx.task.update({ where: { id: a.taskId }, data: { checkpoint: cp as unknown as P.InputJsonValue } });
  return cp;
}

function checkStep(step: number | null | undefined) {
  if (step != null && !(Number.isInteger(step) && step >= 0))
    throw new ValidationError('A checkpoint step must be a non-negative integer.', [{ path: ['step'], message: 'bad step' }]);
  if (step != null) return step;
  return null;
}

/** A checkpoint of the task's current attempt, uploaded while it runs: the task's latest from now on. */
export async function saveCheckpoint(
  r: Resources,
  workerTokenId: string,
  attemptId: string,
  fencingToken: string,
  input: CheckpointInput,
): Promise<Checkpoint> {
  if (input.files.length === 0) throw new ValidationError('A checkpoint has at least one file.', [{ path: ['files'], message: 'empty' }]);
  if (input.files.length > MAX_CHECKPOINT_FILES)
    throw new ValidationError(`At most ${MAX_CHECKPOINT_FILES} checkpoint files.`, [{ path: ['files'], message: 'too many' }]);
  const step = checkStep(input.step);
  const now = r.now();
  const out = await r.prisma.$transaction(async (tx) => {
    const l = await lockCurrent(tx, attemptId, workerTokenId, fencingToken, now, 'checkpoint');
    if (l.stale !== null) return l;
    const files = await uploadedManifest(tx, l.a.id, input.files, 'Checkpoint file');
    return { stale: null, cp: await storeCheckpoint(tx, l.a, files, step, now), jobId: l.a.task.jobId } as const;
  });
  if (out.stale !== null) throw new StaleAttemptError(attemptId, out.stale);
  return out.cp;
}

/**
 * The worker hands the attempt back because its owner drains it: DRAINED, with the checkpoint
 * it took last (given here when it was uploaded after the program stopped), and the task is
 * queued again for another worker, which restores that checkpoint.
 */
export async function releaseDrainedAttempt(
  r: Resources,
  workerTokenId: string,
  attemptId: string,
  fencingToken: string,
  input: { checkpoint?: CheckpointInput | null; usage?: unknown; reason?: string | null },
) {
  if ((input.checkpoint?.files.length ?? 0) > MAX_CHECKPOINT_FILES)
    throw new ValidationError(`At most ${MAX_CHECKPOINT_FILES} checkpoint files.`, [
      { path: ['checkpoint', 'files'], message: 'too many' },
    ]);
  const step = checkStep(input.checkpoint?.step);
  const now = r.now();
  const out = await r.prisma.$transaction(
    async (tx) => {
      const l = await lockCurrent(tx, attemptId, workerTokenId, fencingToken, now, 'drain');
      if (l.stale !== null) return l;
      const a = l.a;
      if (input.checkpoint?.files.length)
        await storeCheckpoint(tx, a, await uploadedManifest(tx, a.id, input.checkpoint.files, 'Checkpoint file'), step, now);
      const saved = (await tx.attempt.findUniqueOrThrow({ where: { id: a.id }, select: { checkpoint: true } }))
        .checkpoint as Checkpoint | null;
      await accrueUsage(tx, r, a.id, now, { final: true });
      await moveAttempts(tx, { id: a.id }, ['LEASED', 'RUNNING'], 'DRAINED', {
        errorMessage: (input.reason ?? 'its owner drained the worker').slice(0, 4000),
        usage: (input.usage ?? undefined) as P.InputJsonValue | undefined,
        finishedAt: now,
      });
      // Nothing of it survives without a checkpoint: the contributor's loss, not the user's cost.
      if (!saved) await writeOffAttemptUsage(tx, [a.id]);
      const statusReason = saved
        ? `Attempt ${a.number} was drained from ${a.worker.name} (its owner took the machine back); the next attempt resumes from its checkpoint${saved.step !== null ? ` (step ${saved.step})` : ''}.`
        : `Attempt ${a.number} was drained from ${a.worker.name} (its owner took the machine back) before any checkpoint; the next attempt starts over.`;
      // A drain is not a failure: it does not use up one of the task's attempts.
      await moveTasks(tx, { id: a.taskId }, ['LEASED', 'RUNNING'], 'QUEUED', {
        statusReason,
        currentAttemptId: null,
        runAfter: now,
        maxAttempts: { increment: 1 },
      });
      const events = [
        await recordJobEvent(tx, a.task.jobId, 'attempt.status', {
          taskId: a.taskId,
          attemptId: a.id,
          number: a.number,
          status: 'DRAINED',
          checkpointStep: saved?.step ?? null,
          checkpoint: !!saved,
        }),
        await recordJobEvent(tx, a.task.jobId, 'task.status', {
          taskId: a.taskId,
          name: a.task.name,
          status: 'QUEUED',
          reason: statusReason,
        }),
      ];
      return { stale: null, jobId: a.task.jobId, events } as const;
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  if (out.stale !== null) throw new StaleAttemptError(attemptId, out.stale);
  for (const eventId of out.events) await r.events.emit({ type: 'job.event', jobId: out.jobId, eventId });
  await r.events.emit({ type: 'job.updated', jobId: out.jobId });
  await r.events.emit({ type: 'tasks.available' });
  return r.prisma.attempt.findUniqueOrThrow({ where: { id: attemptId } });
}

/** The checkpoint's step file the worker uploads beside it (worker/src/checkpoint.ts CHECKPOINT_META). */
const CHECKPOINT_META = 'chatgpu-checkpoint.json';

/** What an `attempt.resumed` job event carries. */
export interface ResumePayload {
  taskId: string;
  attemptId: string;
  number: number;
  /** The attempt whose checkpoint this one starts from. */
  fromAttempt: number;
  step: number | null;
  /** The run's total steps: the program's own count beside its checkpoint, else the plan's full scale; null: unknown. */
  of: number | null;
  /** When the checkpoint reached the API (its upload: the API's clock, like the end below). */
  checkpointAt: string;
  /** When the previous attempt ended (its finish) or was lost (its lease's expiry). */
  previousEndedAt: string | null;
  /** Seconds of work done after the checkpoint and thrown away with the previous attempt. */
  workLostSec: number | null;
}

/**
 * The `attempt.resumed` job events of freshly claimed attempts whose task hands them a checkpoint
 * (the claim statement returns it with the task). Written after the claim commits, in one small
 * transaction: the claim itself stays one statement, and a failure here costs an event, never the lease.
 */
export async function recordResumes(
  r: Resources,
  rows: { jobId: string; taskId: string; attemptId: string; number: number; task: { checkpoint: unknown } }[],
): Promise<DomainEvent[]> {
  const out: DomainEvent[] = [];
  for (const x of rows) {
    const cp = x.task.checkpoint as Checkpoint | null;
    if (!cp || !Array.isArray(cp.files)) continue;
    const payload = await resumePayload(r, x, cp);
    out.push({ type: 'job.event', jobId: x.jobId, eventId: await recordJobEvent(r.prisma, x.jobId, 'attempt.resumed', { ...payload }) });
  }
  return out;
}

async function resumePayload(
  r: Resources,
  x: { jobId: string; taskId: string; attemptId: string; number: number },
  cp: Checkpoint,
): Promise<ResumePayload> {
  const prev = await r.prisma.attempt.findUnique({
    where: { taskId_number: { taskId: x.taskId, number: x.number - 1 } },
    select: { status: true, finishedAt: true, leaseExpiresAt: true },
  });
  // A lost attempt worked at most until its lease ran out (the tick notices later).
  const ended = !prev
    ? null
    : prev.status === 'LOST' || prev.status === 'STALE' || !prev.finishedAt
      ? new Date(Math.min(prev.leaseExpiresAt.getTime(), prev.finishedAt?.getTime() ?? Infinity))
      : prev.finishedAt;
  const savedAt = new Date(cp.savedAt);
  return {
    taskId: x.taskId,
    attemptId: x.attemptId,
    number: x.number,
    fromAttempt: cp.attemptNumber,
    step: cp.step,
    of: (await totalFromCheckpoint(r, cp)) ?? (await totalFromPlan(r, x.jobId)),
    checkpointAt: cp.savedAt,
    previousEndedAt: ended?.toISOString() ?? null,
    workLostSec: ended ? Math.max(0, Math.round((ended.getTime() - savedAt.getTime()) / 1000)) : null,
  };
}

/** `of` in the step file the program wrote beside its checkpoint (chatgpu.resume writes it), when small and sound. */
async function totalFromCheckpoint(r: Resources, cp: Checkpoint): Promise<number | null> {
  const meta = cp.files.find((f) => f.path === CHECKPOINT_META || f.path.endsWith(`/${CHECKPOINT_META}`));
  if (!meta || meta.size > 4096) return null;
  try {
    const of = (JSON.parse((await readBlobBuffer(r.blobs, meta.sha256)).toString('utf8')) as { of?: unknown }).of;
    return typeof of === 'number' && Number.isInteger(of) && of > 0 ? of : null;
  } catch {
    return null;
  }
}

/** The full run's length in the plan's smoke-run scale (`1 of 20 epochs`: 20), when it has one. */
async function totalFromPlan(r: Resources, jobId: string): Promise<number | null> {
  const job = await r.prisma.job.findUnique({ where: { id: jobId }, select: { currentPlan: { select: { smokeRun: true } } } });
  const full = (job?.currentPlan?.smokeRun as { scale?: { full?: unknown } } | null)?.scale?.full;
  return typeof full === 'number' && Number.isInteger(full) && full > 0 ? full : null;
}
