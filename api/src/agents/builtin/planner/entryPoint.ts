/**
 * Rule: what runs. Of the project's entry points, not evaluation or test scripts, merge programs,
 * packaging (setup.py) or data-preparation scripts (those are steps before the run, pipelineSteps.ts):
 * the one the request names by path; else the only one left; else the one the README or Makefile
 * runs (the only one, or the only one whose name the request uses as a word, or — a pipeline the
 * README runs in order — the one left when the others only make data for a later one); else, for
 * "train …", the only one that saves a checkpoint and takes a run length; else the only one whose
 * name the request uses as a word; else the user is asked which. Its source is read, every page.
 */
import { PACKAGING_RE, type EntryPoint } from '../../planner/analyzeProject.js';
import { flagName } from './flags.js';
import { call, type PlannerRule } from './planning.js';
import { MERGE_SCRIPT_RE, PREPARE_RE, preparedFiles, usageOf, usageOrder } from './scriptRoles.js';
import { RUN_LENGTH_RE } from './workload.js';

export const entryPoint: PlannerRule = (p) => {
  const { facts, request, readCall, readOf, readsAny } = p;
  const eps = facts.entryPoints;
  if (eps.length === 0) {
    return call('give_up', {
      reason:
        'No entry point: no Python file has an `if __name__ == "__main__":` block or runs code at its top level, and there is no notebook, so there is nothing to run. Add one, or say which file to run.',
    });
  }
  const named = eps.filter((e) => !PREPARE_RE.test(e.path) && (request.includes(e.path) || request.includes(e.path.split('/').pop()!)));
  // Not the run: evaluation and test scripts, merge programs, packaging (setup.py).
  const notEval = eps.filter(
    (e) =>
      !/(^|\/)(eval|evaluate|test|tests?_)[^/]*\.py$|(^|\/)test_[^/]*\.py$/i.test(e.path) &&
      !PACKAGING_RE.test(e.path) &&
      !MERGE_SCRIPT_RE.test(e.path),
  );
  const primary = notEval.some((e) => !PREPARE_RE.test(e.path)) ? notEval.filter((e) => !PREPARE_RE.test(e.path)) : notEval;
  let entry: EntryPoint | undefined = named.length === 1 ? named[0] : primary.length === 1 ? primary[0] : undefined;
  // (Several named: the one whose name the request uses as a word, e.g. "train …" → lmtool/train.py.)
  if (!entry && named.length === 0) {
    const byUsage = primary.filter((e) => usageOf(facts, e));
    const stem = (e: EntryPoint) => e.path.split('/').pop()!.replace(/\.py$/, '');
    const byWord = byUsage.filter((e) => new RegExp(`\\b${stem(e).replace(/[^\w]/g, '')}`, 'i').test(request));
    if (byUsage.length === 1) entry = byUsage[0];
    else if (byWord.length === 1) entry = byWord[0];
    // A pipeline the README runs in order: the scripts that only make data for a later one are
    // steps (run first, see pipelineSteps.ts); the one left is the run.
    else if (byUsage.length > 1 && byUsage.length <= 5) {
      for (const e of byUsage) if (readCall(e.path)) return call('read_file', readCall(e.path)!);
      // README steps: the scripts whose products one the README runs after them reads.
      const steps = byUsage.filter((e) =>
        byUsage.some(
          (later) => usageOrder(facts, later) > usageOrder(facts, e) && readsAny(later.path, preparedFiles(readOf(e.path) ?? '')),
        ),
      );
      const rest = byUsage.filter((e) => !steps.includes(e));
      if (steps.length > 0 && rest.length === 1) entry = rest[0];
    }
  }
  // "train …": of several scripts, the one that trains (saves a checkpoint and takes a run
  // length), not the one that samples from or evaluates a checkpoint (pytorch/examples'
  // word_language_model: main.py trains, generate.py reads --checkpoint).
  if (!entry && named.length === 0 && /\b(train|fit|fine-?tune)/i.test(request)) {
    const trains = primary.filter((e) => e.savesCheckpoint && e.flags.some((f) => RUN_LENGTH_RE.test(flagName(f))));
    if (trains.length === 1) entry = trains[0];
  }
  // Of several scripts, the only one whose name the request uses as a word ("Train chargpt …" → projects/chargpt/chargpt.py).
  if (!entry && named.length === 0) {
    const stem = (e: EntryPoint) =>
      e.path
        .split('/')
        .pop()!
        .replace(/\.(py|ipynb)$/, '')
        .replace(/[^\w]/g, '');
    const byWord = primary.filter((e) => new RegExp(`\\b${stem(e)}`, 'i').test(request));
    if (byWord.length === 1) entry = byWord[0];
  }
  if (!entry) {
    const choices = (primary.length ? primary : eps).map((e) => e.path);
    const answer = p.answerTo('Which script');
    if (!answer)
      return call('ask_user', {
        question: `Which script should run? The project has several entry points: ${choices.join(', ')}.`,
        choices,
      });
    const said = answer.split(':').pop() ?? '';
    entry =
      (primary.length ? primary : eps).find((e) => said.includes(e.path)) ??
      (primary.length ? primary : eps).find((e) => said.includes(e.path.split('/').pop()!));
    if (!entry) return call('give_up', { reason: `The answer "${said.trim()}" names none of ${choices.join(', ')}.` });
  }
  if (readCall(entry.path)) return call('read_file', readCall(entry.path)!);
  p.entry = entry;
  p.source = readOf(entry.path) ?? '';
  return undefined;
};
