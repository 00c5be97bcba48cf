/** The main run's task spec (the plan's RUN task): acceptPlan.ts, shardRun.ts and the job engine build it. */
import type { ManifestEntry } from '../blobs/paths.js';
import type { CreateTaskInput, Requirements } from './createTask.js';
import { estimateRequirement } from './estimate.js';

/** The main run's task; `estimateSec` (from the smoke run) is what the cap check projects it to. */
export function runTask(
  jobId: string,
  codeVersionId: string,
  command: string,
  environment: Record<string, unknown>,
  requirements: Requirements,
  inputs: ManifestEntry[],
  estimateSec?: number,
): CreateTaskInput {
  return {
    jobId,
    kind: 'RUN',
    role: 'RUN',
    name: 'run',
    codeVersionId,
    command,
    environment: { ...environment, ...(inputs.length ? { inputs } : {}) },
    requirements: { ...requirements, ...estimateRequirement(estimateSec, requirements.timeoutSec) },
    maxAttempts: 3,
  };
}
