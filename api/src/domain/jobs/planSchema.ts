/**
 * What a plan is (docs/architecture.md §3 Plan): the shape `submit_plan` accepts from any planner
 * (schema-validated; strict-mode friendly: optional fields are nullable on the wire) and
 * the job engine stores. The acceptance criteria it carries become the job's criteria,
 * fixed from then on (invariant 6).
 */
import { z } from 'zod';
import { TRANSFORMATION_NAMES } from '../../preparation/transformations.js';
import type { Criteria } from './acceptance.js';
import { ServiceSchema } from '../services/serviceSpec.js';
import { ShardsSchema } from './shards.js';

export const WORKLOADS = ['python', 'torch-cpu', 'torch-cuda', 'torch-rocm', 'torch-mps', 'cuda-cxx', 'hip-cxx', 'shell'] as const;

const Threshold = z.object({ name: z.string().min(1).max(100), op: z.enum(['<', '<=', '>', '>=']), value: z.number() });

const Environment = z.object({
  workload: z.enum(WORKLOADS),
  accelVendor: z.enum(['nvidia', 'amd', 'apple']).optional(),
});

/** Tolerances of the numerical comparison (compare.py); omitted → assert_close's per-dtype defaults. */
const Tolerance = z.object({
  rtol: z.number().min(0).max(1).optional(),
  atol: z.number().min(0).max(1e6).optional(),
});

/** How much of the full run a bounded workload does (1 of 20 epochs): its timing scales by full/bounded. */
const RunScale = z.object({
  unit: z.string().min(1).max(40).describe('What the run length counts: epoch, step, iteration, sample, …'),
  bounded: z.number().positive().describe('How many the bounded workload does.'),
  full: z.number().positive().describe('How many the full run does.'),
});

export const PreparationSchema = z
  .object({
    workload: z
      .object({
        command: z
          .string()
          .min(1)
          .max(2000)
          .describe('The bounded workload: the same command with smaller flags (fewer steps/epochs/samples) and a fixed seed.'),
        timeoutSec: z.number().int().min(10).max(86400).optional(),
        scale: RunScale.optional().describe(
          'How much of the full run the bounded workload does: the last candidate run on the target gives the estimate of the full run.',
        ),
      })
      .describe('What preparation runs (the reference and every candidate run this).'),
    compare: z
      .array(z.string().min(1).max(500))
      .max(50)
      .optional()
      .describe('Output paths compared between reference and candidate (default: outputs/).'),
    reference: Environment.describe('Where the unchanged code is meant to run (its source environment).'),
    target: Environment.describe('Where the full run will run.'),
    steps: z
      .array(
        z.object({
          name: z
            .string()
            .regex(/^[a-z0-9][a-z0-9-]{0,62}$/)
            .describe('Short unique name, e.g. "migrate" or "opt-workers".'),
          kind: z.enum(['migration', 'adaptation', 'optimization']),
          transformation: z.enum(TRANSFORMATION_NAMES),
          required: z
            .boolean()
            .describe('Required: the target needs it (a failure stops the job). Optional: an optimization, kept only when it pays.'),
          tolerance: Tolerance.optional(),
          on: z
            .enum(['reference', 'target'])
            .optional()
            .describe(
              'Where its candidates run and are timed: target (default), or reference for an optimization tried on the source GPU before a migration.',
            ),
        }),
      )
      .min(1)
      .max(10),
    revisionBudget: z.number().int().min(0).max(10).optional().describe('Revisions of a failed required step (default 3).'),
    frozenFiles: z
      .array(z.string().min(1).max(500))
      .max(100)
      .optional()
      .describe('Files no revision may touch (besides the evaluation script).'),
    pinRun: z.boolean().optional().describe('Run the full workload on the worker that validated the last candidate.'),
  })
  .describe('Only when the code needs a preparation step before the full run (a migration, an adaptation or optimizations).');
export type PreparationSpec = z.infer<typeof PreparationSchema>;

export const PipelineStepSchema = z.object({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}$/)
    .describe('Short unique name, e.g. "prepare-data".'),
  command: z.string().min(1).max(2000).describe('Shell command run in the project directory.'),
  produces: z
    .array(z.string().min(1).max(500))
    .max(50)
    .describe('Files or folders (relative to the project) the step writes that later steps read; they must exist when it ends.'),
  timeoutSec: z
    .number()
    .int()
    .min(10)
    .max(7 * 86400)
    .optional(),
  network: z
    .literal('download')
    .optional()
    .describe(
      "A data download (docs/data-downloads.md): only this step's task gets the network (workers' --allow-network downloads, the default), its outputs cached on the worker by URL and command; never the main run.",
    ),
  urls: z
    .array(z.string().min(1).max(2000))
    .max(20)
    .optional()
    .describe('With network: the URLs it downloads from (as the code writes them), named in the plan and in a refusal.'),
});
export type PipelineStep = z.infer<typeof PipelineStepSchema>;

/**
 * The smoke run (docs/architecture.md §4, "Smoke run"): the plan's bounded workload, run once
 * on the class of worker the full run will use before the full run is leased. It catches a
 * missing module, an out-of-memory, a wrong flag or path in minutes, and measures what the
 * estimate of the full run is made from. `scale` says how much of the full run it does
 * (1 of 20 epochs), so its time per unit scales to the full run.
 */
export const SmokeRunSchema = z.object({
  command: z
    .string()
    .min(1)
    .max(2000)
    .describe('The bounded workload: the same command with a smaller run length (1 epoch, 20 steps) and a fixed seed.'),
  timeoutSec: z.number().int().min(10).max(86400).optional(),
  scale: RunScale.optional().describe('Without it the smoke run still checks the plan, but gives no duration estimate.'),
});
export type SmokeRun = z.infer<typeof SmokeRunSchema>;

/** What one span of the request asked for (agents/planner/contract.ts AskKind). */
export const ASK_KINDS = ['setting', 'sweep', 'output', 'scale', 'threshold', 'hardware', 'limit', 'target', 'setup', 'other'] as const;

/**
 * One ask's disposition (invariant 12): every ask of the request is honoured (and how) or refused
 * (and why, naming what the project has instead). Questions are asked before the plan is
 * submitted, so a plan holds only their outcome.
 */
export const AskDispositionSchema = z.object({
  ask: z.string().min(1).max(300).describe('The request\'s words this is about, quoted as the user wrote them (e.g. "200 iterations").'),
  kind: z.enum(ASK_KINDS),
  status: z.enum(['honoured', 'refused']),
  detail: z
    .string()
    .min(1)
    .max(1000)
    .describe(
      'Honoured: how (the flag passed, the constant changed in which file, the output collected where). Refused: why, naming the settings or outputs the project does have.',
    ),
  setting: z.string().max(300).optional().describe("The setting's address when the ask is about one (file#name)."),
});
export type AskDisposition = z.infer<typeof AskDispositionSchema>;

/**
 * A setting changed by rewriting its literal (the `set-settings` step, preparation/setSettings.ts):
 * a module constant, a configurator global in a config module, a key of a YAML/JSON config.
 * Only what no flag or override reaches; the frozen code is the original with exactly these
 * literals replaced.
 */
export const SettingEditSchema = z.object({
  file: z.string().min(1).max(500),
  name: z.string().min(1).max(200).describe('The setting (a dotted key for a config file).'),
  line: z.number().int().min(1).describe("1-based line of the literal (list_settings's span)."),
  col: z.number().int().min(0).describe("0-based column (UTF-8 bytes, as Python's ast gives it)."),
  endLine: z.number().int().min(1),
  endCol: z.number().int().min(0),
  from: z.string().min(1).max(500).describe('The literal as the file holds it now.'),
  to: z.string().min(1).max(500).describe('The literal to write (Python/YAML/JSON syntax).'),
});

export const PlanSchema = z.object({
  summary: z.string().min(1).max(2000).describe('One paragraph: what will run and why this way.'),
  steps: z.array(z.string().max(500)).max(20).describe('The steps, in plain words.'),
  command: z.string().min(1).max(2000).describe('Shell command run in the project directory; write results under outputs/.'),
  environment: z
    .array(z.object({ name: z.string().regex(/^[A-Z_][A-Z0-9_]*$/), value: z.string().max(1000) }))
    .max(50)
    .optional(),
  hardware: z.object({
    workload: z.enum(WORKLOADS),
    accelVendor: z.enum(['nvidia', 'amd', 'apple']).optional(),
    minMemoryMiB: z.number().int().min(0).max(1_000_000).optional(),
    minAccelMemoryMiB: z.number().int().min(0).max(1_000_000).optional(),
    minTorch: z
      .string()
      .regex(/^\d+\.\d+$/, 'major.minor, e.g. "2.1"')
      .optional()
      .describe(
        'The lowest PyTorch the code needs (a requirements pin that only some online workers meet): only workers whose torch is at least this run it.',
      ),
    devices: z
      .number()
      .int()
      .min(1)
      .max(1024)
      .optional()
      .describe(
        'Devices the run needs on ONE worker (a distributed launch, e.g. torchrun --nproc_per_node N): GPUs of the accelerator vendor, or CPU cores of one slot. Only workers with that many run it; more than one worker has is multi-node, which is not supported.',
      ),
  }),
  timeoutSec: z
    .number()
    .int()
    .min(10)
    .max(7 * 86400)
    .optional(),
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
  preparation: PreparationSchema.optional(),
  service: ServiceSchema.optional(),
  smoke: SmokeRunSchema.optional().describe(
    'Test the plan on its hardware before the full run (omit it when the user asked for no smoke run, when the bounded workload is the full workload, or when the whole job takes under a minute). Not used with `preparation`: the preparation runs already test it.',
  ),
  shards: ShardsSchema.optional().describe(
    "Adaptation (issue 14): only for independent work (a Monte-Carlo sample count, a sweep over seeds): the shards run in parallel through the program's own flags, checked first on a bounded workload against the unsharded program, then merged. Not with `smoke` (the check plays its role), `preparation`, `before` or `service`.",
  ),
  checkable: z
    .object({
      compare: z
        .array(z.string().min(1).max(500))
        .max(50)
        .optional()
        .describe('Output paths compared between two runs (default: outputs/).'),
      tolerance: Tolerance.optional().describe(
        "How far two runs' numbers may differ (default: assert_close's per-dtype tolerances; metrics exactly).",
      ),
    })
    .optional()
    .describe(
      "The run's outputs are deterministic (a fixed seed, no timing or dates in them) within these tolerances: a sampled share of its results is re-run on a worker of another owner and compared, and workers whose results are found wrong lose trust. Omit it for outputs that vary from run to run.",
    ),
  checkpoint: z
    .object({
      path: z
        .string()
        .min(1)
        .max(300)
        .describe('The folder (relative to the project) the program saves its checkpoint in and resumes from when it holds one.'),
      flag: z
        .string()
        .max(100)
        .optional()
        .describe('The flag of the command that tells the program that folder (e.g. --checkpoint-dir), when it has one.'),
    })
    .optional()
    .describe(
      "A long run that checkpoints: the worker uploads what the program writes in this folder while it runs and restores it before a retry (a drained or lost worker), so the run resumes instead of starting over. Pass the folder through the program's own flag, or the program reads CHATGPU_CHECKPOINT_DIR (chatgpu.checkpoint).",
    ),
  install: z
    .object({ pip: z.array(z.string().min(1).max(300)).min(1).max(200).describe('Requirement lines, as check_dependencies returns them.') })
    .optional()
    .describe(
      "Python packages the workers lack, installed in a setup phase before every task of the job (a cached virtualenv that keeps the worker's own packages); only workers that install packages take the job.",
    ),
  asks: z
    .array(AskDispositionSchema)
    .max(40)
    .describe(
      "Every ask of the user's request (each setting and value, sweep, output, scale, threshold, hardware, limit) with its disposition: honoured (how) or refused (why, naming what the project has). An ask the plan can neither honour nor refuse is asked with ask_user before submitting. Empty only when the request asks for nothing specific.",
    ),
  settings: z
    .array(SettingEditSchema)
    .max(40)
    .optional()
    .describe(
      'Settings no flag reaches (module constants, config-module globals, YAML/JSON config keys; see list_settings) changed by rewriting exactly their literals before anything runs: checked statically (the AST differs only there), shown as a diff, frozen as the code every task runs.',
    ),
  before: z
    .array(PipelineStepSchema)
    .max(5)
    .optional()
    .describe(
      'Steps that run before `command`, in order (e.g. preparing the data): each is its own task on the same hardware; everything a step produces is placed, at the same paths, in the directory of every later step and of the main run (an artifact, not a re-upload).',
    ),
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
