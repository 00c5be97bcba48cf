/**
 * The preparation agent: when a required preparation step was rejected (a compile error, a
 * numerical difference, a failed run), it gets the structured feedback and may propose a
 * revised candidate as a unified diff against the rejected candidate's files, within the
 * plan's revision budget — or stop with an explanation. Its tools are thin adapters over
 * domain/preparation/stage.ts; the stage checks and runs the revision like any candidate.
 */
import { applyPatch, parsePatch } from 'diff';
import { z } from 'zod';
import { checkTree, normalizeUploadPath } from '../domain/blobs/paths.js';
import { ConflictError, ValidationError } from '../domain/errors.js';
import { MAX_FILES } from '../domain/jobs/createJob.js';
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
    if (!pending) return { output: { error: NOT_PENDING } };
    if (!a.path) return { output: { files: pending.candidate.manifest.map((f) => ({ path: f.path, size: f.size })) } };
    const inside = projectPath(a.path);
    if ('error' in inside) return { output: { error: inside.error } };
    const tree = (await loadTree(ctx.r, pending.candidate.manifest)).text;
    // Own properties only: a path named like a prototype member (constructor, __proto__) is a file name here.
    const content = Object.hasOwn(tree, inside.path) ? tree[inside.path] : undefined;
    if (content === undefined) return { output: { error: `No text file ${inside.path} in the candidate.` } };
    return { output: { path: inside.path, content: content.slice(0, READ_LIMIT), truncated: content.length > READ_LIMIT } };
  },
});

export const proposePatch = defineTool({
  name: 'propose_patch',
  recoveredControl: 'finish',
  description:
    'Propose a revised candidate: a unified diff (git style, a/ and b/ prefixes; /dev/null for a new or deleted file) against the rejected candidate. Refused when it touches the evaluation script or a frozen file, names a path outside the project, or does not apply. The revision is then checked and run like any candidate.',
  schema: z.object({ diff: z.string().min(1).max(200_000), summary: z.string().min(1).max(2000) }),
  check: async (a, ctx) => {
    const pending = await pendingRevision(ctx.r, ctx.jobId);
    if (!pending) return NOT_PENDING;
    const applied = await applyDiff(ctx.r, pending, a.diff);
    return 'error' in applied ? applied.error : null;
  },
  sideEffect: async (a, ctx, tx) => {
    // Checked just before (check); a job that moved on meanwhile is refused by the same rules.
    const pending = await pendingRevision(ctx.r, ctx.jobId);
    if (!pending) throw new ConflictError(NOT_PENDING);
    const applied = await applyDiff(ctx.r, pending, a.diff);
    if ('error' in applied) throw new ValidationError(applied.error);
    const job = await loadJob(ctx.r, ctx.jobId);
    const base = pending.candidate.manifest.filter((e) => !applied.removed.includes(e.path));
    const manifest = await manifestFromTree(ctx.r, base, applied.tree, job.ownerId);
    const cv = await proposeRevision(tx, {
      jobId: ctx.jobId,
      step: pending.step.name,
      revision: pending.revision,
      parentId: pending.candidate.id,
      manifest,
      changed: applied.changed,
      protectedFiles: pending.protectedFiles,
    });
    return {
      output: {
        codeVersionId: cv.id,
        step: pending.step.name,
        revision: pending.revision,
        changed: applied.changed,
        status: 'proposed; it is checked and run like any candidate',
      },
      control: 'finish',
    };
  },
  after: async (_a, _res, ctx) => {
    await ctx.r.events.emit({ type: 'preparation.step', jobId: ctx.jobId });
  },
});

export const stopPreparation = defineTool({
  name: 'give_up',
  recoveredControl: 'finish',
  description:
    'Stop: the required step cannot be made to pass. Say in plain words what was tried and why it fails; the job fails with this explanation.',
  schema: z.object({ reason: z.string().min(1).max(4000) }),
  // Only while a revision is pending: the preparer has no say over a job the stage is still running (or one not preparing at all).
  check: async (_a, ctx) => ((await pendingRevision(ctx.r, ctx.jobId)) ? null : NOT_PENDING),
  sideEffect: async (a, ctx, tx) => {
    const t = await applyTransition(tx, ctx.r.now(), ctx.jobId, 'fail', { reason: a.reason, onlyFrom: ['PREPARING'] });
    return { output: { status: 'FAILED' }, control: 'finish', eventIds: t.eventIds };
  },
});

const NOT_PENDING = 'No revision is pending for this job.';

/** A path named by the model, as a path inside the project (the upload rules: relative, no .., no NUL or backslash). */
function projectPath(raw: string): { path: string } | { error: string } {
  try {
    return { path: normalizeUploadPath(raw) };
  } catch (err) {
    return { error: `Not a path inside the project: ${(err as Error).message}` };
  }
}

type Pending = NonNullable<Awaited<ReturnType<typeof pendingRevision>>>;
interface Applied {
  /** The text files written by the patch (created or changed), by path. */
  tree: Record<string, string>;
  /** Files the patch deletes. */
  removed: string[];
  /** Every path whose content or presence changes, sorted. */
  changed: string[];
}

/**
 * The rejected candidate with the diff applied, or why it cannot be: every section must name a
 * path inside the project (both of its names), a text file of the candidate (binary and large
 * files are not patched), create only what does not exist, delete only with hunks that remove
 * the whole file, and apply exactly; the result must be a valid tree (no file that is also a
 * folder, at most MAX_FILES files) that leaves every protected file as it was.
 */
async function applyDiff(r: Parameters<typeof pendingRevision>[0], pending: Pending, diff: string): Promise<Applied | { error: string }> {
  let patches;
  try {
    patches = parsePatch(diff);
  } catch (err) {
    return { error: `Not a unified diff: ${(err as Error).message}` };
  }
  const text = new Map(Object.entries((await loadTree(r, pending.candidate.manifest)).text));
  const present = new Set(pending.candidate.manifest.map((e) => e.path));
  const written = new Set<string>();
  const changed = new Set<string>();
  let sections = 0;
  for (const p of patches) {
    const names = [p.oldFileName, p.newFileName].filter((n): n is string => !!n);
    if (names.length === 0) {
      if (p.hunks.length) return { error: 'A section of the patch has hunks but names no file (--- and +++ lines).' };
      continue;
    }
    sections++;
    const creating = p.oldFileName === DEV_NULL;
    const deleting = p.newFileName === DEV_NULL;
    if (creating && deleting) return { error: 'A section of the patch goes from /dev/null to /dev/null.' };
    const paths: string[] = [];
    for (const n of names.filter((x) => x !== DEV_NULL)) {
      const inside = projectPath(n.replace(/^[ab]\//, ''));
      if ('error' in inside)
        return {
          error: `The patch names a path outside the project: ${JSON.stringify(n.slice(0, 200))} (${inside.error.replace(/^Not a path inside the project: /, '')})`,
        };
      paths.push(inside.path);
    }
    const name = paths[paths.length - 1]!;
    if (paths.length === 2 && paths[0] !== paths[1])
      return {
        error: `The patch renames ${paths[0]} to ${name}: renames are not supported; delete the one (+++ /dev/null) and create the other (--- /dev/null).`,
      };
    const exists = present.has(name);
    if (exists && !text.has(name)) return { error: `${name} is a binary or large file of the candidate: a patch cannot change it.` };
    if (creating && exists)
      return { error: `The patch creates ${name}, which the candidate already has: change it with --- a/${name} instead.` };
    if (deleting && !exists) return { error: `The patch deletes ${name}, which is not in the candidate.` };
    const before = text.get(name) ?? '';
    let after: string | false;
    try {
      after = applyPatch(before, p);
    } catch (err) {
      return { error: `The patch does not apply to ${name}: ${(err as Error).message}` };
    }
    if (after === false) return { error: `The patch does not apply to ${name} (its context lines do not match the candidate).` };
    if (deleting) {
      if (after !== '') return { error: `The patch deletes ${name} (+++ /dev/null) but its hunks do not remove the whole file.` };
      text.delete(name);
      present.delete(name);
      written.delete(name);
      changed.add(name);
    } else if (after !== before || !exists) {
      text.set(name, after);
      present.add(name);
      written.add(name);
      changed.add(name);
    }
  }
  if (sections === 0) return { error: 'Not a unified diff: no file sections found (--- a/path and +++ b/path lines).' };
  const touched = [...changed].filter((p) => pending.protectedFiles.includes(p)).sort();
  if (touched.length)
    return {
      error: `The patch touches ${touched.join(', ')}, which no revision may change (the evaluation script or a file the plan freezes).`,
    };
  if (changed.size === 0) return { error: 'The patch changes nothing.' };
  if (present.size > MAX_FILES) return { error: `The patch leaves ${present.size} files; a candidate has at most ${MAX_FILES}.` };
  try {
    checkTree([...present].map((path) => ({ path, sha256: '', size: 0, mode: 0 })));
  } catch (err) {
    return { error: `The patched tree is not valid: ${(err as Error).message}` };
  }
  const original = new Set(pending.candidate.manifest.map((e) => e.path));
  return {
    tree: Object.fromEntries([...written].map((p) => [p, text.get(p)!])),
    removed: [...original].filter((p) => !present.has(p)),
    changed: [...changed].sort(),
  };
}

const DEV_NULL = '/dev/null';

export const PREPARER: AgentDef = {
  name: 'preparer',
  instructions: `You are the preparer of ChatGPU: a required preparation step (a migration or an adaptation of the user's code for the hardware that will run it) was rejected.
You get the feedback: compiler errors with file and line, the numerical comparison with the reference, or the failure output.
Read the rejected candidate's files (read_candidate_file) and, when useful, what similar cases of the same transformation did (similar_preparations: known failures and their fixes), then either propose a fix as a unified diff against them (propose_patch) — keep the program's behaviour; never touch the evaluation script, the acceptance criteria or frozen files — or stop with a plain explanation (give_up) when you cannot fix it.
Call propose_patch or give_up once.`,
  tools: [readCandidateFile, similarPreparationsTool, proposePatch, stopPreparation],
};
