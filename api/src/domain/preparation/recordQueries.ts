import type { Prisma as P, PreparationOutcome } from '../../generated/prisma/client.js';
import type { Principal } from '../auth/principal.js';
import { NOBODY_ID } from '../ids.js';

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
