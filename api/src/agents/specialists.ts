/**
 * Specialists the planner can consult: each is a sub-run of the same durable loop with
 * its own instructions and (read-only) tools; its final answer is saved in its run and
 * returned to the planner as the tool's output.
 */
import { z } from 'zod';
import { agentLockHolder } from '../domain/agents/agentRuns.js';
import { runAgentTurn } from './loop.js';
import { findDependencies, listFiles, networkCapacityTool, readFileTool } from './planner/tools.js';
import { defineTool, type AgentDef } from './tool.js';

export const SPECIALISTS: Record<'dependencies' | 'parallelization' | 'validation', AgentDef> = {
  dependencies: {
    name: 'specialist:dependencies',
    instructions:
      "You are the dependencies specialist of ChatGPU. Read the project and the online workers, and answer: which pinned or imported packages the workers can satisfy, which they cannot (name the pin and the workers' versions), and what to do. Workers cannot install packages (no network). Answer in a few plain sentences.",
    tools: [listFiles, readFileTool, findDependencies, networkCapacityTool],
  },
  parallelization: {
    name: 'specialist:parallelization',
    instructions:
      'You are the parallelization specialist of ChatGPU. Say whether the workload splits into independent shards (seeds, parameter sweeps, data partitions) whose merged result equals a single run, and how. Answer in a few plain sentences.',
    tools: [listFiles, readFileTool, findDependencies],
  },
  validation: {
    name: 'specialist:validation',
    instructions:
      'You are the validation specialist of ChatGPU. Propose acceptance criteria for the run: exit code, output files that must exist, metric thresholds the user asked for, and — when a checkpoint is produced — a command that reloads it and evaluates it on a worker. Answer in a few plain sentences.',
    tools: [listFiles, readFileTool, findDependencies],
  },
};

export const consultSpecialist = defineTool({
  name: 'consult_specialist',
  description: 'Ask a specialist (dependencies, parallelization or validation) a question; returns its answer.',
  schema: z.object({ specialist: z.enum(['dependencies', 'parallelization', 'validation']), question: z.string().min(1).max(4000) }),
  read: async (a, ctx) => {
    const holder = await agentLockHolder(ctx.r, ctx.jobId);
    const res = await runAgentTurn(ctx.r, {
      jobId: ctx.jobId,
      agent: SPECIALISTS[a.specialist],
      model: ctx.model,
      parentRunId: ctx.runId,
      lockHolder: holder ?? 'sub-run',
      input: [{ type: 'message', role: 'user', content: a.question }],
    });
    return {
      output: {
        specialist: a.specialist,
        runId: res.runId,
        answer: res.finalText ?? `(no answer: the specialist stopped with ${res.stopReason})`,
      },
    };
  },
});
