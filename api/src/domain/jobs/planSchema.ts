/**
 * What a plan is (docs/architecture.md §3 Plan): the shape `submit_plan` accepts from any planner
 * (schema-validated; strict-mode friendly: optional fields are nullable on the wire) and
 * the job engine stores. The acceptance criteria it carries become the job's criteria,
 * fixed from then on (invariant 6).
 */
import { z } from 'zod';
import type { Criteria } from './acceptance.js';

export const WORKLOADS = ['python', 'torch-cpu', 'torch-cuda', 'torch-rocm', 'torch-mps', 'cuda-cxx', 'hip-cxx', 'shell'] as const;

const Threshold = z.object({ name: z.string().min(1).max(100), op: z.enum(['<', '<=', '>', '>=']), value: z.number() });

export const PlanSchema = z.object({
  summary: z.string().min(1).max(2000).describe('One paragraph: what will run and why this way.'),
  steps: z.array(z.string().max(500)).max(20).describe('The steps, in plain words.'),
  command: z.string().min(1).max(2000).describe('Shell command run in the project directory; write results under outputs/.'),
  environment: z.array(z.object({ name: z.string().regex(/^[A-Z_][A-Z0-9_]*$/), value: z.string().max(1000) })).max(50).optional(),
  hardware: z.object({
    workload: z.enum(WORKLOADS),
    accelVendor: z.enum(['nvidia', 'amd', 'apple']).optional(),
    minMemoryMiB: z.number().int().min(0).max(1_000_000).optional(),
    minAccelMemoryMiB: z.number().int().min(0).max(1_000_000).optional(),
  }),
  timeoutSec: z.number().int().min(10).max(7 * 86400).optional(),
  outputs: z.array(z.string().min(1).max(500)).max(100).describe('Files or folders (relative to the project) to collect.'),
  acceptance: z.object({
    exitCode: z.number().int().optional().describe('Required exit code (default 0).'),
    requiredFiles: z.array(z.string().min(1).max(500)).max(100).describe('Output paths that must exist.'),
    metrics: z.array(Threshold).max(20).describe('Thresholds on the last reported value of each metric.'),
    evaluate: z
      .object({
        checkpoint: z.string().min(1).max(500).describe('The checkpoint file among the outputs.'),
        command: z.string().min(1).max(2000).describe('Reloads the checkpoint and evaluates it; run on a worker.'),
        metrics: z.array(Threshold).max(20).optional().describe('Thresholds on what the evaluation reports.'),
        reports: z
          .array(z.string().min(1).max(100))
          .max(20)
          .optional()
          .describe('Metrics the evaluation prints (e.g. accuracy, loss); a missing one fails the job.'),
      })
      .optional()
      .describe('Required when the run produces a checkpoint.'),
  }),
});
export type PlanInput = z.infer<typeof PlanSchema>;

/** The criteria a plan fixes for its job (exit code defaulted). */
export function criteriaOf(plan: PlanInput): Criteria {
  return { ...plan.acceptance, exitCode: plan.acceptance.exitCode ?? 0 };
}

/** Is `path` one of the outputs, or inside one of the output folders? */
export function isCollected(plan: Pick<PlanInput, 'outputs'>, path: string): boolean {
  return plan.outputs.some((o) => path === o || path.startsWith(`${o.replace(/\/$/, '')}/`));
}
