import type { Db } from '../client.js';
import type { Task, TaskKind, TaskRole } from '../../generated/prisma/client.js';

/** A task's row as the use case checked it (domain/jobs/createTask.ts taskRow), without its owner (its job's). */
export interface TaskInsert {
  jobId: string;
  kind: TaskKind;
  role: TaskRole;
  name: string;
  codeVersionId: string;
  command: string;
  environment: unknown;
  requirements: unknown;
  workload: string;
  accelVendor: string | null;
  minMemoryMiB: number;
  minAccelMemMiB: number;
  pinnedWorkerId: string | null;
  priority: number;
  maxAttempts: number;
  runAfter: Date;
}

/**
 * Inserts a task (status QUEUED, the life cycle's start: domain/leases/taskLifecycle.ts) and its
 * task.created event in ONE statement, its owner read from its job in the same statement; no row
 * back means no such job. Inserting a Task takes a KEY SHARE lock on its job's row (the foreign
 * key), which a caller holding that row FOR NO KEY UPDATE (lockJob.ts) does not block.
 */
export async function insertTaskStatement(db: Db, d: TaskInsert, at: Date) {
  return db.$queryRaw<(Task & { eventId: string })[]>`
    WITH t AS (
      INSERT INTO "Task" (id, "jobId", "ownerId", kind, role, name, "codeVersionId", command, environment, requirements, workload, "accelVendor",
                          "minMemoryMiB", "minAccelMemMiB", "pinnedWorkerId", priority, "maxAttempts", "runAfter", "createdAt", "updatedAt")
      SELECT gen_random_uuid(), j.id, j."ownerId", ${d.kind}::"TaskKind", ${d.role}::"TaskRole", ${d.name}, ${d.codeVersionId}::uuid, ${d.command},
             ${JSON.stringify(d.environment)}::jsonb, ${JSON.stringify(d.requirements)}::jsonb, ${d.workload}, ${d.accelVendor},
             ${d.minMemoryMiB}::int, ${d.minAccelMemMiB}::int, ${d.pinnedWorkerId}::uuid, ${d.priority}::int, ${d.maxAttempts}::int, ${d.runAfter}::timestamp, ${at}::timestamp, ${at}::timestamp
      FROM "Job" j WHERE j.id = ${d.jobId}::uuid
      RETURNING *
    ),
    e AS (
      INSERT INTO "JobEvent" ("jobId", kind, payload, "createdAt")
      SELECT t."jobId", 'task.created', jsonb_build_object('taskId', t.id, 'name', t.name, 'kind', t.kind, 'role', t.role, 'workload', t.workload), ${at}::timestamp
      FROM t
      RETURNING id
    )
    SELECT t.id, t."jobId", t."ownerId", t.kind::text AS kind, t.role::text AS role, t.name, t."codeVersionId", t.command, t.environment, t.requirements, t.workload,
           t."accelVendor", t."minMemoryMiB", t."minAccelMemMiB", t."pinnedWorkerId", t.priority, t."maxAttempts", t."attemptCount", t."infraFailures",
           t.status::text AS status, t."runAfter", t."statusReason", t."currentAttemptId", t.checkpoint, t.result, t."createdAt", t."updatedAt",
           t."finishedAt", e.id::text AS "eventId"
    FROM t, e`;
}
