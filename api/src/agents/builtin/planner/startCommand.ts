/**
 * Rule: how the command starts. As the README runs it: `python -m pkg.train` keeps the package
 * importable (a file path would not). A script in a folder that reads paths relative to that folder
 * (`load_data(path="../data/cora/")`) runs from there (its outputs/ arguments pointed back at the
 * run folder), with the project's root on the import path when it imports its own package. From the
 * root, a script in a folder that imports a root-level package gets the root on its import path.
 * A notebook runs as `python -m chatgpu.notebook PATH` (its settings are `--set NAME=VALUE` arguments).
 */
import { NOTEBOOK_RUNNER } from '../../planner/analyzeProject.js';
import { folderOf, type PlannerRule } from './planning.js';
import { usageOf } from './scriptRoles.js';

export const startCommand: PlannerRule = (p) => {
  const { entry, facts, uploaded, args, readOf } = p;
  // A notebook runs with the worker's notebook runner, from the root (it runs the cells in the notebook's folder).
  if (entry.kind === 'notebook') {
    p.runner = `${NOTEBOOK_RUNNER} ${entry.path}`;
    p.command = [p.runner, ...args].join(' ');
    return undefined;
  }
  const usage = usageOf(facts, entry);
  const home = usage?.module
    ? null
    : startsIn(
        entry.path,
        [p.source, ...p.localFiles.map((x) => readOf(x) ?? '')].join('\n'),
        uploaded,
        facts.importsByFile[entry.path]?.local ?? [],
      );
  if (home)
    for (let i = 0; i < args.length; i++) args[i] = args[i]!.replace(/^(--[\w-]+=)?(['"]?)outputs(\/|$)/, `$1$2${home.up}outputs$3`);
  // From the root, a script in a folder does not see the project's root-level packages (`from mingpt.model import GPT` in projects/chargpt/): put the root on the import path.
  const rootPackage =
    !home &&
    folderOf(entry.path) &&
    (facts.importsByFile[entry.path]?.local ?? []).some((m) => {
      const top = m.split('.')[0]!;
      return [...uploaded].some((u) => u.startsWith(`${top}/`)) && top !== folderOf(entry.path).split('/')[0];
    });
  p.runner = usage?.module
    ? `python -m ${usage.module}`
    : home
      ? `cd ${home.dir} && ${home.pythonPath ? `PYTHONPATH="${home.up.replace(/\/$/, '')}:$PYTHONPATH" ` : ''}python ${entry.path.split('/').pop()}`
      : rootPackage
        ? `PYTHONPATH=".:$PYTHONPATH" python ${entry.path}`
        : `python ${entry.path}`;
  p.command = [p.runner, ...args].join(' ');
  return undefined;
};

/**
 * Where a script in a folder must start: its folder, when it (or a module of the project it imports)
 * reads a literal `../` path that exists from there (pygcn's `../data/cora/`); `up` is the way back to
 * the run folder, and `pythonPath` says the root goes on the import path (it imports its own package,
 * `from pygcn.utils import …`). Null: it runs from the root as `python DIR/FILE`.
 */
export function startsIn(
  entryPath: string,
  text: string,
  uploaded: ReadonlySet<string>,
  localImports: readonly string[],
): { dir: string; up: string; pythonPath: boolean } | null {
  const dir = entryPath.split('/').slice(0, -1).join('/');
  if (!dir) return null;
  const up = '../'.repeat(dir.split('/').length);
  const resolves = (ref: string) => {
    const parts = [...dir.split('/')];
    for (const seg of ref.split('/')) {
      if (seg === '..') parts.pop();
      else if (seg && seg !== '.') parts.push(seg);
    }
    const target = parts.join('/');
    return target !== '' && [...uploaded].some((u) => u === target || u.startsWith(`${target}/`));
  };
  if (![...text.matchAll(/['"](\.\.\/[^'"\n]*)['"]/g)].some((m) => resolves(m[1]!))) return null;
  const top = dir.split('/')[0]!;
  return { dir, up, pythonPath: localImports.some((m) => m === top || m.startsWith(`${top}.`)) };
}
