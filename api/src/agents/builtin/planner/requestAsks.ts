/**
 * Rule: every ask of the request (planner/asks), matched against the settings of what will run —
 * the entry point and the preparation script before it, every page of list_settings — and
 * honoured by a flag, an override, an environment variable, a rewritten literal or an output
 * collected; or asked about; or refused naming what the project has (disposeAsks.ts). The entry
 * point's own modules are read first when they may decide what the run makes or where it starts.
 * A refused setting, sweep, output or target stops the job before anything runs.
 */
import { parseAsks } from '../../planner/asks/parseAsks.js';
import type { SettingsSurface } from '../../planner/contract.js';
import type { AskDisposition } from '../../../domain/jobs/planSchema.js';
import { isCollected } from '../../../domain/jobs/planSchema.js';
import { BLOCKING_KINDS, disposeAsks } from './disposeAsks.js';
import { flagName } from './flags.js';
import { call, folderOf, type PlannerRule, type Threshold } from './planning.js';

export const requestAsks: PlannerRule = (p) => {
  const { entry, request, out, facts, uploaded, readCall, readOf } = p;
  const asks = parseAsks(request);
  p.asks = asks;
  let surface: SettingsSurface | null = null;
  if (asks.some((a) => a.kind === 'setting' || a.kind === 'sweep')) {
    const pages = (out.get('list_settings') ?? []) as (SettingsSurface & { next?: number | null; error?: string })[];
    const settings: SettingsSurface['settings'] = [];
    const problems: SettingsSurface['problems'] = [];
    // A failed read is not retried (the loop would refuse the same call): plan with what was read, and say why.
    const failed = pages.find((x) => x && typeof x === 'object' && typeof x.error === 'string');
    if (failed) problems.push({ file: entry.path, error: `its settings could not be read: ${failed.error}` });
    for (const script of failed ? [] : [entry.path, ...(p.prepareScript ? [p.prepareScript] : [])]) {
      const mine = pages.filter((x) => x && typeof x === 'object' && x.entry === script && Array.isArray(x.settings));
      if (mine.length === 0) return call('list_settings', { entry: script });
      const lastPage = mine.at(-1)!;
      if (typeof lastPage.next === 'number') return call('list_settings', { entry: script, offset: lastPage.next });
      for (const x of mine) settings.push(...x.settings.filter((s) => !settings.some((y) => y.id === s.id)));
      problems.push(...(lastPage.problems ?? []));
    }
    surface = { entry: entry.path, settings, problems };
  }
  const capCad = Number(/Spending cap:\s*([\d.]+)\s*CAD/.exec(p.task)?.[1] ?? NaN);
  // What the entry point's own modules do (they may draw the figures or save the model): read them first.
  p.localFiles = (facts.importsByFile[entry.path]?.local ?? [])
    .flatMap((m) => {
      const x = m.replace(/\./g, '/');
      const dir = folderOf(entry.path);
      return [`${x}.py`, `${x}/__init__.py`, ...(dir ? [`${dir}/${x}.py`] : [])];
    })
    .filter((x, i, all) => uploaded.has(x) && all.indexOf(x) === i)
    .slice(0, 6);
  // Read them too when they may decide where the run must start (a script in a folder) or what it makes.
  if (asks.some((a) => a.kind === 'output') || folderOf(entry.path))
    for (const x of p.localFiles) if (readCall(x)) return call('read_file', readCall(x)!);
  // Thresholds the request writes ("accuracy above 0.9"); the asks rule adds the ones it reads otherwise.
  p.metrics = requestThresholds(request);
  const askStep = disposeAsks({
    request,
    asks,
    surface,
    entry: entry.path,
    keyValue: entry.cli === 'configurator',
    args: p.args,
    positionals: p.positionals,
    read: readOf,
    uploaded,
    runSource: [p.source, ...p.localFiles.map((x) => readOf(x) ?? '')].join('\n'),
    checkpoint: p.checkpoint,
    saveFlags: entry.flags
      .filter(
        (f) =>
          /^(save|save-path|out|output|output-path|save-model|checkpoint|ckpt|model-path|model|out-file|output-file)$/.test(flagName(f)) &&
          f.type !== 'bool' &&
          !/^store_(true|false)$/.test(f.action ?? ''),
      )
      .map((f) => ({ flag: f.flag, default: f.default })),
    writes: p.writes,
    thresholds: p.metrics.map((m) => m.name),
    hardware: p.hardware,
    onlineSummary: p.cap.summary,
    capCad: Number.isFinite(capCad) ? capCad : null,
    targets: [entry.path, ...(p.configFile ? [p.configFile] : [])],
    setupSteps: p.before.map((b) => b.command),
    answerTo: p.answerTo,
  });
  if (askStep.need === 'read') return call('read_file', readCall(askStep.path) ?? { path: askStep.path });
  if (askStep.need === 'ask')
    return call('ask_user', { question: askStep.question, ...(askStep.choices.length ? { choices: askStep.choices } : {}) });
  const askPlan = askStep.plan;
  p.askPlan = askPlan;
  p.args = [...askPlan.args];
  if (askPlan.checkpoint) {
    p.checkpoint = askPlan.checkpoint;
    if (!isCollected({ outputs: [...p.outputs] }, p.checkpoint)) p.outputs.add(p.checkpoint);
  }
  for (const o of askPlan.outputs) if (!isCollected({ outputs: [...p.outputs] }, o)) p.outputs.add(o);
  for (const f of askPlan.required) if (!p.resultFiles.includes(f)) p.resultFiles.push(f);
  const blocked = askPlan.dispositions.filter((d) => d.status === 'refused' && BLOCKING_KINDS.has(d.kind));
  if (blocked.length) return call('give_up', { reason: refusalWords(entry.path, askPlan.dispositions) });
  return undefined;
};

/** "accuracy above 0.9", "loss below 0.5" → thresholds on those metrics. */
export function requestThresholds(request: string): Threshold[] {
  return [
    ...request.matchAll(
      /\b(accuracy|acc|loss|val[_ ]?loss|f1|auc)\s+(?:of\s+)?(above|over|greater than|at least|>=?|below|under|less than|at most|<=?)\s*([\d.]+)/gi,
    ),
  ].map((m) => ({
    name: m[1]!.toLowerCase().replace(/\s/g, '_'),
    op: /above|over|greater|>$/.test(m[2]!) ? '>' : /at least|>=/.test(m[2]!) ? '>=' : /at most|<=/.test(m[2]!) ? '<=' : '<',
    value: Number(m[3]),
  }));
}

/** Why the job stops before anything runs: each refused ask with its reason, and what was understood. */
export function refusalWords(entry: string, dispositions: AskDisposition[]): string {
  const refused = dispositions.filter((d) => d.status === 'refused');
  const honoured = dispositions.filter((d) => d.status === 'honoured');
  return `Not run: ${refused.map((d) => `"${d.ask}" — ${d.detail}`).join('; ')}.${honoured.length ? ` Understood: ${honoured.map((d) => `"${d.ask}" (${d.detail})`).join('; ')}.` : ''} Ask again with what ${entry} can do, and nothing runs until every part of the request can be honoured.`.slice(
    0,
    2000,
  );
}
