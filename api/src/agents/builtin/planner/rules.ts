/**
 * The builtin planner's rules, in the order they decide (each file's header says what it decides).
 * A rule reads what the rules before it put in the draft (planning.ts); the first to answer with a
 * tool call ends the turn, and the next turn runs the table again from the top on the longer
 * conversation. submitPlan, the last, always answers.
 */
import type { PlannerRule } from './planning.js';
import { refusedPlan } from './refusedPlan.js';
import { torchPins } from './torchPins.js';
import { hostedService } from './hostedService.js';
import { entryPoint } from './entryPoint.js';
import { configChoice } from './configChoice.js';
import { pipelineSteps } from './pipelineSteps.js';
import { hardwareChoice } from './hardwareChoice.js';
import { commandArgs } from './commandArgs.js';
import { runOutputs } from './runOutputs.js';
import { requestAsks } from './requestAsks.js';
import { startCommand } from './startCommand.js';
import { distributedLaunch } from './distributedLaunch.js';
import { dataDownloads } from './dataDownloads.js';
import { smokeRun } from './smokeRun.js';
import { sharding } from './sharding.js';
import { requestedSweep } from './requestedSweep.js';
import { settleAsks } from './settleAsks.js';
import { evaluation } from './evaluation.js';
import { dependencies } from './dependencies.js';
import { preparationSteps } from './preparationSteps.js';
import { checkpointResume } from './checkpointResume.js';
import { submitPlan } from './submitPlan.js';

export const PLANNER_RULES: readonly PlannerRule[] = [
  refusedPlan,
  torchPins,
  hostedService,
  entryPoint,
  configChoice,
  pipelineSteps,
  hardwareChoice,
  commandArgs,
  runOutputs,
  requestAsks,
  startCommand,
  dataDownloads,
  distributedLaunch,
  smokeRun,
  sharding,
  requestedSweep,
  settleAsks,
  evaluation,
  dependencies,
  preparationSteps,
  checkpointResume,
  submitPlan,
];
