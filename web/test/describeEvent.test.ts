/** The timeline's words for trust decisions (domain/trust: trust.check events) and the supervisor's revision requests. */
import { describe, expect, it } from 'vitest';
import { describeEvent } from '../src/features/jobs/describeEvent';

describe('describeEvent: trust checks', () => {
  it('says which task, which step and why', () => {
    expect(
      describeEvent('trust.check', {
        step: 'sampled',
        task: 'run',
        replicated: true,
        reason: "Sampled: 100% of box's checkable results are replicated; replicating on a worker of another owner.",
      }),
    ).toBe(
      "Trust check of run (sampled) — Sampled: 100% of box's checkable results are replicated; replicating on a worker of another owner.",
    );
    expect(
      describeEvent('trust.check', { step: 'resolved', taskId: 't1', reason: "Tie-breaker on c: agrees with b; a's result was wrong." }),
    ).toBe("Trust check (resolved) — Tie-breaker on c: agrees with b; a's result was wrong.");
    expect(describeEvent('trust.check', {})).toBe('Trust check (decided)');
  });
});

describe('describeEvent: the run supervisor', () => {
  it('says which revision of which step it asked for, with its evidence', () => {
    expect(
      describeEvent('revision.requested', { step: 'hip', revision: 2, text: 'cuDNN is included but never used.', by: 'supervisor' }),
    ).toBe('The supervisor asked the preparation agent for revision 2 of hip — cuDNN is included but never used.');
  });
});
