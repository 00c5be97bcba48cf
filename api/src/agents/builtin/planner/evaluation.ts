/**
 * Rule: validation. A run that keeps a checkpoint gets a second opinion first (the validation
 * specialist), then an evaluation of the final checkpoint: the project's own evaluation script
 * (an eval*.py with a checkpoint flag), else a reload check. What the evaluation reports is
 * required, and a threshold the user named goes on the evaluation when it reports that metric
 * ("accuracy above 0.9" → eval_accuracy > 0.9), else on the run's own metrics.
 */
import type { ArgFlag } from '../../planner/analyzeProject.js';
import { call, type PlannerRule } from './planning.js';

export const evaluation: PlannerRule = (p) => {
  const { entry, checkpoint, metrics, askPlan } = p;
  if (checkpoint && !p.last('consult_specialist')) {
    return call('consult_specialist', {
      specialist: 'validation',
      question: `The run of ${entry.path} saves ${checkpoint}. What should the acceptance criteria be?`,
    });
  }
  for (const m of askPlan.metrics) if (!metrics.some((x) => x.name === m.name)) metrics.push(m);
  p.runMetrics = metrics;
  if (!checkpoint) return undefined;
  const evalScript = p.facts.entryPoints.find(
    (e) => e !== entry && /eval/i.test(e.path) && e.flags.some((f: ArgFlag) => /checkpoint|ckpt|model|weights/.test(f.flag)),
  );
  const flag = evalScript?.flags.find((f) => /checkpoint|ckpt|model|weights/.test(f.flag))?.flag;
  const own = evalScript && flag;
  if (own) p.evalFile = evalScript.path;
  const reports = own ? evalScript.reportsMetrics : ['reload_ok'];
  const onEval = (name: string) =>
    reports.find((r) => r === name || r.endsWith(`_${name}`) || r.startsWith(`${name}_`)) ??
    (name === 'acc' ? reports.find((r) => /(^|_)accuracy$/.test(r)) : undefined);
  const evalMetrics = metrics.filter((m) => onEval(m.name)).map((m) => ({ ...m, name: onEval(m.name)! }));
  p.runMetrics = metrics.filter((m) => !onEval(m.name));
  p.evaluate = {
    checkpoint,
    command: own ? `python ${evalScript.path} ${flag} ${checkpoint}` : `python -m chatgpu.reload_check ${checkpoint}`,
    metrics: evalMetrics,
    reports,
  };
  return undefined;
};
