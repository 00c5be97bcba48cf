import type { Prisma } from '../../db/client.js';
import type { ManifestEntry } from '../blobs/paths.js';
import { shardedOutputs } from './shardRun.js';
import { verifiedResults } from '../trust/replication.js';

/**
 * The job's downloadable results: files of its succeeded RUN and EVALUATE tasks (later paths
 * win; a result found wrong by its trust check gives way to the verified one); a job run in shards has the merged result instead of its SHARD tasks' files (shardRun.ts).
 * A file of a task's own code that it left unchanged (same path, same sha256) is an input, never a
 * result, even when its outputs listed it (the worker leaves such files out too: runner.ts).
 */
export async function jobOutputs(prisma: Prisma, jobId: string): Promise<ManifestEntry[]> {
  const merged = await shardedOutputs(prisma, jobId);
  const tasks = await prisma.task.findMany({
    where: { jobId, status: 'SUCCEEDED', kind: { in: merged ? ['RUN', 'EVALUATE'] : ['RUN', 'SHARD', 'EVALUATE'] } },
    select: { id: true, result: true, codeVersion: { select: { manifest: true } } },
    orderBy: { createdAt: 'asc' },
  });
  // A result its trust check found wrong is replaced by the agreeing one (trust/replication.ts).
  const verified = await verifiedResults(prisma, jobId);
  const seen = new Map<string, ManifestEntry>((merged ?? []).map((o) => [o.path, o]));
  for (const t of tasks) {
    const manifest = t.codeVersion.manifest;
    const inputs = new Map((Array.isArray(manifest) ? (manifest as unknown as ManifestEntry[]) : []).map((f) => [f.path, f.sha256]));
    for (const o of ((verified.get(t.id) ?? t.result) as { outputs?: ManifestEntry[] } | null)?.outputs ?? []) {
      if (inputs.get(o.path) !== o.sha256) seen.set(o.path, o);
    }
  }
  return [...seen.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
}
