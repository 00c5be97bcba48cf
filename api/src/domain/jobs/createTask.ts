import { z } from 'zod';
import type { Prisma as P, TaskKind } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import { ValidationError } from '../errors.js';
import type { Resources } from '../resources.js';
import { recordJobEvent } from './jobEvents.js';
import { ServiceRuntimeSchema } from '../services/serviceSpec.js';

/** What a task needs from a worker; matched in SQL at claim time. */
export const RequirementsSchema = z.object({
  workload: z.enum(['python', 'torch-cpu', 'torch-cuda', 'torch-rocm', 'torch-mps', 'cuda-cxx', 'hip-cxx', 'shell']),
  accelVendor: z.enum(['nvidia', 'amd', 'apple']).nullish(),
  minMemoryMiB: z.number().int().min(0).max(1e8).optional(),
  minAccelMemoryMiB: z.number().int().min(0).max(1e8).optional(),
  cpuCores: z.number().int().min(1).max(1024).optional(),
  network: z.boolean().optional(),
  timeoutSec: z.number().int().min(1).max(7 * 86400).optional(),
  /**
   * The high end of the run's estimate from its smoke run (jobs/estimate.ts): the spending-cap
   * check at lease grant projects the run to this instead of its whole time limit.
   */
  estimateSec: z.number().int().min(1).max(7 * 86400).optional(),
  /** Paths (relative to the output directory) to upload when the run ends; globs allowed. */
  outputs: z.array(z.string().max(500)).max(200).optional(),
  /** Python packages that must import (checked before running). */
  pythonPackages: z.array(z.string().max(100)).max(100).optional(),
  /**
   * The setup phase before the run (worker side: a cached virtualenv per interpreter and
   * requirements, the machine's own packages visible and pinned): requirement lines pip
   * installs, only packages the workers lack. Placed only on workers that install.
   */
  setup: z.object({ pip: z.array(z.string().min(1).max(300)).min(1).max(200) }).optional(),
  /** Workers this task's retries stay off (the run supervisor's retry elsewhere); the claim skips them. */
  avoidWorkers: z.array(z.string().uuid()).max(50).optional(),
  /** A SERVICE task: its readiness check and how long it stays up (domain/services). */
  service: ServiceRuntimeSchema.optional(),
});
export type Requirements = z.infer<typeof RequirementsSchema>;

export interface CreateTaskInput {
  jobId: string;
  kind: TaskKind;
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
 * Creates a task inside the caller's transaction (and its task.created event). The
 * caller emits `tasks.available` and the event after commit.
 */
export async function insertTask(tx: Db, now: Date, input: CreateTaskInput) {
  const req = RequirementsSchema.safeParse(input.requirements);
  if (!req.success) throw new ValidationError('Invalid task requirements.', req.error.issues.map((i) => ({ path: ['requirements', ...i.path.map(String)], message: i.message })));
  const job = await tx.job.findUniqueOrThrow({ where: { id: input.jobId }, select: { ownerId: true } });
  const task = await tx.task.create({
    data: {
      jobId: input.jobId,
      ownerId: job.ownerId,
      kind: input.kind,
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
    },
  });
  const eventId = await recordJobEvent(tx, input.jobId, 'task.created', { taskId: task.id, name: task.name, kind: task.kind, workload: task.workload });
  return { task, eventId };
}

export async function createTask(r: Resources, input: CreateTaskInput) {
  const { task, eventId } = await r.prisma.$transaction((tx) => insertTask(tx, r.now(), input));
  await r.events.emit({ type: 'job.event', jobId: input.jobId, eventId });
  await r.events.emit({ type: 'tasks.available' });
  return task;
}
