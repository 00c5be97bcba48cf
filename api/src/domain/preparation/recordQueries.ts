import type { Prisma as P, PreparationOutcome } from '../../generated/prisma/client.js';
import type { Principal } from '../auth/principal.js';
import type { ManifestEntry } from '../blobs/paths.js';
import { NOBODY_ID } from '../ids.js';
import type { Resources } from '../resources.js';
import { loadTree, unifiedDiff } from './codeTrees.js';

export interface RecordFilter {
  outcome?: PreparationOutcome[] | null;
  transformation?: string | null;
  workload?: string | null;
  accelerator?: string | null;
  jobId?: string | null;
  since?: Date | null;
}

/**
 * Which records a caller sees (invariant 7): a user those of their own jobs; an operator
 * (CHATGPU_OPERATORS) every job's — the network's experience of its transformations.
 */
export function recordWhere(who: Principal, f: RecordFilter = {}): P.PreparationRecordWhereInput {
  const scope: P.PreparationRecordWhereInput =
    who.kind === 'user' ? (who.operator ? {} : { job: { ownerId: who.userId } }) : { jobId: NOBODY_ID };
  return {
    ...scope,
    ...(f.outcome?.length ? { outcome: { in: f.outcome } } : {}),
    ...(f.transformation ? { transformation: f.transformation } : {}),
    ...(f.workload ? { workload: f.workload } : {}),
    ...(f.accelerator ? { accelerator: f.accelerator } : {}),
    ...(f.jobId ? { jobId: f.jobId } : {}),
    ...(f.since ? { createdAt: { gte: f.since } } : {}),
  };
}

const MAX_DIFF_CHARS = 200_000;

/** The change a record is about: a unified diff from its original version to its candidate (text files). */
export async function recordDiff(r: Resources, rec: { originalCodeId: string; candidateCodeId: string | null }): Promise<string | null> {
  if (!rec.candidateCodeId) return null;
  const [a, b] = await Promise.all(
    [rec.originalCodeId, rec.candidateCodeId].map((id) => r.prisma.codeVersion.findUnique({ where: { id }, select: { manifest: true } })),
  );
  if (!a || !b) return null;
  const [before, after] = await Promise.all([
    loadTree(r, a.manifest as unknown as ManifestEntry[]),
    loadTree(r, b.manifest as unknown as ManifestEntry[]),
  ]);
  const diff = unifiedDiff(before.text, after.text);
  return diff.length > MAX_DIFF_CHARS
    ? `${diff.slice(0, MAX_DIFF_CHARS)}\n… (diff cut at ${MAX_DIFF_CHARS} characters; the evidence bundle has it whole)\n`
    : diff;
}
