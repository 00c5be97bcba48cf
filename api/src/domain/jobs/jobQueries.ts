import type { JobStatus } from '../../generated/prisma/enums.js';
import type { Db } from '../../db/client.js';
import type { Resources } from '../resources.js';

/** The job row (throws when it does not exist). */
export function loadJob(r: Pick<Resources, 'prisma'>, jobId: string, db: Db = r.prisma) {
  return db.job.findUniqueOrThrow({ where: { id: jobId } });
}

/**
 * Finished RUN, SHARD, PROBE and MERGE tasks whose job is still RUNNING, and EVALUATE tasks whose job
 * is still VALIDATING, for `quietMs`: the reaction to their `task.finished` was lost (a crash).
 */
export async function tasksAwaitingAdvance(r: Pick<Resources, 'prisma'>, now: Date, quietMs: number): Promise<string[]> {
  const rows = await r.prisma.task.findMany({
    where: {
      status: { in: ['SUCCEEDED', 'FAILED'] },
      OR: [
        { kind: { in: ['RUN', 'SHARD', 'PROBE', 'MERGE'] }, job: { status: 'RUNNING' } },
        { kind: 'EVALUATE', job: { status: 'VALIDATING' } },
      ],
      finishedAt: { lt: new Date(now.getTime() - quietMs) },
    },
    select: { id: true },
    take: 20,
  });
  return rows.map((t) => t.id);
}

/** Ids of jobs in a status (oldest update first), for the reconcile's sweeps. */
export async function jobsInStatus(r: Pick<Resources, 'prisma'>, status: JobStatus, take = 20): Promise<string[]> {
  const rows = await r.prisma.job.findMany({ where: { status }, select: { id: true }, orderBy: { updatedAt: 'asc' }, take });
  return rows.map((j) => j.id);
}
