import type { Prisma } from '../../db/client.js';
import type { ManifestEntry } from '../blobs/paths.js';
import { shardedOutputs } from './shardRun.js';
import { verifiedResults } from '../trust/replication.js';

/**
 * The job's downloadable results: files of its succeeded RUN and EVALUATE tasks (later paths
 * win; a result found wrong by its trust check gives way to the verified one); a job run in shards has the merged result instead of its SHARD tasks' files (shardRun.ts).
 */
export async function jobOutputs(prisma: Prisma, jobId: string): Promise<ManifestEntry[]> {
  const merged = await shardedOutputs(prisma, jobId);
  const tasks = await prisma.task.findMany({
    where: { jobId, status: 'SUCCEEDED', kind: { in: merged ? ['RUN', 'EVALUATE'] : ['RUN', 'SHARD', 'EVALUATE'] } },
    select: { id: true, result: true },
    orderBy: { createdAt: 'asc' },
  });
  // A result its trust check found wrong is replaced by the agreeing one (trust/replication.ts).
  const verified = await verifiedResults(prisma, jobId);
  const seen = new Map<string, ManifestEntry>((merged ?? []).map((o) => [o.path, o]));
  for (const t of tasks) for (const o of ((verified.get(t.id) ?? t.result) as { outputs?: ManifestEntry[] } | null)?.outputs ?? []) seen.set(o.path, o);
  return [...seen.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
}
