import { z } from 'zod';
import type { Prisma as P, Task, TaskKind, TaskRole } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import { insertTaskStatement } from '../../db/sql/insertTask.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { Resources } from '../resources.js';
import { emitAll } from '../events.js';
import { ServiceRuntimeSchema } from '../services/serviceSpec.js';

/** What a task needs from a worker; matched in SQL at claim time. */
export const RequirementsSchema = z.object({
  workload: z.enum(['python', 'torch-cpu', 'torch-cuda', 'torch-rocm', 'torch-mps', 'cuda-cxx', 'hip-cxx', 'shell']),
  accelVendor: z.enum(['nvidia', 'amd', 'apple']).nullish(),
  minMemoryMiB: z.number().int().min(0).max(1e8).optional(),
  minAccelMemoryMiB: z.number().int().min(0).max(1e8).optional(),
  cpuCores: z.number().int().min(1).max(1024).optional(),
  /** Devices one worker must have for it (a distributed launch's processes, domain/workers/devices.ts): accelerators of its vendor, else cores of one slot. */
  devices: z.number().int().min(1).max(1024).optional(),
  network: z.boolean().optional(),
  /**
   * A data download (a plan step marked `network: 'download'`, docs/data-downloads.md): the URLs it
   * fetches, and the files its cache key hashes (the step's script); the worker's --allow-network
   * policy decides whether it gets the network, and its outputs are cached by (URLs, command, files).
   */
  download: z
    .object({ urls: z.array(z.string().min(1).max(2000)).max(20), files: z.array(z.string().min(1).max(500)).max(20).optional() })
    .optional(),
  timeoutSec: z
    .number()
    .int()
    .min(1)
    .max(7 * 86400)
    .optional(),
  /**
   * The high end of the run's estimate from its smoke run (jobs/estimate.ts): the spending-cap
   * check at lease grant projects the run to this instead of its whole time limit.
   */
  estimateSec: z
    .number()
    .int()
    .min(1)
    .max(7 * 86400)
    .optional(),
  /** Paths (relative to the output directory) to upload when the run ends; globs allowed. */
  outputs: z.array(z.string().max(500)).max(200).optional(),
  /**
   * The lowest PyTorch ("2.1") the code needs (a pin some online workers meet): the claim gives
   * the task only to a worker whose interpreter's torch is at least this (workers/torchVersion.ts).
   */
  minTorch: z
    .string()
    .regex(/^\d+\.\d+$/, 'major.minor, e.g. "2.1"')
    .optional(),
  /** Python packages that must import (checked before running). */
  pythonPackages: z.array(z.string().max(100)).max(100).optional(),
  /**
   * The setup phase before the run (worker side: a cached virtualenv per interpreter and
   * requirements, the machine's own packages visible and pinned): requirement lines pip
   * installs, only packages the workers lack. Placed only on workers that install.
   */
  setup: z.object({ pip: z.array(z.string().min(1).max(300)).min(1).max(200) }).optional(),
  /**
   * The task's result is checkable (domain/trust): deterministic within these tolerances, so a
   * sampled share of its results is replicated on another owner's worker and compared (compare.py,
   * the preparation stage's comparison) over the `compare` paths (default outputs/). Only workers
   * at or above the trust threshold take it.
   */
  checkable: z
    .object({
      compare: z.array(z.string().min(1).max(500)).max(50).optional(),
      tolerance: z.object({ rtol: z.number().min(0).max(1).optional(), atol: z.number().min(0).max(1e6).optional() }).optional(),
    })
    .optional(),
  /** Owners whose workers this task stays off: a replica or tie-breaker runs on another owner's machine. */
  avoidOwners: z.array(z.string().uuid()).max(50).optional(),
  /** The least reputation of a worker that may take it (a tie-breaker: at least the disputants' trust, domain/trust). */
  minReputation: z.number().min(0).max(1).optional(),
  /** Workers this task's retries stay off (the run supervisor's retry elsewhere); the claim skips them. */
  avoidWorkers: z.array(z.string().uuid()).max(50).optional(),
  /**
   * Where the program keeps its checkpoint, relative to its run directory (CHATGPU_CHECKPOINT_DIR;
   * `checkpoint` when absent): uploaded while it runs and restored before a retry starts
   * (domain/leases/checkpoints.ts, worker/src/checkpoint.ts).
   */
  checkpoint: z
    .object({
      path: z
        .string()
        .min(1)
        .max(300)
        .regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$))[\w./-]+$/, 'a relative path inside the run directory'),
    })
    .optional(),
  /** A SERVICE task: its readiness check and how long it stays up (domain/services). */
  service: ServiceRuntimeSchema.optional(),
});
export type Requirements = z.infer<typeof RequirementsSchema>;

export interface CreateTaskInput {
  jobId: string;
  kind: TaskKind;
  /** Its part in the job (prisma/schema.prisma TaskRole); default: the role its kind has outside a plan (roleOfKind). */
  role?: TaskRole;
  name: string;
  codeVersionId: string;
  command: string;
  environment?: Record<string, unknown>;
  requirements: Requirements;
  pinnedWorkerId?: string | null;
  priority?: number;
  maxAttempts?: number;
}

/**
 * Creates a task (and its task.created event) in ONE statement — inside the caller's
 * transaction when given one. The caller emits `tasks.available` and the event after commit.
 * The task's owner is its job's (read by the same statement); no such job is a NotFoundError.
 */
export async function insertTask(db: Db, now: Date, input: CreateTaskInput): Promise<{ task: Task; eventId: string }> {
  const d = taskRow(input, now);
  // Written by the statement as Prisma's create wrote them: createdAt/updatedAt the wall clock, runAfter `now`.
  const at = new Date();
  const rows = await insertTaskStatement(db, d, at);
  const row = rows[0];
  if (!row) throw new NotFoundError('Job', input.jobId);
  const { eventId, ...task } = row;
  return { task, eventId };
}

export async function createTask(r: Resources, input: CreateTaskInput) {
  // One statement (atomic by itself), then one NOTIFY; `count: 1` wakes one parked claim
  // (leases/dispatcher.ts), not every idle worker.
  const { task, eventId } = await insertTask(r.prisma, r.now(), input);
  await emitAll(r.events, [
    { type: 'job.event', jobId: input.jobId, eventId },
    { type: 'tasks.available', count: 1 },
  ]);
  return task;
}

/**
 * Several tasks in one transaction (all or none), announced in one NOTIFY: their events, and
 * one parked claim woken per task. What a planner fanning out a sweep or shards uses.
 */
export async function createTasks(r: Resources, inputs: CreateTaskInput[]) {
  if (inputs.length === 0) return [];
  const now = r.now();
  const rows = inputs.map((input, i) => taskRow(input, now, ['tasks', String(i)]));
  const made = await r.prisma.$transaction(
    async (tx) => {
      const jobIds = [...new Set(inputs.map((x) => x.jobId))];
      const jobs = await tx.job.findMany({ where: { id: { in: jobIds } }, select: { id: true, ownerId: true } });
      const owner = new Map(jobs.map((j) => [j.id, j.ownerId]));
      const missing = jobIds.find((id) => !owner.has(id));
      if (missing) throw new ValidationError(`No job ${missing}.`, [{ path: ['tasks'], message: 'unknown job' }]);
      const tasks = await tx.task.createManyAndReturn({ data: rows.map((d) => ({ ...d, ownerId: owner.get(d.jobId)! })) });
      const events = await tx.jobEvent.createManyAndReturn({
        data: tasks.map((t) => ({
          jobId: t.jobId,
          kind: 'task.created',
          payload: { taskId: t.id, name: t.name, kind: t.kind, role: t.role, workload: t.workload },
        })),
        select: { id: true, jobId: true },
      });
      return { tasks, events };
    },
    { timeout: 60_000, maxWait: 10_000 },
  );
  await emitAll(r.events, [
    ...made.events.map((e) => ({ type: 'job.event', jobId: e.jobId, eventId: e.id.toString() }) as const),
    { type: 'tasks.available', count: made.tasks.length },
  ]);
  return made.tasks;
}

/** The role of a task made with only a kind (the API's createTask, tests): the kind's own role; a probe is a PROBE. */
export function roleOfKind(kind: TaskKind): TaskRole {
  return kind;
}

/** A task's row from its input (requirements checked), without its owner (the job's). */
export function taskRow(input: CreateTaskInput, now: Date, path: string[] = []) {
  const req = RequirementsSchema.safeParse(input.requirements);
  if (!req.success)
    throw new ValidationError(
      'Invalid task requirements.',
      req.error.issues.map((i) => ({ path: [...path, 'requirements', ...i.path.map(String)], message: i.message })),
    );
  return {
    jobId: input.jobId,
    kind: input.kind,
    role: input.role ?? roleOfKind(input.kind),
    name: input.name,
    codeVersionId: input.codeVersionId,
    command: input.command,
    environment: (input.environment ?? {}) as P.InputJsonValue,
    requirements: req.data as P.InputJsonValue,
    workload: req.data.workload,
    accelVendor: req.data.accelVendor ?? null,
    minMemoryMiB: req.data.minMemoryMiB ?? 0,
    minAccelMemMiB: req.data.minAccelMemoryMiB ?? 0,
    pinnedWorkerId: input.pinnedWorkerId ?? null,
    priority: input.priority ?? 0,
    maxAttempts: input.maxAttempts ?? 3,
    runAfter: now,
  };
}
