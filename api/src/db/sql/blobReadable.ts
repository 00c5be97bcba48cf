import type { Prisma } from '../client.js';

/**
 * May this user read this blob? (invariant 7) Yes when they uploaded it (BlobAccess),
 * or it is in a code version of one of their jobs, or in an output or checkpoint of one of
 * their jobs' attempts. Manifests are jsonb arrays of {path, sha256, size, mode}; `@>`
 * containment uses no index here — the per-user row sets are small. Read-only, no locks.
 */
export async function userCanReadBlob(prisma: Prisma, userId: string, sha256: string): Promise<boolean> {
  const probe = JSON.stringify([{ sha256 }]);
  const rows = await prisma.$queryRaw<{ ok: boolean }[]>`
    SELECT (
      EXISTS (SELECT 1 FROM "BlobAccess" WHERE sha256 = ${sha256} AND "userId" = ${userId}::uuid)
      OR EXISTS (SELECT 1 FROM "CodeVersion" cv JOIN "Job" j ON j.id = cv."jobId"
                 WHERE j."ownerId" = ${userId}::uuid AND cv.manifest @> ${probe}::jsonb)
      OR EXISTS (SELECT 1 FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId"
                 WHERE t."ownerId" = ${userId}::uuid AND (a.outputs @> ${probe}::jsonb OR (a.checkpoint -> 'files') @> ${probe}::jsonb))
    ) AS ok`;
  return rows[0]?.ok === true;
}

/**
 * May a worker (any worker of this worker token) read this blob? Only while it holds a
 * live lease (LEASED or RUNNING attempt) on a task whose code version contains it, or
 * whose inputs (environment.inputs manifest, e.g. a checkpoint to evaluate) contain it, or
 * whose latest checkpoint (Task.checkpoint, restored before the program resumes) does.
 */
export async function workerCanReadBlob(prisma: Prisma, workerTokenId: string, sha256: string): Promise<boolean> {
  const probe = JSON.stringify([{ sha256 }]);
  const rows = await prisma.$queryRaw<{ ok: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM "Attempt" a
        JOIN "Worker" w ON w.id = a."workerId"
        JOIN "Task" t ON t.id = a."taskId"
        JOIN "CodeVersion" cv ON cv.id = t."codeVersionId"
      WHERE w."tokenId" = ${workerTokenId}::uuid
        AND a.status IN ('LEASED', 'RUNNING')
        AND (cv.manifest @> ${probe}::jsonb OR (t.environment -> 'inputs') @> ${probe}::jsonb OR (t.checkpoint -> 'files') @> ${probe}::jsonb)
    ) AS ok`;
  return rows[0]?.ok === true;
}
