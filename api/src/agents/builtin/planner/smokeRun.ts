/**
 * Rule: the bounded workload (the same command, one epoch or a few steps, a fixed seed: what a
 * preparation's reference runs) and the smoke run — a short share of the full run on the same
 * hardware, to catch errors early and estimate the full run — unless the plan migrates the code
 * (its reference run does that work) or the user asked for none.
 */
import type { PlannerRule } from './planning.js';
import { boundedCommand, smokeWorkload } from './workload.js';

export const smokeRun: PlannerRule = (p) => {
  const { entry, args, runner } = p;
  p.bounded = boundedCommand(entry, args, runner);
  p.smoke =
    p.migrate || p.versionMigrate || /\b(no|skip(?:ping)?(?: the)?|without(?: a)?)\s+smoke(?:[ -]?(?:run|test))?\b/i.test(p.request)
      ? null
      : smokeWorkload(entry, args, runner, p.configSettings);
  return undefined;
};
