/**
 * Accepts the result of the task's current attempt, once (invariant 1): a batch of one
 * (completeAttempts.ts, where the locking, fencing and what each outcome does are described).
 * A late or foreign completion is refused as stale and recorded, and so is one past its
 * lease's expiry (even before the tick marks it LOST). Declared outputs must be blobs
 * uploaded for this attempt. Throws the refusal (StaleAttemptError, NotFoundError,
 * ValidationError); returns the accepted attempt's ids.
 */
import type { Resources } from '../resources.js';
import { completeAttempts, type CompleteInput } from './completeAttempts.js';

export type { CompleteInput } from './completeAttempts.js';

export async function completeAttempt(r: Resources, workerTokenId: string, attemptId: string, fencingToken: string, input: CompleteInput) {
  const [outcome] = await completeAttempts(r, workerTokenId, [{ attemptId, fencingToken, result: input }]);
  if (!outcome!.ok) throw outcome!.error;
  return {
    id: outcome!.id,
    taskId: outcome!.taskId,
    workerId: outcome!.workerId,
    status: outcome!.status,
    task: { jobId: outcome!.jobId },
  };
}
