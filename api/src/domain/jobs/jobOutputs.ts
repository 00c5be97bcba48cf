import type { Prisma } from '../../db/client.js';
import type { ManifestEntry } from '../blobs/paths.js';
import { shardedOutputs } from './shardRun.js';

/**
 * The job's downloadable results: files of its succeeded RUN and EVALUATE tasks (later paths
 * win); a job run in shards has the merged result instead of its SHARD tasks' files (shardRun.ts).
 */
export async function jobOutputs(prisma: Prisma, jobId: string): Promise<ManifestEntry[]> {
  const merged = await shardedOutputs(prisma, jobId);
  const tasks = await prisma.task.findMany({
    where: { jobId, status: 'SUCCEEDED', kind: { in: merged ? ['RUN', 'EVALUATE'] : ['RUN', 'SHARD', 'EVALUATE'] } },
    select: { result: true },
    orderBy: { createdAt: 'asc' },
  });
  const seen = new Map<string, ManifestEntry>((merged ?? []).map((o) => [o.path, o]));
  for (const t of tasks) for (const o of (t.result as { outputs?: ManifestEntry[] } | null)?.outputs ?? []) seen.set(o.path, o);
  return [...seen.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
}
