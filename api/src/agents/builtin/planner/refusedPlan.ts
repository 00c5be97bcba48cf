/**
 * Rule: a plan that submit_plan refused is not retried blindly — the refusal is the explanation,
 * and the job stops with it.
 */
import { call, type PlannerRule } from './planning.js';

export const refusedPlan: PlannerRule = (p) => {
  const refused = p.last<{ error?: string }>('submit_plan');
  if (refused && typeof refused === 'object' && refused.error)
    return call('give_up', { reason: `The plan could not be accepted: ${refused.error}` });
  return undefined;
};
