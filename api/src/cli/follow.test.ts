/** What `chatgpu watch` prints for the run supervisor's and the trust checks' events. */
import { describe, expect, it } from 'vitest';
import { supervisionLine } from './follow.js';

describe('supervisionLine', () => {
  it('prints findings, revision requests, trust checks, stalls and flapping workers; nothing for other events', () => {
    expect(supervisionLine('finding', { text: 'Attempt 1 of run stopped on a missing module: tqdm (box).' })).toBe(
      '  ✎ finding: Attempt 1 of run stopped on a missing module: tqdm (box).',
    );
    expect(supervisionLine('revision.requested', { step: 'hip', revision: 2, text: 'cuDNN is included but never used.' })).toBe(
      '  ✎ supervisor: revise hip (revision 2): cuDNN is included but never used.',
    );
    expect(supervisionLine('trust.check', { step: 'matched', task: 'run', reason: "Replicated on b: matched a's result." })).toBe(
      "  ⚖ trust check of run (matched): Replicated on b: matched a's result.",
    );
    expect(supervisionLine('attempt.stalled', { attempt: 1, minutes: 30 })).toBe(
      '  ⏸ attempt 1 stalled: no log line or metric for 30 min while its worker is alive',
    );
    expect(supervisionLine('worker.flapping', { worker: 'box', lost: 3, windowMin: 30 })).toBe(
      '  ⚠ worker box is flapping: it lost 3 attempts in 30 min',
    );
    expect(supervisionLine('plan.created', {})).toBeNull();
  });
});
