import type { Prisma as P } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';

export type JobEventKind =
  | 'job.created'
  | 'job.status'
  | 'plan.created'
  | 'question.asked'
  | 'question.answered'
  | 'question.rejected'
  | 'agent.item'
  | 'agent.run'
  | 'task.created'
  | 'task.status'
  | 'attempt.status'
  | 'attempt.stalled'
  | 'attempt.resumed'
  | 'worker.flapping'
  | 'finding'
  | 'validation'
  | 'service.ready'
  | 'service.unready'
  | 'preparation.record'
  | 'pipeline.step'
  | 'smoke.result'
  | 'shards.merged'
  | 'trust.check'
  | 'revision.requested';

/** What writing an event needs: the client or a transaction (only its jobEvent model). */
type EventWriter = Pick<Db, 'jobEvent'>;

/**
 * Appends to the job's event log inside the caller's transaction. The caller emits
 * `{type: 'job.event'}` after commit (never before: a subscriber must be able to read it).
 */
export async function recordJobEvent(tx: EventWriter, jobId: string, kind: JobEventKind, payload: P.InputJsonValue): Promise<string> {
  const row = await tx.jobEvent.create({ data: { jobId, kind, payload }, select: { id: true } });
  return row.id.toString();
}
