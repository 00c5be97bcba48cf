/**
 * The preparation agent: when a required preparation step was rejected (a compile error, a
 * numerical difference, a failed run), it gets the structured feedback and may propose a
 * revised candidate as a unified diff against the rejected candidate's files, within the
 * plan's revision budget — or stop with an explanation. Its tools are thin adapters over
 * domain/preparation/stage.ts; the stage checks and runs the revision like any candidate.
 */
import { applyPatch, parsePatch } from 'diff';
import { z } from 'zod';
import { loadTree, manifestFromTree } from '../domain/preparation/codeTrees.js';
import { pendingRevision, proposeRevision } from '../domain/preparation/stage.js';
import { applyTransition } from '../domain/jobs/jobLifecycle.js';
import { loadJob } from '../domain/jobs/jobQueries.js';
import { similarPreparationsTool } from './similarTool.js';
import { defineTool, type AgentDef } from './tool.js';

const READ_LIMIT = 20_000;

export const readCandidateFile = defineTool({
  name: 'read_candidate_file',
  description: 'Read a file of the rejected candidate (the tree the patch applies to). Without a path: the list of files.',
  schema: z.object({ path: z.string().min(1).max(1024).optional() }),
  read: async (a, ctx) => {
    const pending = await pendingRevision(ctx.r, ctx.jobId);
    if (!pending) return { output: { error: 'No revision is pending for this job.' } };
    if (!a.path) return { output: { files: pending.candidate.manifest.map((f) => ({ path: f.path, size: f.size })) } };
    const tree = (await loadTree(ctx.r, pending.candidate.manifest)).text;
    const content = tree[a.path];
    if (content === undefined) return { output: { error: `No text file ${a.path} in the candidate.` } };
    return { output: { path: a.path, content: content.slice(0, READ_LIMIT), truncated: content.length > READ_LIMIT } };
  },
});

export const proposePatch = defineTool({
  name: 'propose_patch',
  recoveredControl: 'finish',
  description:
    'Propose a revised candidate: a unified diff (git style, a/ and b/ prefixes) against the rejected candidate. Refused when it touches the evaluation script or a frozen file, or does not apply. The revision is then checked and run like any candidate.',
  schema: z.object({ diff: z.string().min(1).max(200_000), summary: z.string().min(1).max(2000) }),
  check: async (a, ctx) => {
    const pending = await pendingRevision(ctx.r, ctx.jobId);
    if (!pending) return 'No revision is pending for this job.';
    const applied = await applyDiff(ctx, a.diff);
    if ('error' in applied) return applied.error;
    const touched = applied.changed.filter((p) => pending.protectedFiles.includes(p));
    if (touched.length) return `The patch touches ${touched.join(', ')}, which no revision may change (the evaluation script or a file the plan freezes).`;
    return applied.changed.length ? null : 'The patch changes nothing.';
  },
  sideEffect: async (a, ctx, tx) => {
    const pending = (await pendingRevision(ctx.r, ctx.jobId))!;
    const applied = await applyDiff(ctx, a.diff);
    if ('error' in applied) throw new Error(applied.error);
    const job = await loadJob(ctx.r, ctx.jobId);
    const manifest = await manifestFromTree(ctx.r, pending.candidate.manifest, applied.tree, job.ownerId);
    const cv = await proposeRevision(tx, { jobId: ctx.jobId, step: pending.step.name, revision: pending.revision, parentId: pending.candidate.id, manifest, changed: applied.changed, protectedFiles: pending.protectedFiles });
    return { output: { codeVersionId: cv.id, step: pending.step.name, revision: pending.revision, changed: applied.changed, status: 'proposed; it is checked and run like any candidate' }, control: 'finish' };
  },
  after: async (_a, _res, ctx) => {
    await ctx.r.events.emit({ type: 'preparation.step', jobId: ctx.jobId });
  },
});

export const stopPreparation = defineTool({
  name: 'give_up',
  recoveredControl: 'finish',
  description: 'Stop: the required step cannot be made to pass. Say in plain words what was tried and why it fails; the job fails with this explanation.',
  schema: z.object({ reason: z.string().min(1).max(4000) }),
  sideEffect: async (a, ctx, tx) => {
    const t = await applyTransition(tx, ctx.r.now(), ctx.jobId, 'fail', { reason: a.reason, onlyFrom: ['PREPARING'] });
    return { output: { status: 'FAILED' }, control: 'finish', eventIds: t.eventIds };
  },
});

async function applyDiff(ctx: { r: Parameters<typeof pendingRevision>[0]; jobId: string }, diff: string): Promise<{ tree: Record<string, string>; changed: string[] } | { error: string }> {
  const pending = await pendingRevision(ctx.r, ctx.jobId);
  if (!pending) return { error: 'No revision is pending for this job.' };
  const tree = { ...(await loadTree(ctx.r, pending.candidate.manifest)).text };
  let patches;
  try {
    patches = parsePatch(diff);
  } catch (err) {
    return { error: `Not a unified diff: ${(err as Error).message}` };
  }
  const changed: string[] = [];
  for (const p of patches) {
    const name = (p.newFileName && p.newFileName !== '/dev/null' ? p.newFileName : p.oldFileName ?? '').replace(/^[ab]\//, '');
    if (!name) continue;
    if (name.startsWith('/') || name.split('/').includes('..')) return { error: `The patch names a path outside the project: ${name}.` };
    const before = tree[name] ?? '';
    const after = applyPatch(before, p);
    if (after === false) return { error: `The patch does not apply to ${name} (its context lines do not match the candidate).` };
    if (p.newFileName === '/dev/null') delete tree[name];
    else tree[name] = after;
    if (after !== before) changed.push(name);
  }
  if (patches.length === 0) return { error: 'Not a unified diff: no file sections found.' };
  return { tree, changed: [...new Set(changed)].sort() };
}

export const PREPARER: AgentDef = {
  name: 'preparer',
  instructions: `You are the preparer of ChatGPU: a required preparation step (a migration or an adaptation of the user's code for the hardware that will run it) was rejected.
You get the feedback: compiler errors with file and line, the numerical comparison with the reference, or the failure output.
Read the rejected candidate's files (read_candidate_file) and, when useful, what similar cases of the same transformation did (similar_preparations: known failures and their fixes), then either propose a fix as a unified diff against them (propose_patch) — keep the program's behaviour; never touch the evaluation script, the acceptance criteria or frozen files — or stop with a plain explanation (give_up) when you cannot fix it.
Call propose_patch or give_up once.`,
  tools: [readCandidateFile, similarPreparationsTool, proposePatch, stopPreparation],
};
