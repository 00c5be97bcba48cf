/**
 * The builtin model: deterministic rules that read the project (through the same tools
 * a model would call) and emit the same tool calls, so the whole product works with no
 * API key and no network. As the planner it runs the table of rules in planner/rules.ts
 * (one file each: what runs, its settings and the request's asks, the steps before it, the
 * hardware, the outputs, shards and sweeps, preparation, validation); as the supervisor,
 * builtinSupervisor.ts; as a specialist or the preparer, specialistAnswers.ts. What the planner
 * understands is in the README. It does not understand notebooks or multi-process launchers.
 */
import type { Item, ModelClient, ModelRequest, ModelResponse } from '../models/types.js';
import { decideSupervisor } from '../supervisor/builtinSupervisor.js';
import { planningOf, toolOutputs } from './planner/planning.js';
import { PLANNER_RULES } from './planner/rules.js';
import { preparerAnswer, specialistAnswer } from './specialistAnswers.js';

export function createBuiltinClient(): ModelClient {
  return {
    name: 'builtin',
    respond: async (req: ModelRequest): Promise<ModelResponse> => ({ status: 'completed', output: decide(req) }),
  };
}

function decide(req: ModelRequest): Item[] {
  const agent = /^You are the (\w+)/.exec(req.instructions)?.[1] ?? 'planner';
  if (agent === 'supervisor') return decideSupervisor(req.input, toolOutputs(req.input));
  if (agent === 'preparer') return preparerAnswer(req.input);
  if (agent !== 'planner') return specialistAnswer(agent, req.input);
  const planning = planningOf(req.input);
  if (Array.isArray(planning)) return planning;
  for (const rule of PLANNER_RULES) {
    const answer = rule(planning);
    if (answer) return answer;
  }
  throw new Error('the builtin planner reached the end of its rules without an answer (submitPlan always answers)');
}
