/**
 * Rule: every third-party import of what will run (the entry point, its evaluation script, the
 * preparation script), and every module a run of this job could not import (a replan's evidence,
 * from the run supervisor's brief), resolved before anything runs: installed in a setup phase, or
 * the job stops naming what no worker can have.
 */
import { importsOf, type DependencyCheck } from '../../planner/resolveImports.js';
import { call, type PlannerRule } from './planning.js';

export const dependencies: PlannerRule = (p) => {
  const { entry, hardware } = p;
  const runFiles = [entry.path, ...(p.evalFile ? [p.evalFile] : []), ...(p.prepareScript ? [p.prepareScript] : [])];
  const missingAtRunTime = [...new Set([...p.task.matchAll(/^Replan \d+:.*?missing module: ([A-Za-z_]\w*)/gm)].map((m) => m[1]!))];
  if (!missingAtRunTime.length && ![...importsOf(p.facts, runFiles).keys()].some((m) => m !== 'torch' && m !== 'numpy')) return undefined;
  const deps = p.last<DependencyCheck>('check_dependencies');
  if (!deps)
    return call('check_dependencies', {
      files: runFiles,
      workload: hardware.workload,
      ...(hardware.accelVendor ? { accelVendor: hardware.accelVendor } : {}),
      ...(missingAtRunTime.length ? { missingAtRunTime } : {}),
    });
  if (deps.unavailable.length)
    return call('give_up', { reason: deps.summary ?? `Unavailable on the workers: ${deps.unavailable.join(', ')}.` });
  p.install = deps.install;
  return undefined;
};
