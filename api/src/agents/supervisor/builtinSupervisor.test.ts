import { describe, expect, it } from 'vitest';
import type { Item } from '../models/types.js';
import { decideSupervisor } from './builtinSupervisor.js';

const W1 = { id: 'w1', name: 'one', memoryMiB: 8192 };
const W2 = { id: 'w2', name: 'two', memoryMiB: 8192 };
const attempt = (number: number, worker: typeof W1, status: string, errorClass: string | null) => ({
  id: `a${number}`,
  number,
  status,
  exitCode: null,
  errorClass,
  errorMessage: null,
  worker,
});
function report(attempts: ReturnType<typeof attempt>[], findings: unknown[] = []) {
  return {
    status: 'RUNNING',
    tasks: [
      {
        id: 't1',
        name: 'run',
        kind: 'RUN',
        status: 'QUEUED',
        attemptCount: attempts.length,
        infraFailures: 0,
        maxAttempts: 5,
        minMemoryMiB: 0,
        attempts,
      },
    ],
    findings,
  };
}
const trigger: Item = { type: 'message', role: 'user', content: 'Trigger: {"reason":"attempt_failed","taskId":"t1","attemptId":"a2"}' };
const decide = (rep: unknown) => decideSupervisor([trigger], new Map([['get_job', [rep]]]));

describe('the builtin supervisor rules', () => {
  it('a lost lease twice on one worker: looks for another worker', () => {
    const out = decide(report([attempt(1, W1, 'LOST', 'LEASE_EXPIRED'), attempt(2, W1, 'LOST', 'LEASE_EXPIRED')]));
    expect(out).toMatchObject([{ type: 'function_call', name: 'list_eligible_workers' }]);
  });

  it('an infrastructure failure once on the new worker after retry_elsewhere: the scheduler retries, the job is not stopped', () => {
    const finding = {
      id: 'f1',
      at: '2026-01-01T00:00:00.000Z',
      source: 'supervisor',
      text: 'failed twice on one',
      data: { taskId: 't1', remedy: 'retry_elsewhere', errorClass: 'WORKER_ERROR' },
    };
    const out = decide(report([attempt(1, W1, 'FAILED', 'WORKER_ERROR'), attempt(2, W2, 'FAILED', 'WORKER_ERROR')], [finding]));
    expect(out).toMatchObject([{ type: 'message' }]);
  });

  it('an exit code: not retried blindly', () => {
    const out = decide(report([attempt(1, W1, 'FAILED', 'EXIT_NONZERO'), attempt(2, W1, 'FAILED', 'EXIT_NONZERO')]));
    expect(out).toEqual([{ type: 'message', role: 'assistant', content: "EXIT_NONZERO: the task's own failure, not retried blindly." }]);
  });

  it('a revision it requested was accepted: records the follow-up once', () => {
    const accepted: Item = { type: 'message', role: 'user', content: 'Trigger: {"reason":"candidate_accepted","step":"hip","revision":1}' };
    const out = decideSupervisor([accepted], new Map([['get_job', [{ ...report([]), status: 'RUNNING' }]]]));
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ type: 'function_call', name: 'remember' });
    expect(JSON.parse((out[0] as { arguments: string }).arguments)).toEqual({
      observation: 'Follow-up: resolved — revision 1 of hip passed its checks and was accepted.',
      evidence: ['preparation:hip:1'],
      trigger: 'candidate_accepted',
    });
    const after = decideSupervisor(
      [accepted],
      new Map<string, unknown[]>([
        ['get_job', [report([])]],
        ['remember', [{ saved: 'f1' }]],
      ]),
    );
    expect(after).toEqual([{ type: 'message', role: 'assistant', content: 'Recorded that the revision worked.' }]);
  });
});
