/**
 * PreparationRecords (docs/architecture.md §3, §4): one per (job, step, revision) —
 * what was tried, on which hardware, what the checks said, the outcome and why in words.
 * Written inside the transaction that makes the decision; a `preparation.record` job event
 * announces it, and one structured Sentry log per record (when a DSN is set) carries the
 * ids to search by.
 */
import type { Prisma as P, PreparationOutcome } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import type { ManifestEntry } from '../blobs/paths.js';
import { recordJobEvent } from '../jobs/jobEvents.js';
import type { Resources } from '../resources.js';
import { logStructured } from '../../telemetry/sentry.js';
import { manifestSha } from './codeTrees.js';

export interface RecordInput {
  jobId: string;
  step: string;
  kind: 'reference' | 'migration' | 'adaptation' | 'optimization' | 'settings';
  revision: number;
  required: boolean;
  hardware: Record<string, unknown>;
  workload: string | null;
  accelerator: string | null;
  /** The original code's kind of program (similar.ts). */
  modelFamily?: string | null;
  taskId: string | null;
  attemptId: string | null;
  workerId: string | null;
  original: { id: string; manifest: ManifestEntry[] };
  candidate: { id: string; manifest: ManifestEntry[] } | null;
  transformation: string;
  staticChecks?: unknown;
  numericalCheck?: unknown;
  timings?: unknown;
  outcome: PreparationOutcome;
  reason: string;
  evidenceSha?: string | null;
}

const json = (v: unknown) => (v === null || v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as P.InputJsonValue));

export async function insertRecord(tx: Db, r: Pick<Resources, 'now'>, input: RecordInput): Promise<{ id: string; eventIds: string[] }> {
  const row = await tx.preparationRecord.create({
    data: {
      jobId: input.jobId,
      step: input.step,
      kind: input.kind,
      revision: input.revision,
      required: input.required,
      hardware: json(input.hardware) ?? {},
      workload: input.workload,
      accelerator: input.accelerator,
      modelFamily: input.modelFamily ?? null,
      taskId: input.taskId,
      attemptId: input.attemptId,
      workerId: input.workerId,
      originalCodeId: input.original.id,
      originalManifestSha: manifestSha(input.original.manifest),
      candidateCodeId: input.candidate?.id ?? null,
      candidateManifestSha: input.candidate ? manifestSha(input.candidate.manifest) : null,
      transformation: input.transformation,
      staticChecks: json(input.staticChecks),
      numericalCheck: json(input.numericalCheck),
      timings: json(input.timings),
      outcome: input.outcome,
      reason: input.reason,
      evidenceSha: input.evidenceSha ?? null,
      createdAt: r.now(),
    },
  });
  const eventId = await recordJobEvent(tx, input.jobId, 'preparation.record', {
    recordId: row.id,
    step: input.step,
    kind: input.kind,
    revision: input.revision,
    transformation: input.transformation,
    outcome: input.outcome,
    reason: input.reason,
  });
  logStructured(`preparation ${input.step}: ${input.outcome}`, {
    job: input.jobId,
    task: input.taskId ?? '',
    worker: input.workerId ?? '',
    attempt: input.attemptId ?? '',
    transformation: input.transformation,
    outcome: input.outcome,
    step: input.step,
    revision: input.revision,
  });
  return { id: row.id, eventIds: [eventId] };
}
