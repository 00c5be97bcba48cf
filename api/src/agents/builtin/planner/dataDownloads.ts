/**
 * Rule: data downloads (issue 38, docs/data-downloads.md). Tasks have no network; a step that
 * fetches data gets it only when the plan marks it as a data download (`network: 'download'`, with
 * the URLs the code names), and the main run never does.
 *   - The preparation step (pipelineSteps) runs a script that downloads → that step is marked.
 *   - The entry point itself downloads a torchvision dataset with literal arguments
 *     (`datasets.MNIST('data', train=True, download=True)`) → a separate download-data step runs
 *     exactly those calls from the run's folder first, and hands the dataset's root to the run,
 *     where the same call finds the files and downloads nothing.
 *   - Any other download inside the run (a URL fetched by the entry point, or by a module it imports)
 *     cannot have the network: the plan says so, naming the call and the URLs.
 * Runs after startCommand (the run's folder is known).
 */
import path from 'node:path/posix';
import type { DataDownload } from '../../planner/analyzeProject.js';
import { type PlannerRule } from './planning.js';

const urlWords = (urls: string[]) =>
  urls.length ? urls.slice(0, 5).join(', ') + (urls.length > 5 ? ', …' : '') : 'URLs the code builds at run time';

export const dataDownloads: PlannerRule = (p) => {
  const downloads = p.facts.downloads ?? [];
  if (!downloads.length) return undefined;
  const words: string[] = [];
  const of = (script: string | null) => (script ? downloads.find((d) => d.script === script) : undefined);
  // The preparation script fetches: its step is the download.
  const prep = of(p.prepareScript);
  for (const step of p.before)
    if (prep && step.name === 'prepare-data') {
      step.network = 'download';
      step.urls = prep.urls;
      words.push(
        `${prep.script} downloads its data (${kinds(prep)}; from ${urlWords(prep.urls)}), so \`${step.command}\` runs as its own step with the network — the only one that has it; the run has none. Its result is cached on the worker by URL and script, so the same data is not downloaded twice.`,
      );
    }
  const inRun = [p.entry.path, ...(p.facts.importsByFile[p.entry.path]?.local ?? []).map((m) => `${m.replace(/\./g, '/')}.py`)]
    .map((s) => of(s))
    .filter((d): d is DataDownload => !!d);
  for (const d of inRun) {
    const replay = d === of(p.entry.path) ? replayStep(d, p.runner) : null;
    if (replay) {
      p.before.unshift(replay);
      words.push(
        `${d.script} downloads ${d.calls.map((c) => c.call.replace(/\(.*$/, '')).join(', ')} itself (download=True) but the run has no network: a download-data step first runs those calls alone (\`${replay.command}\`) with the network, and hands ${replay.produces.join(', ')} to the run, where they find the files and download nothing.`,
      );
    } else
      words.push(
        `${d.script} downloads data while it runs (line ${d.calls.map((c) => `${c.line}: ${c.call.slice(0, 80)}`).join('; line ')}; from ${urlWords(d.urls)}), but the run has no network, so that fails there: move the download into a prepare script (prepare.py), or upload the data with the code.`,
      );
  }
  p.downloads = words;
  return undefined;
};

const kinds = (d: DataDownload) => [...new Set(d.calls.map((c) => c.kind))].join(', ');

/**
 * The torchvision calls of `d` (all replayable) as one step run from the run's folder (`cd X &&`
 * of its runner), producing the datasets' roots; null when one is not replayable, quoting would be
 * needed, or a root lies outside the project.
 */
function replayStep(d: DataDownload, runner: string) {
  if (!d.calls.length || d.calls.some((c) => !c.replay || !c.root || /["$`\\]/.test(c.replay))) return null;
  const cwd = /^cd\s+([\w./-]+)\s*&&/.exec(runner)?.[1] ?? '';
  const roots = [...new Set(d.calls.map((c) => path.normalize(path.join(cwd || '.', c.root!)).replace(/\/$/, '')))];
  if (roots.some((r) => r === '.' || r === '..' || r.startsWith('../') || path.isAbsolute(r))) return null;
  const code = ['import torchvision', ...new Set(d.calls.map((c) => c.replay!.replace(/^import torchvision;\s*/, '')))].join('; ');
  return {
    name: 'download-data',
    command: `${cwd ? `cd ${cwd} && ` : ''}python -c "${code}"`,
    produces: roots,
    network: 'download' as const,
    urls: d.urls,
  };
}
