/**
 * Rule: a pipeline. A data-preparation script (prepare.py, preprocess.py, …, or a script the README
 * runs before the entry point) whose products the entry point reads, and the upload does not
 * already hold, runs first as its own step (`before`, named prepare-data), from its own folder; its
 * products are handed to the run. Of several that fit, the one the request or the chosen
 * configuration's dataset names; several and none named → the user is asked which.
 */
import type { EntryPoint } from '../../planner/analyzeProject.js';
import { call, folderOf, type PlannerRule } from './planning.js';
import { PREPARE_RE, preparedFiles, usageOf, usageOrder } from './scriptRoles.js';

export const pipelineSteps: PlannerRule = (p) => {
  const { facts, entry, request, uploaded, configSettings, readCall, readOf, readsAny } = p;
  const eps = facts.entryPoints;
  const prepares = eps.filter((e) => PREPARE_RE.test(e.path));
  // Scripts the README runs before the entry point are candidates too (if the entry reads what they write).
  const runBefore = usageOf(facts, entry)
    ? eps
        .filter((e) => e !== entry && !prepares.includes(e) && usageOf(facts, e) && usageOrder(facts, e) < usageOrder(facts, entry))
        .slice(0, 5)
    : [];
  for (const e of runBefore) if (readCall(e.path)) return call('read_file', readCall(e.path)!);
  const prepCandidates = [
    ...prepares
      .filter((e) => e !== entry)
      .filter((e, _i, all) => {
        const dataset = (x: EntryPoint) => folderOf(x.path).split('/').pop()!;
        // Named by the request, or by the chosen configuration's dataset setting.
        const namedPrep = all.filter(
          (x) => request.includes(x.path) || (folderOf(x.path) && (request.includes(dataset(x)) || configSettings.dataset === dataset(x))),
        );
        return namedPrep.length ? namedPrep.includes(e) : true;
      }),
    ...runBefore,
  ];
  for (const e of prepCandidates.slice(0, 5)) if (readCall(e.path)) return call('read_file', readCall(e.path)!);
  const needed = prepCandidates
    .map((e) => ({ e, products: preparedFiles(readOf(e.path) ?? '') }))
    // Not needed when the upload already holds what it makes — beside the script, or from the root (a README or dvc.yaml runs it from there).
    // (A bare file name the script joins to a folder at run time, `os.path.join(out, "train.pkl")`: anywhere in the upload.)
    // Only what the run reads of it counts (the script's literal names include its own inputs).
    .filter(({ e, products }) => {
      const read = products.filter((f) => readsAny(entry.path, [f]));
      return (
        read.length > 0 &&
        !read.every((f) =>
          [folderOf(e.path) ? `${folderOf(e.path)}/${f}` : f, f].some(
            (q) =>
              uploaded.has(q) ||
              [...uploaded].some((u) => u.startsWith(`${q.replace(/\/$/, '')}/`) || (!q.includes('/') && u.endsWith(`/${q}`))),
          ),
        )
      );
    });
  if (!needed.length) return undefined;
  let chosen = needed.length === 1 ? needed[0] : undefined;
  if (!chosen) {
    const choices = needed.map(({ e }) => e.path);
    const answer = p.answerTo('prepared first');
    if (!answer)
      return call('ask_user', {
        question: `Which data should be prepared first? ${entry.path} reads files that several scripts write: ${choices.join(', ')}.`,
        choices,
      });
    const said = answer.split(':').pop() ?? '';
    chosen = needed.find(({ e }) => said.includes(e.path)) ?? needed.find(({ e }) => folderOf(e.path) && said.includes(folderOf(e.path)));
    if (!chosen) return call('give_up', { reason: `The answer "${said.trim()}" names none of ${choices.join(', ')}.` });
  }
  const dir = folderOf(chosen.e.path);
  p.prepareScript = chosen.e.path;
  p.before = [
    {
      name: 'prepare-data',
      // Run where the script lives, so its relative paths and __file__-relative paths agree.
      command: dir ? `cd ${dir} && python ${chosen.e.path.split('/').pop()}` : `python ${chosen.e.path}`,
      produces: dir ? [dir] : chosen.products,
    },
  ];
  return undefined;
};
