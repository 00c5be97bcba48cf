import type { Prisma } from '../../db/client.js';
import type { ManifestEntry } from '../blobs/paths.js';

/** The job's downloadable results: files of its succeeded RUN, SHARD and EVALUATE tasks (later paths win). */
export async function jobOutputs(prisma: Prisma, jobId: string): Promise<ManifestEntry[]> {
  const tasks = await prisma.task.findMany({
    where: { jobId, status: 'SUCCEEDED', kind: { in: ['RUN', 'SHARD', 'EVALUATE'] } },
    select: { result: true },
    orderBy: { createdAt: 'asc' },
  });
  const seen = new Map<string, ManifestEntry>();
  for (const t of tasks) for (const o of (t.result as { outputs?: ManifestEntry[] } | null)?.outputs ?? []) seen.set(o.path, o);
  return [...seen.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
}
