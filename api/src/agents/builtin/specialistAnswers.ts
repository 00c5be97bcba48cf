/**
 * The builtin model's answers as a specialist (dependencies, validation, parallelization) and as
 * the preparer: look at the facts, then answer in words; the preparer has no rules for repairing
 * a rejected candidate, so it stops with the feedback.
 */
import type { ProjectFacts } from '../planner/analyzeProject.js';
import type { Item } from '../models/types.js';
import { call, say, toolOutputs, userTexts } from './planner/planning.js';

export function specialistAnswer(agent: string, history: Item[]): Item[] {
  const out = toolOutputs(history);
  const last = <T>(name: string) => out.get(name)?.at(-1) as T | undefined;
  if (!last('find_dependencies')) return call('find_dependencies', {});
  const facts = last<ProjectFacts>('find_dependencies')!;
  if (agent === 'dependencies' && !last('network_capacity')) return call('network_capacity', {});
  if (agent === 'validation') {
    const ep = facts.entryPoints.find((e) => e.savesCheckpoint);
    return say(
      ep
        ? `Require exit code 0 and the checkpoint among the outputs; then reload the checkpoint on a worker and evaluate it (${facts.entryPoints.some((e) => /eval/i.test(e.path)) ? 'the project has an evaluation script: use it' : 'no evaluation script: use python -m chatgpu.reload_check'}). Add metric thresholds only where the user asked for them.`
        : 'Require exit code 0 and the declared output files; the run saves no checkpoint, so there is nothing to reload.',
    );
  }
  if (agent === 'dependencies') {
    const cap = last<{ summary: string }>('network_capacity')!;
    return say(
      `Pins: ${facts.pins.map((p) => `${p.name}${p.spec}`).join(', ') || 'none'}. Online: ${cap.summary}. Workers cannot install packages.`,
    );
  }
  return say('The workload runs as one task; splitting it would change its result unless it is a sweep of independent runs.');
}

export function preparerAnswer(history: Item[]): Item[] {
  const feedback = [...userTexts(history)].reverse()[0] ?? 'no feedback';
  return call('give_up', {
    reason: `The builtin model cannot revise this candidate (set OPENAI_API_KEY for a model that can propose patches). ${feedback.slice(0, 1500)}`,
  });
}
