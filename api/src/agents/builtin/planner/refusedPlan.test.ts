import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { refusedPlan } from './refusedPlan.js';

describe('refusedPlan', () => {
  const facts = { entryPoints: [entry('main.py')] };
  it('a plan submit_plan refused stops the job with the refusal as its reason', () => {
    const { answer } = runRules(
      { request: 'run it', facts, tools: [['submit_plan', { error: 'The command names no file of the upload.' }]] },
      refusedPlan,
    );
    expect(answer).toEqual({
      name: 'give_up',
      args: { reason: 'The plan could not be accepted: The command names no file of the upload.' },
    });
  });
  it('no plan yet, or one accepted: the rules go on', () => {
    expect(runRules({ request: 'run it', facts }, refusedPlan).answer).toBeNull();
    expect(runRules({ request: 'run it', facts, tools: [['submit_plan', { planId: 'p1', version: 1 }]] }, refusedPlan).answer).toBeNull();
  });
});
