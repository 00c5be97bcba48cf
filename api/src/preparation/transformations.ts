/**
 * The transformations a plan's preparation step may name, by name: the migrations
 * (migrateTree: PyTorch → device-agnostic, CUDA C++ → HIP, both by file type; and PyTorch
 * calls newer than the workers' torch → calls it has, `pytorch-version-compat`: the same
 * rewrite, named for what the plan wants from it, since the worker's torch version drives
 * both) and the
 * optimization candidates (optimize.ts), and the checkpoint-resume adaptation (checkpointResume.ts). One lookup for the pipeline and the regression
 * cases, so both apply exactly the same code.
 */
import { checkpointResume, CHECKPOINT_RESUME } from './checkpointResume.js';
import { migrateTree } from './migrateTree.js';
import { optimization, OPTIMIZATION_NAMES, type OptimizationName } from './optimize.js';
import type { CodeTree, Target, TransformContext, TransformResult } from './types.js';

export const MIGRATIONS = ['pytorch-device-agnostic', 'pytorch-version-compat', 'cuda-to-hip'] as const;
/** Adaptations to the network itself: `checkpoint-resume` makes a training loop survive a lost machine. */
export const ADAPTATIONS = [CHECKPOINT_RESUME] as const;
export const TRANSFORMATION_NAMES = [...MIGRATIONS, ...ADAPTATIONS, ...OPTIMIZATION_NAMES] as const;
export type TransformationName = (typeof TRANSFORMATION_NAMES)[number];

export type Transformation = (tree: CodeTree, ctx: TransformContext, opts: { python: string }) => Promise<TransformResult>;

export function transformationByName(name: string): Transformation {
  if ((MIGRATIONS as readonly string[]).includes(name)) return migrateTree;
  if (name === CHECKPOINT_RESUME) return checkpointResume;
  if ((OPTIMIZATION_NAMES as readonly string[]).includes(name)) return optimization(name as OptimizationName);
  throw new Error(`Unknown transformation ${JSON.stringify(name)}; known: ${TRANSFORMATION_NAMES.join(', ')}.`);
}

/** The toolkit's target for a task workload (what the code will run on). */
export function targetOfWorkload(workload: string): Target {
  if (workload === 'torch-cuda' || workload === 'cuda-cxx') return 'cuda';
  if (workload === 'torch-rocm' || workload === 'hip-cxx') return 'rocm';
  if (workload === 'torch-mps') return 'mps';
  return 'cpu';
}
