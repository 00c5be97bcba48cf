/**
 * `similar_preparations` — past preparation records of similar cases (domain/preparation/
 * similar.ts), for the planner (before it proposes preparation steps) and the preparer (known
 * failures of the same change on the same kind of program and hardware). Scoped as the domain
 * says: the job owner's own records in full, the network's only as counts.
 */
import { z } from 'zod';
import { loadTree } from '../domain/preparation/codeTrees.js';
import { modelFamilyOf, similarPreparations, verdictOf } from '../domain/preparation/similar.js';
import type { ManifestEntry } from '../domain/blobs/paths.js';
import { TRANSFORMATION_NAMES } from '../preparation/transformations.js';
import { defineTool } from './tool.js';

const FAMILIES = ['cuda-kernel', 'transformer', 'rnn', 'convnet', 'mlp', 'other'] as const;

export const similarPreparationsTool = defineTool({
  name: 'similar_preparations',
  description:
    "What happened when the same transformation was tried on the same kind of program (workload: convnet, transformer, …; default: this job's code) on the same accelerator: the network's counts of accepted and rejected, your own similar records with their reasons (known failures: carry them into the plan as hazards), and the verdict the preparation stage will apply (a step rejected in most similar cases is skipped).",
  schema: z.object({
    transformation: z.enum(TRANSFORMATION_NAMES),
    workload: z.enum(FAMILIES).optional().describe("The kind of program; default: this job's original code."),
    accelerator: z
      .enum(['nvidia', 'amd', 'apple', 'none'])
      .describe('The accelerator vendor of the workers that would run the candidate (none: CPU-only).'),
  }),
  read: async (a, ctx) => {
    const job = await ctx.r.prisma.job.findUniqueOrThrow({
      where: { id: ctx.jobId },
      select: { ownerId: true, codeVersions: { where: { status: 'ORIGINAL' }, select: { manifest: true } } },
    });
    const manifest = (job.codeVersions[0]?.manifest ?? []) as unknown as ManifestEntry[];
    const modelFamily = a.workload ?? modelFamilyOf((await loadTree(ctx.r, manifest)).text);
    const cases = await similarPreparations(
      ctx.r,
      job.ownerId,
      { transformation: a.transformation, modelFamily, accelerator: a.accelerator },
      { excludeJobId: ctx.jobId },
    );
    const verdict = verdictOf(cases);
    const hazards = cases.own
      .filter((o) => o.outcome === 'REJECTED')
      .map((o) => o.reason)
      .slice(0, 5);
    return {
      output: {
        key: cases.key,
        network: cases.network,
        yourRecords: cases.own.map((o) => ({
          recordId: o.recordId,
          outcome: o.outcome,
          reason: o.reason.slice(0, 500),
          createdAt: o.createdAt.toISOString(),
        })),
        hazards,
        verdict: verdict.skip ? `skip: ${verdict.reason}` : verdict.reason,
      },
    };
  },
});
