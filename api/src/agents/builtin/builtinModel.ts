/**
 * The builtin model: deterministic rules that read the project (through the same tools
 * a model would call) and emit the same tool calls, so the whole product works with no
 * API key and no network. It understands (see the README):
 *   - Python scripts with an `if __name__ == "__main__":` block, their argparse flags for
 *     epochs/steps, device, seed and save/output paths, and literal torch.save paths;
 *   - requirements.txt / pyproject / environment.yml pins of torch and numpy checked
 *     against the online workers' versions (it asks, or stops naming pin and versions);
 *   - several plausible entry points (it asks which), evaluation scripts (used to reload
 *     the checkpoint), data folders shipped with the code, dependency-free simulations;
 *   - metric thresholds written like "accuracy above 0.9" or "loss below 0.5".
 * It does not understand notebooks, multi-process launchers, custom config systems
 * (Hydra, YAML-driven runs), or packages other than torch/numpy being missing.
 */
import { checkableOutputs } from './checkableOutputs.js';
import { randomUUID } from 'node:crypto';
import type { ArgFlag, EntryPoint, ProjectFacts } from '../planner/analyzeProject.js';
import { satisfies } from '../planner/analyzeProject.js';
import { importsOf, type DependencyCheck } from '../planner/resolveImports.js';
import type { TorchApiCheck } from '../planner/torchApis.js';
import { isCollected } from '../../domain/jobs/planSchema.js';
import { mergeWords } from '../../domain/jobs/shards.js';
import { proposeShards, proposeSweep, sweepFlag } from './planner/proposeShards.js';
import { proposeBatch, proposeDriver, proposeRanges, readMergeScript, topLevelLoop, unitSeconds, type MergeScript } from './planner/shardShapes.js';
import { splitCsv } from '../../domain/jobs/shardMerge.js';
import type { WorkerClass } from '../../domain/workers/networkCapacity.js';
import type { Item, ModelClient, ModelRequest, ModelResponse } from '../models/types.js';
import { decideSupervisor } from '../supervisor/builtinSupervisor.js';
import { ENDPOINT_REQUEST, requestedDuration } from '../planner/serviceApp.js';
import { serviceDocs, servicePlanParts, withSetupSteps } from './planner/serviceSetup.js';
import { parseAsks } from '../planner/asks/parseAsks.js';
import type { Ask, SettingsSurface } from '../planner/contract.js';
import { BLOCKING_KINDS, disposeAsks, shellWord, type AskPlan } from './planner/disposeAsks.js';
import { SWEEP_TABLE, sweepRuns } from './planner/sweepRuns.js';
import type { AskDisposition } from '../../domain/jobs/planSchema.js';

export function createBuiltinClient(): ModelClient {
  return {
    name: 'builtin',
    respond: async (req: ModelRequest): Promise<ModelResponse> => ({ status: 'completed', output: decide(req) }),
  };
}

type Outputs = Map<string, unknown[]>;

function toolOutputs(history: Item[]): Outputs {
  const names = new Map<string, string>();
  const out: Outputs = new Map();
  for (const i of history) {
    if (i.type === 'function_call') names.set(i.call_id, i.name);
    if (i.type === 'function_call_output') {
      const name = names.get(i.call_id);
      if (!name) continue;
      let v: unknown;
      try {
        v = JSON.parse(i.output);
      } catch {
        v = i.output;
      }
      out.set(name, [...(out.get(name) ?? []), v]);
    }
  }
  return out;
}

const call = (name: string, args: Record<string, unknown>): Item[] => [{ type: 'function_call', call_id: `call_${randomUUID()}`, name, arguments: JSON.stringify(args) }];
/** submit_plan with its words within the schema's bounds (a sweep's chained command in a step is long). */
const submit = (plan: Record<string, unknown> & { steps: string[] }): Item[] => call('submit_plan', { ...plan, steps: plan.steps.map((st) => (st.length > 500 ? `${st.slice(0, 499)}…` : st)) });
/** The workloads a torch check may target, in the order a plan prefers them (step 3 below). */
const TORCH_WORKLOADS = ['torch-cuda', 'torch-rocm', 'torch-mps', 'torch-cpu'];
const say = (text: string): Item[] => [{ type: 'message', role: 'assistant', content: text }];

function decide(req: ModelRequest): Item[] {
  const agent = /^You are the (\w+)/.exec(req.instructions)?.[1] ?? 'planner';
  const history = req.input;
  const out = toolOutputs(history);
  const last = <T>(name: string) => out.get(name)?.at(-1) as T | undefined;
  const userText = history.filter((i): i is Extract<Item, { type: 'message' }> => i.type === 'message' && i.role === 'user').map((m) => m.content);

  if (agent === 'supervisor') return decideSupervisor(history, out);
  if (agent === 'preparer') {
    // No rules for repairing a rejected candidate: stop with the feedback, in words.
    const feedback = [...userText].reverse()[0] ?? 'no feedback';
    return call('give_up', { reason: `The builtin model cannot revise this candidate (set OPENAI_API_KEY for a model that can propose patches). ${feedback.slice(0, 1500)}` });
  }
  if (agent !== 'planner') {
    // Specialists: look at the facts, then answer in words.
    if (!last('find_dependencies')) return call('find_dependencies', {});
    const facts = last<ProjectFacts>('find_dependencies')!;
    if (agent === 'dependencies' && !last('network_capacity')) return call('network_capacity', {});
    if (agent === 'validation') {
      const ep = facts.entryPoints.find((e) => e.savesCheckpoint);
      return say(
        ep
          ? `Require exit code 0 and the checkpoint among the outputs; then reload the checkpoint on a worker and evaluate it (${facts.entryPoints.some((e) => /eval/i.test(e.path)) ? 'the project has an evaluation script: use it' : 'no evaluation script: use python -m chatgpu.reload_check'}). Add metric thresholds only where the user asked for them.`
          : 'Require exit code 0 and the declared output files; the run saves no checkpoint, so there is nothing to reload.',
      );
    }
    if (agent === 'dependencies') {
      const cap = last<{ summary: string }>('network_capacity')!;
      return say(`Pins: ${facts.pins.map((p) => `${p.name}${p.spec}`).join(', ') || 'none'}. Online: ${cap.summary}. Workers cannot install packages.`);
    }
    return say('The workload runs as one task; splitting it would change its result unless it is a sweep of independent runs.');
  }

  // ── The planner ──
  if (!last('list_files')) return call('list_files', {});
  if (!last('find_dependencies')) return call('find_dependencies', {});
  if (!last('network_capacity')) return call('network_capacity', {});
  const facts = last<ProjectFacts>('find_dependencies')!;
  const cap = last<{ classes: WorkerClass[]; summary: string }>('network_capacity')!;
  const task = userText[0] ?? '';
  const request = /Request:\s*([\s\S]*?)(?:\n[A-Z][\w ]+:|$)/.exec(task)?.[1]?.trim() ?? task;
  const preference = /Hardware preference:\s*(\w+)/.exec(task)?.[1] ?? 'any';
  const answers = userText.slice(1);
  const asked = (out.get('ask_user') ?? []).length;
  const answerTo = (marker: string) => answers.find((a) => a.includes(marker));
  const online = cap.classes.length > 0;

  // A refused plan is not retried blindly: the refusal is the explanation.
  const refused = last<{ error?: string }>('submit_plan');
  if (refused && typeof refused === 'object' && refused.error) return call('give_up', { reason: `The plan could not be accepted: ${refused.error}` });

  // 1. What the workers have. No worker with PyTorch is explained before anything else: no
  // answer to a question could lead to a run, so none is asked.
  const versions = (name: string) => [...new Set(cap.classes.flatMap((c) => (name === 'torch' ? c.torchVersions : name === 'numpy' ? c.numpyVersions : [])))];
  if (online && facts.usesTorch && !cap.classes.some((c) => c.torchVersions.length)) {
    const pin = facts.pins.find((p) => p.name === 'torch');
    return call('give_up', {
      reason: `The project imports torch${pin ? ` (${pin.file} pins torch${pin.spec})` : ''}, but no online worker has PyTorch (online: ${cap.summary}). A worker needs a Python with PyTorch: on Debian/Ubuntu \`apt-get install python3-torch\`, or start the worker with \`--python PATH\` to an interpreter that has it.`,
    });
  }
  // Pins the workers' versions do not meet: run with theirs, or stop. Only offered when the
  // workers have the package at all (otherwise "run anyway" would crash at import).
  // (With no worker online nothing can be compared yet; the queued run will say why it waits.)
  const blocking = online ? facts.pins.filter((p) => (p.name === 'torch' || p.name === 'numpy') && p.spec && versions(p.name).length > 0 && !versions(p.name).some((v) => satisfies(v, p.spec) === true)) : [];
  // A torch pin: which of the project's calls are newer than the workers' torch decides what
  // can be offered — running it as it is, migrating those calls (a checked preparation step),
  // or nothing (a call no rewrite replaces: explained, not asked).
  /** The check whose calls the plan migrates (the user chose the migration), else null. */
  let versionMigrate: TorchApiCheck | null = null;
  if (blocking.length) {
    const sentence = blocking.map((p) => `${p.file} pins ${p.name}${p.spec}, but the online workers have ${p.name} ${versions(p.name).join(', ')}`).join('; ');
    const torchWorkload = blocking.some((p) => p.name === 'torch') ? TORCH_WORKLOADS.find((w) => cap.classes.some((c) => c.workloads.includes(w) && c.torchVersions.length)) : undefined;
    if (torchWorkload && !last('check_torch_apis')) return call('check_torch_apis', { workload: torchWorkload });
    const check = torchWorkload ? last<TorchApiCheck>('check_torch_apis') : undefined;
    if (check?.verdict === 'blocked') return call('give_up', { reason: `${sentence}. ${check.summary}` });
    const migratable = check?.verdict === 'migratable';
    const migrateChoice = `Migrate those calls to torch ${check?.torch} (checked by a bounded run first)`;
    const answer = answerTo('pins');
    if (!answer) {
      return call(
        'ask_user',
        migratable
          ? { question: `${sentence}. ${check.summary} Migrate them and run on the workers' torch, or stop the job?`, choices: [migrateChoice, 'Stop the job'] }
          : { question: `${sentence}.${check?.verdict === 'none' ? ` ${check.summary}` : ''} Run with the workers' versions anyway, or stop the job?`, choices: ["Run with the workers' versions", 'Stop the job'] },
      );
    }
    const chosen = answer.split(':').pop() ?? '';
    if (/stop|cancel|no\b/i.test(chosen)) return call('give_up', { reason: `${sentence}. Stopped at your request.` });
    versionMigrate = migratable && /migrat/i.test(chosen) ? check : null;
    if (migratable && !versionMigrate) return call('give_up', { reason: `${sentence}. ${check.summary} Without that migration the code cannot run on the workers' torch; stopped.` });
  }

  // 1b. An endpoint: the project is an HTTP app to host as a SERVICE (planner/serviceApp.ts).
  if (ENDPOINT_REQUEST.test(request)) return planService(request, out, facts);

  // 2. The entry point.
  const eps = facts.entryPoints;
  if (eps.length === 0) {
    return call('give_up', { reason: 'No entry point: no Python file has an `if __name__ == "__main__":` block or runs code at its top level, so there is nothing to run. Add one, or say which file to run.' });
  }
  // Data-preparation scripts are steps before the run, not the run (see the pipeline below).
  const prepares = eps.filter((e) => PREPARE_RE.test(e.path));
  const named = eps.filter((e) => !PREPARE_RE.test(e.path) && (request.includes(e.path) || request.includes(e.path.split('/').pop()!)));
  // Not the run: evaluation and test scripts, merge programs, packaging (setup.py).
  const notEval = eps.filter((e) => !/(^|\/)(eval|evaluate|test|tests?_)[^/]*\.py$|(^|\/)test_[^/]*\.py$|(^|\/)setup\.py$/i.test(e.path) && !MERGE_SCRIPT_RE.test(e.path));
  const primary = notEval.some((e) => !PREPARE_RE.test(e.path)) ? notEval.filter((e) => !PREPARE_RE.test(e.path)) : notEval;
  let entry: EntryPoint | undefined = named.length === 1 ? named[0] : primary.length === 1 ? primary[0] : undefined;
  // The project's README or Makefile says how to run it: when it names exactly one of them, that one.
  const usageOf = (e: EntryPoint) => facts.usage.find((u) => u.script === e.path);
  const usageOrder = (e: EntryPoint) => facts.usage.findIndex((u) => u.script === e.path);
  // A file is read page by page, each page once; one that came back binary or unreadable reads as ''.
  type Page = { path?: string; offset?: number; content?: string; nextOffset?: number };
  const pagesOf = (p: string) => ((out.get('read_file') ?? []) as Page[]).filter((x) => x && typeof x === 'object' && x.path === p).sort((a, b) => (a.offset ?? 0) - (b.offset ?? 0));
  const readOf = (p: string) => {
    const pages = pagesOf(p);
    return pages.length ? pages.map((x) => x.content ?? '').join('') : undefined;
  };
  /** The read_file call that the next missing page of `p` needs (up to READ_ALL_CHARS), or null when it is all here. */
  const readCall = (p: string): { path: string; offset?: number } | null => {
    const pages = pagesOf(p);
    if (pages.length === 0) return { path: p };
    const next = pages.at(-1)!.nextOffset;
    return typeof next === 'number' && next < READ_ALL_CHARS && !pages.some((x) => x.offset === next) ? { path: p, offset: next } : null;
  };
  /** Does `reader`'s source name a file `products` (a preparation script's literal outputs) holds? */
  const readsAny = (reader: string, products: string[]) => products.some((f) => (readOf(reader) ?? '').includes(f.split('/').pop()!));
  // (Several named: the one whose name the request uses as a word, e.g. "train …" → lmtool/train.py.)
  if (!entry && named.length === 0) {
    const byUsage = primary.filter((e) => usageOf(e));
    const stem = (e: EntryPoint) => e.path.split('/').pop()!.replace(/\.py$/, '');
    const byWord = byUsage.filter((e) => new RegExp(`\\b${stem(e).replace(/[^\w]/g, '')}`, 'i').test(request));
    if (byUsage.length === 1) entry = byUsage[0];
    else if (byWord.length === 1) entry = byWord[0];
    // A pipeline the README runs in order: the scripts that only make data for a later one are
    // steps (run first, below); the one left is the run.
    else if (byUsage.length > 1 && byUsage.length <= 5) {
      for (const e of byUsage) if (readCall(e.path)) return call('read_file', readCall(e.path)!);
      // README steps: the scripts whose products one the README runs after them reads.
      const steps = byUsage.filter((e) => byUsage.some((later) => usageOrder(later) > usageOrder(e) && readsAny(later.path, preparedFiles(readOf(e.path) ?? ''))));
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
    const stem = (e: EntryPoint) => e.path.split('/').pop()!.replace(/\.py$/, '').replace(/[^\w]/g, '');
    const byWord = primary.filter((e) => new RegExp(`\\b${stem(e)}`, 'i').test(request));
    if (byWord.length === 1) entry = byWord[0];
  }
  if (!entry) {
    const choices = (primary.length ? primary : eps).map((e) => e.path);
    const answer = answerTo('Which script');
    if (!answer) return call('ask_user', { question: `Which script should run? The project has several entry points: ${choices.join(', ')}.`, choices });
    const said = answer.split(':').pop() ?? '';
    entry = (primary.length ? primary : eps).find((e) => said.includes(e.path)) ?? (primary.length ? primary : eps).find((e) => said.includes(e.path.split('/').pop()!));
    if (!entry) return call('give_up', { reason: `The answer "${said.trim()}" names none of ${choices.join(', ')}.` });
  }
  if (readCall(entry.path)) return call('read_file', readCall(entry.path)!);
  const source = readOf(entry.path) ?? '';

  // 2a. A nanoGPT-style configurator takes config files (positional) and --key=value overrides:
  // the config the request names, or ask which (the script's own defaults are a choice too).
  const uploaded = new Set((last<{ files: { path: string }[] }>('list_files')?.files ?? []).map((f) => f.path));
  let configFile: string | null = null;
  let configSettings: Record<string, string> = {};
  if (entry.cli === 'configurator') {
    const configs = [...uploaded].filter((p) => /(^|\/)configs?\/[^/]+\.py$/.test(p)).sort();
    const stem = (c: string) => c.split('/').pop()!.replace(/\.py$/, '');
    // A config named by its path wins; else by its name as a whole word (`shakespeare` is not named by `train_shakespeare_char`).
    const word = (w: string) => new RegExp(`(^|[^\\w/])${w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w])`).test(request);
    const byPath = configs.filter((c) => request.includes(c));
    const namedCfg = byPath.length ? byPath : configs.filter((c) => word(stem(c)) || word(stem(c).replace(/^(train|finetune|eval|sample)_/, '')));
    if (namedCfg.length === 1) configFile = namedCfg[0]!;
    else if (configs.length) {
      const defaults = `${entry.path}'s own defaults`;
      const choices = [...(namedCfg.length ? namedCfg : configs), defaults];
      const answer = answerTo('Which configuration');
      if (!answer) return call('ask_user', { question: `Which configuration should ${entry.path} run with? It takes a config file (${configs.join(', ')}) and --key=value overrides.`, choices });
      const said = answer.split(':').pop() ?? '';
      configFile = choices.find((c) => c !== defaults && said.includes(c)) ?? configs.find((c) => said.includes(stem(c))) ?? null;
    }
    if (configFile) {
      if (readCall(configFile)) return call('read_file', readCall(configFile)!);
      const text = readOf(configFile) ?? '';
      configSettings = Object.fromEntries([...text.matchAll(/^([A-Za-z_]\w*)\s*=\s*(['"]?)([^'"#\n]*?)\2\s*(?:#.*)?$/gm)].map((m) => [m[1]!, m[3]!.trim()]));
    }
  }

  // 2b. A pipeline: a data-preparation script whose products the entry point reads (and the
  // upload does not already hold) runs first, as its own step; its products are handed to the
  // run. Several that fit and none named → ask which.
  const folderOf = (p: string) => p.split('/').slice(0, -1).join('/');
  // Scripts the README runs before the entry point are candidates too (if the entry reads what they write).
  const runBefore = usageOf(entry) ? eps.filter((e) => e !== entry && !prepares.includes(e) && usageOf(e) && usageOrder(e) < usageOrder(entry!)).slice(0, 5) : [];
  for (const e of runBefore) if (readCall(e.path)) return call('read_file', readCall(e.path)!);
  const prepCandidates = [...prepares.filter((e) => e !== entry).filter((e, _i, all) => {
    const dataset = (x: EntryPoint) => folderOf(x.path).split('/').pop()!;
    // Named by the request, or by the chosen configuration's dataset setting.
    const namedPrep = all.filter((x) => request.includes(x.path) || (folderOf(x.path) && (request.includes(dataset(x)) || configSettings.dataset === dataset(x))));
    return namedPrep.length ? namedPrep.includes(e) : true;
  }), ...runBefore];
  for (const e of prepCandidates.slice(0, 5)) if (readCall(e.path)) return call('read_file', readCall(e.path)!);
  const needed = prepCandidates
    .map((e) => ({ e, products: preparedFiles(readOf(e.path) ?? '') }))
    // Not needed when the upload already holds what it makes — beside the script, or from the root (a README or dvc.yaml runs it from there).
    // (A bare file name the script joins to a folder at run time, `os.path.join(out, "train.pkl")`: anywhere in the upload.)
    // Only what the run reads of it counts (the script's literal names include its own inputs).
    .filter(({ e, products }) => {
      const read = products.filter((f) => readsAny(entry!.path, [f]));
      return read.length > 0 && !read.every((f) => [folderOf(e.path) ? `${folderOf(e.path)}/${f}` : f, f].some((q) => uploaded.has(q) || [...uploaded].some((u) => u.startsWith(`${q.replace(/\/$/, '')}/`) || (!q.includes('/') && u.endsWith(`/${q}`)))));
    });
  let before: { name: string; command: string; produces: string[] }[] = [];
  let prepareScript: string | null = null;
  if (needed.length) {
    let chosen = needed.length === 1 ? needed[0] : undefined;
    if (!chosen) {
      const choices = needed.map(({ e }) => e.path);
      const answer = answerTo('prepared first');
      if (!answer) return call('ask_user', { question: `Which data should be prepared first? ${entry.path} reads files that several scripts write: ${choices.join(', ')}.`, choices });
      const said = answer.split(':').pop() ?? '';
      chosen = needed.find(({ e }) => said.includes(e.path)) ?? needed.find(({ e }) => folderOf(e.path) && said.includes(folderOf(e.path)));
      if (!chosen) return call('give_up', { reason: `The answer "${said.trim()}" names none of ${choices.join(', ')}.` });
    }
    const dir = folderOf(chosen.e.path);
    prepareScript = chosen.e.path;
    before = [
      {
        name: 'prepare-data',
        // Run where the script lives, so its relative paths and __file__-relative paths agree.
        command: dir ? `cd ${dir} && python ${chosen.e.path.split('/').pop()}` : `python ${chosen.e.path}`,
        produces: dir ? [dir] : chosen.products,
      },
    ];
  }

  // 3. Hardware. A torch pin that only some online workers meet: the run goes to those (the
  // plan's minTorch, which the claim enforces), so the hardware is chosen among their classes.
  const torchPin = facts.usesTorch && !blocking.some((p) => p.name === 'torch') ? facts.pins.find((p) => p.name === 'torch' && p.spec) : undefined;
  const minTorch = torchPin && cap.classes.some((c) => c.torchVersions.some((v) => satisfies(v, torchPin.spec) !== true)) ? lowerBound(torchPin.spec) : null;
  const meetsPin = (c: WorkerClass) => !minTorch || c.torchVersions.some((v) => satisfies(v, torchPin!.spec) === true);
  const has = (w: string, vendor?: string) => cap.classes.some((c) => c.workloads.includes(w) && (!vendor || c.accelVendor === vendor) && (!w.startsWith('torch') || meetsPin(c)));
  let hardware: { workload: string; accelVendor?: string };
  let migrate = false;
  // NVIDIA → AMD (issue 13): code written for NVIDIA — CUDA C++ kernels or PyTorch hard-wired to
  // CUDA — that the user wants on an AMD GPU, with an NVIDIA worker online for the reference and
  // an AMD worker for the target. The reference runs unchanged on NVIDIA, an optimization is tried
  // there against it, and the migration (CUDA C++ → HIP, PyTorch device code → device-agnostic) is
  // validated on AMD against the NVIDIA reference before the full run.
  const wantsAmd = preference === 'amd' || /\b(AMD|ROCm|Radeon|Instinct)\b/i.test(request);
  const toAmd = facts.usesTorch && wantsAmd && (facts.cudaSources.length > 0 || entry.hardwiredCuda.length > 0) && has('torch-cuda', 'nvidia') && has('torch-rocm', 'amd');
  if (toAmd) {
    hardware = { workload: 'torch-rocm', accelVendor: 'amd' };
    migrate = true;
  } else if (!facts.usesTorch) hardware = { workload: 'python' };
  else if (entry.hardwiredCuda.length && !online) hardware = { workload: 'torch-cuda', accelVendor: 'nvidia' };
  else if (entry.hardwiredCuda.length && !has('torch-cuda', 'nvidia')) {
    // Hard-wired to CUDA and no NVIDIA worker online: migrate it (required) to what is online.
    hardware =
      preference === 'amd' && has('torch-rocm', 'amd')
        ? { workload: 'torch-rocm', accelVendor: 'amd' }
        : preference === 'apple' && has('torch-mps', 'apple')
          ? { workload: 'torch-mps', accelVendor: 'apple' }
          : has('torch-cpu')
            ? { workload: 'torch-cpu' }
            : has('torch-rocm', 'amd')
              ? { workload: 'torch-rocm', accelVendor: 'amd' }
              : { workload: 'torch-mps', accelVendor: 'apple' };
    migrate = true;
  } else if ((preference === 'nvidia' || entry.hardwiredCuda.length) && has('torch-cuda', 'nvidia')) hardware = { workload: 'torch-cuda', accelVendor: 'nvidia' };
  else if (preference === 'amd' && has('torch-rocm', 'amd')) hardware = { workload: 'torch-rocm', accelVendor: 'amd' };
  else if (preference === 'apple' && has('torch-mps', 'apple')) hardware = { workload: 'torch-mps', accelVendor: 'apple' };
  else if (preference === 'any' && has('torch-cuda', 'nvidia')) hardware = { workload: 'torch-cuda', accelVendor: 'nvidia' };
  else hardware = { workload: 'torch-cpu' };

  // 4. The command and where results go.
  const args: string[] = [];
  let checkpoint: string | null = null;
  let resumable: { path: string; flag?: string } | null = null;
  const resultFiles: string[] = [];
  const outputs = new Set<string>(['outputs']);
  const num = (re: RegExp) => re.exec(request)?.[1];
  // Flags the user wrote (`--emsize 64`, `--lr=0.1`, `--dry-run`) win over every guess below.
  const given = requestFlags(request);
  const wantsModel = /\b(model|checkpoint|weights)\b/i.test(request);
  const accel = hardware.accelVendor;
  if (entry.cli === 'configurator') {
    const c = configuratorArgs(entry, { request, given, configFile, settings: configSettings, source, oldTorch: cap.classes.some((k) => k.torchVersions.some((v) => Number.parseInt(v, 10) < 2)) });
    args.push(...c.args);
    if (c.checkpoint) {
      checkpoint = c.checkpoint;
      if (!c.checkpoint.startsWith('outputs/')) outputs.add(c.checkpoint);
    }
  }
  for (const f of entry.cli === 'configurator' ? [] : entry.flags) {
    const name = flagName(f);
    const isBool = f.type === 'bool' || /^store_(true|false)$|BooleanOptionalAction/.test(f.action ?? '');
    const said = given.get(name);
    if (said !== undefined) {
      if (isBool) {
        if (said === true) args.push(f.flag);
      } else if (said !== true) args.push(f.flag, shellWord(said));
      continue;
    }
    if (isBool) {
      // A switch is passed or not, never given a value. Only store_true switches are set here:
      // device switches from the worker's accelerator, a save-the-model switch when the user
      // asks for the model.
      if (f.action === 'store_false' || f.default === 'True') continue;
      const cudaLike = accel === 'nvidia' || accel === 'amd'; // ROCm builds of PyTorch answer to "cuda"
      const on = /^(use-)?(cuda|gpu)$/.test(name)
        ? cudaLike
        : /^(use-)?mps$/.test(name)
          ? accel === 'apple'
          : /^(use-)?accel$/.test(name)
            ? !!accel
            : /^no-(cuda|gpu)$/.test(name)
              ? !cudaLike
              : name === 'no-mps'
                ? accel !== 'apple'
                : /^(no-accel|cpu)$/.test(name)
                  ? !accel
                  : /^save-?model$/.test(name) && wantsModel;
      if (on) args.push(f.flag);
      continue;
    }
    if (/^(num-)?epochs?$/.test(name) && num(/(\d+)\s*epochs?/i)) args.push(f.flag, num(/(\d+)\s*epochs?/i)!);
    else if (/^(num-|max-)?(steps|iters|iterations)$/.test(name) && num(/(\d+)\s*(?:steps|iterations|iters)/i)) args.push(f.flag, num(/(\d+)\s*(?:steps|iterations|iters)/i)!);
    else if (/^(seed)$/.test(name) && num(/seed\s*(\d+)/i)) args.push(f.flag, num(/seed\s*(\d+)/i)!);
    else if (name === 'device') args.push(f.flag, '"$CHATGPU_DEVICE"');
    else if ((f.type === 'int' || f.type === 'float') && numberBefore(request, name)) args.push(f.flag, numberBefore(request, name)!);
    else if (/^(out|output)-?dir$|^save-dir$|^log-dir$/.test(name)) args.push(f.flag, 'outputs');
    // A folder the script checkpoints into and resumes from: the worker's checkpoint folder,
    // uploaded while it runs and restored before a retry (a drained or lost worker).
    else if (/^(checkpoint|ckpt|resume)-?dir$/.test(name)) {
      args.push(f.flag, CHECKPOINT_DIR);
      resumable = { path: CHECKPOINT_DIR, flag: f.flag };
    }
    // A --checkpoint/--ckpt of a script that never saves one is what it reads (an input), not an output.
    // An --out whose default is a folder (`outputs/`, `results`): the outputs folder.
    else if (/^(out|output)$/.test(name) && f.default && !/\.\w+$/.test(f.default.replace(/\/$/, '').split('/').pop()!)) args.push(f.flag, 'outputs');
    else if (/^(save|save-path|out|output|output-path|save-model)$/.test(name) || (/^(checkpoint|ckpt|model-path)$/.test(name) && entry.savesCheckpoint)) {
      const base = (f.default ?? 'model.pt').split('/').pop()!.replace(/[^\w.-]/g, '') || 'model.pt';
      const file = `outputs/${base}`;
      args.push(f.flag, file);
      // A checkpoint is a model file; other outputs (results.json, a CSV) are only required.
      if (/\.(pt|pth|ckpt|bin|safetensors)$/i.test(base)) checkpoint = file;
      else resultFiles.push(file);
    }
  }
  // A script that keeps its checkpoint through ChatGPU's helper or variable needs no flag.
  if (!resumable && /CHATGPU_CHECKPOINT_DIR|chatgpu\.checkpoint|from chatgpu import checkpoint/.test(source)) resumable = { path: CHECKPOINT_DIR };
  // Required positional arguments (`p.add_argument("samples", type=int)`): the number the
  // request gives for it ("with 1000000 samples"), else its only number for the only numeric
  // one; none → say which value is missing rather than run a command argparse refuses.
  const required = entry.cli === 'configurator' ? [] : (entry.positionals ?? []).filter((p) => p.required);
  const numbers = [...request.matchAll(/(?<![\w.-])(\d[\d_]*(?:\.\d+)?)(?![\w.])/g)].map((m) => m[1]!.replace(/_/g, ''));
  const positional: string[] = [];
  for (const p of required) {
    const numeric = p.type === 'int' || p.type === 'float';
    const value = numeric ? (numberBefore(request, p.name.replace(/_/g, '-')) ?? (required.length === 1 && numbers.length === 1 ? numbers[0] : undefined)) : undefined;
    if (value === undefined) return call('give_up', { reason: `${entry.path} needs its positional argument \`${p.name}\`${p.help ? ` (${p.help})` : ''}, and the request does not give it: say its value, e.g. "with 1000000 ${p.name}".` });
    positional.push(value);
  }
  args.unshift(...positional);
  // A script that reads sys.argv itself (no parser): the arguments its README or pipeline file runs it with.
  const usageArgs = entry.flags.length === 0 && !(entry.positionals ?? []).length && !usageOf(entry)?.module ? usageOf(entry)?.command.split(/\s+/).slice(2) : undefined;
  if (usageArgs?.length && args.length === 0 && /\bsys\.argv\[[1-9]/.test(source)) args.push(...usageArgs.filter((a) => /^[\w./=:-]+$/.test(a)));
  // A path the user gave for the checkpoint is still the checkpoint.
  for (const [name, value] of given) {
    if (typeof value === 'string' && /^(save|save-path|out|output|output-path|checkpoint|ckpt|model-path)$/.test(name) && /\.(pt|pth|ckpt|bin|safetensors)$/i.test(value) && entry.flags.some((f) => flagName(f) === name)) {
      checkpoint = value.replace(/^\.\//, '');
      if (!isCollected({ outputs: [...outputs] }, checkpoint)) outputs.add(checkpoint);
    }
  }
  if (!checkpoint) {
    const literal = /torch\.save\([^,]+,\s*(?:os\.path\.join\(\s*[^,]+,\s*)?['"]([^'"]+\.(?:pt|pth|ckpt|bin))['"]/.exec(source)?.[1];
    if (literal) {
      checkpoint = literal.replace(/^\.\//, '');
      outputs.add(checkpoint);
    }
  }
  // What the script writes at literal paths in its run directory (predictions, plots, tables —
  // `np.save('predict%d.npy' % i, y)`): collected too, or the run's results stay on the worker.
  const writes = literalWrites(source);
  for (const f of writes) if (!isCollected({ outputs: [...outputs] }, f)) outputs.add(f);
  // 4a. Every ask of the request (planner/asks): matched against the entry point's settings,
  // honoured by a flag, an override, an environment variable, a rewritten literal or an output
  // collected — or asked about, or refused naming what the project has (disposeAsks.ts).
  const asks = parseAsks(request);
  // The settings of what will run: the entry point and the scripts of the steps before it, every page.
  let surface: SettingsSurface | null = null;
  if (asks.some((a) => a.kind === 'setting' || a.kind === 'sweep')) {
    const pages = (out.get('list_settings') ?? []) as (SettingsSurface & { next?: number | null; error?: string })[];
    const settings: SettingsSurface['settings'] = [];
    const problems: SettingsSurface['problems'] = [];
    // A failed read is not retried (the loop would refuse the same call): plan with what was read, and say why.
    const failed = pages.find((p) => p && typeof p === 'object' && typeof p.error === 'string');
    if (failed) problems.push({ file: entry.path, error: `its settings could not be read: ${failed.error}` });
    for (const script of failed ? [] : [entry.path, ...(prepareScript ? [prepareScript] : [])]) {
      const mine = pages.filter((p) => p && typeof p === 'object' && p.entry === script && Array.isArray(p.settings));
      if (mine.length === 0) return call('list_settings', { entry: script });
      const lastPage = mine.at(-1)!;
      if (typeof lastPage.next === 'number') return call('list_settings', { entry: script, offset: lastPage.next });
      for (const p of mine) settings.push(...p.settings.filter((x) => !settings.some((y) => y.id === x.id)));
      problems.push(...(lastPage.problems ?? []));
    }
    surface = { entry: entry.path, settings, problems };
  }
  const capCad = Number(/Spending cap:\s*([\d.]+)\s*CAD/.exec(task)?.[1] ?? NaN);
  // What the entry point's own modules do (they may draw the figures or save the model): read them first.
  const localFiles = (facts.importsByFile[entry.path]?.local ?? [])
    .flatMap((m) => {
      const p = m.replace(/\./g, '/');
      const dir = folderOf(entry!.path);
      return [`${p}.py`, `${p}/__init__.py`, ...(dir ? [`${dir}/${p}.py`] : [])];
    })
    .filter((p, i, all) => uploaded.has(p) && all.indexOf(p) === i)
    .slice(0, 6);
  // Read them too when they may decide where the run must start (a script in a folder) or what it makes.
  if (asks.some((a) => a.kind === 'output') || folderOf(entry.path)) for (const p of localFiles) if (readCall(p)) return call('read_file', readCall(p)!);
  // Thresholds the request writes ("accuracy above 0.9"); the asks rule adds the ones it reads otherwise.
  const metrics = requestThresholds(request);
  const askStep = disposeAsks({
    request,
    asks,
    surface,
    entry: entry.path,
    keyValue: entry.cli === 'configurator',
    args,
    positionals: positional.length,
    read: readOf,
    uploaded,
    runSource: [source, ...localFiles.map((p) => readOf(p) ?? '')].join('\n'),
    checkpoint,
    saveFlags: entry.flags.filter((f) => /^(save|save-path|out|output|output-path|save-model|checkpoint|ckpt|model-path|model|out-file|output-file)$/.test(flagName(f)) && f.type !== 'bool' && !/^store_(true|false)$/.test(f.action ?? '')).map((f) => ({ flag: f.flag, default: f.default })),
    writes,
    thresholds: metrics.map((m) => m.name),
    hardware,
    onlineSummary: cap.summary,
    capCad: Number.isFinite(capCad) ? capCad : null,
    targets: [entry.path, ...(configFile ? [configFile] : [])],
    setupSteps: before.map((b) => b.command),
    answerTo,
  });
  if (askStep.need === 'read') return call('read_file', readCall(askStep.path) ?? { path: askStep.path });
  if (askStep.need === 'ask') return call('ask_user', { question: askStep.question, ...(askStep.choices.length ? { choices: askStep.choices } : {}) });
  const askPlan: AskPlan = askStep.plan;
  args.splice(0, args.length, ...askPlan.args);
  if (askPlan.checkpoint) {
    checkpoint = askPlan.checkpoint;
    if (!isCollected({ outputs: [...outputs] }, checkpoint)) outputs.add(checkpoint);
  }
  for (const o of askPlan.outputs) if (!isCollected({ outputs: [...outputs] }, o)) outputs.add(o);
  for (const f of askPlan.required) if (!resultFiles.includes(f)) resultFiles.push(f);
  const blocked = askPlan.dispositions.filter((d) => d.status === 'refused' && BLOCKING_KINDS.has(d.kind));
  if (blocked.length) return call('give_up', { reason: refusalWords(entry.path, askPlan.dispositions) });
  // As the README runs it: `python -m pkg.train` keeps the package importable (a file path would not).
  const usage = usageOf(entry);
  // A script in a folder that reads paths relative to that folder (`load_data(path="../data/cora/")`)
  // runs from there, with the project's root on the import path when it imports its own package.
  const home = usage?.module ? null : startsIn(entry.path, [source, ...localFiles.map((p) => readOf(p) ?? '')].join('\n'), uploaded, facts.importsByFile[entry.path]?.local ?? []);
  if (home) for (let i = 0; i < args.length; i++) args[i] = args[i]!.replace(/^(--[\w-]+=)?(['"]?)outputs(\/|$)/, `$1$2${home.up}outputs$3`);
  // From the root, a script in a folder does not see the project's root-level packages (`from mingpt.model import GPT` in projects/chargpt/): put the root on the import path.
  const rootPackage = !home && folderOf(entry.path) && (facts.importsByFile[entry.path]?.local ?? []).some((m) => { const top = m.split('.')[0]!; return [...uploaded].some((u) => u.startsWith(`${top}/`)) && top !== folderOf(entry!.path).split('/')[0]; });
  const runner = usage?.module ? `python -m ${usage.module}` : home ? `cd ${home.dir} && ${home.pythonPath ? `PYTHONPATH="${home.up.replace(/\/$/, '')}:$PYTHONPATH" ` : ''}python ${entry.path.split('/').pop()}` : rootPackage ? `PYTHONPATH=".:$PYTHONPATH" python ${entry.path}` : `python ${entry.path}`;
  let command = [runner, ...args].join(' ');
  const bounded = boundedCommand(entry, args, runner);
  let smoke = migrate || versionMigrate || /\b(no|skip(?:ping)?(?: the)?|without(?: a)?)\s+smoke(?:[ -]?(?:run|test))?\b/i.test(request) ? null : smokeRun(entry, args, runner, configSettings);
  // 4b. Adaptation (issue 14): a Monte-Carlo sample count splits into shards across the
  // compatible workers online, or the plan says why not; the adaptation check replaces the smoke run.
  const shardable = !(migrate || versionMigrate || toAmd || checkpoint || before.length);
  const shapes = shardable ? divisibleInputs(entry, args, uploaded, request) : null;
  for (const p of shapes?.reads ?? []) if (readCall(p)) return call('read_file', readCall(p)!);
  let sharding = shardable ? shardingOf(entry, args, runner, configSettings, source, resultFiles, cap.classes, hardware.workload, request, shapes && { ...shapes, readOf }) : null;
  if (sharding?.spec) smoke = null;
  // A sweep the user asked for: one run per value (sweepRuns.ts), sharded when it can be.
  const sweepDispositions: AskDisposition[] = [];
  for (const [i, w] of askPlan.sweeps.entries()) {
    if (i > 0) {
      sweepDispositions.push({ ask: w.ask.text, kind: w.ask.kind, status: 'refused', detail: `one sweep per job: ${askPlan.sweeps[0]!.setting.name} is swept already; submit the sweep of ${w.setting.name} as its own job` });
      continue;
    }
    const workers = cap.classes.filter((c) => c.workloads.includes(hardware.workload)).reduce((n, c) => n + c.count, 0);
    const sp = sweepRuns({ setting: w.setting, values: w.values, runner, args, boundedArgs: boundedArgs(entry, args), ctx: { positionals: positional.length, read: readOf, entry: entry.path }, workers, shardable: !(migrate || versionMigrate || toAmd || before.length) });
    if ('need' in sp) return call('read_file', readCall(sp.path) ?? { path: sp.path });
    if ('refused' in sp) {
      sweepDispositions.push({ ask: w.ask.text, kind: w.ask.kind, status: 'refused', detail: sp.refused });
      continue;
    }
    command = sp.command;
    sharding = sp.shards ? { spec: sp.shards, reason: sp.detail } : null;
    smoke = null;
    // Each run's files move to its own folder: what is required is the table; no single checkpoint to evaluate.
    checkpoint = null;
    resumable = null;
    resultFiles.splice(0, resultFiles.length, SWEEP_TABLE);
    askPlan.environment.push(...sp.environment);
    sweepDispositions.push({ ask: w.ask.text, kind: w.ask.kind, status: 'honoured', detail: sp.detail, setting: w.setting.id });
  }
  const dispositions: AskDisposition[] = [
    ...askPlan.dispositions,
    ...sweepDispositions,
    ...askPlan.ownSweep.map((a) => ({
      ask: a.text,
      kind: a.kind,
      status: 'honoured' as const,
      detail: sharding?.spec ? `the project's own sweep, split into ${sharding.spec.shards.length} shards on the compatible workers online` : `the project's own sweep, run as it is written (${sharding?.reason ?? 'one run'})`,
    })),
    ...askPlan.scale.map((a) =>
      sharding?.spec || sweepDispositions.some((d) => d.status === 'honoured')
        ? { ask: a.text, kind: a.kind, status: 'honoured' as const, detail: sharding?.spec ? `split into ${sharding.spec.shards.length} shards run at once on the compatible workers online` : `the runs go to the one compatible worker online, one after another (${cap.summary})` }
        : sharding?.spec
        ? { ask: a.text, kind: a.kind, status: 'honoured' as const, detail: `split into ${sharding.spec.shards.length} shards run at once on the compatible workers online` }
        : { ask: a.text, kind: a.kind, status: 'refused' as const, detail: `runs as one task: ${sharding?.reason ?? `${entry.path} is one program with nothing independent to split (no sample count, sweep or batch of inputs)`}` },
    ),
  ];
  // In the order the request makes them.
  const askOrder = (d: AskDisposition) => asks.findIndex((a) => a.text === d.ask);
  dispositions.sort((a, b) => askOrder(a) - askOrder(b));
  if (dispositions.some((d) => d.status === 'refused' && BLOCKING_KINDS.has(d.kind))) return call('give_up', { reason: refusalWords(entry.path, dispositions) });

  // 5. Validation: a second opinion when a checkpoint will be produced.
  if (checkpoint && !last('consult_specialist')) {
    return call('consult_specialist', { specialist: 'validation', question: `The run of ${entry.path} saves ${checkpoint}. What should the acceptance criteria be?` });
  }
  for (const m of askPlan.metrics) if (!metrics.some((x) => x.name === m.name)) metrics.push(m);
  // The evaluation decides: what it reports is required, and a threshold the user named
  // goes on the evaluation of the final checkpoint when the evaluation reports that metric
  // ("accuracy above 0.9" → eval_accuracy > 0.9), else on the run's own metrics.
  let evaluate: { checkpoint: string; command: string; metrics: typeof metrics; reports: string[] } | undefined;
  let evalFile: string | null = null;
  let runMetrics = metrics;
  if (checkpoint) {
    const evalScript = eps.find((e) => e !== entry && /eval/i.test(e.path) && e.flags.some((f: ArgFlag) => /checkpoint|ckpt|model|weights/.test(f.flag)));
    const flag = evalScript?.flags.find((f) => /checkpoint|ckpt|model|weights/.test(f.flag))?.flag;
    const own = evalScript && flag;
    if (own) evalFile = evalScript.path;
    const reports = own ? evalScript.reportsMetrics : ['reload_ok'];
    const onEval = (name: string) => reports.find((r) => r === name || r.endsWith(`_${name}`) || r.startsWith(`${name}_`)) ?? (name === 'acc' ? reports.find((r) => /(^|_)accuracy$/.test(r)) : undefined);
    const evalMetrics = metrics.filter((m) => onEval(m.name)).map((m) => ({ ...m, name: onEval(m.name)! }));
    runMetrics = metrics.filter((m) => !onEval(m.name));
    evaluate = {
      checkpoint,
      command: own ? `python ${evalScript.path} ${flag} ${checkpoint}` : `python -m chatgpu.reload_check ${checkpoint}`,
      metrics: evalMetrics,
      reports,
    };
  }
  const preparation = toAmd
    ? {
        workload: { command: bounded, timeoutSec: 900, scale: boundedScale(entry, args, configSettings) ?? null },
        compare: ['outputs'],
        reference: { workload: 'torch-cuda', accelVendor: 'nvidia' },
        target: { workload: 'torch-rocm', accelVendor: 'amd' },
        steps: [
          // Tried on the source GPU against the original; kept only if the timings say faster (a
          // candidate that does not fit the code is recorded as SKIPPED, with why).
          { name: 'optimize', kind: 'optimization', transformation: 'pin-memory', required: false, on: 'reference' },
          { name: 'migrate', kind: 'migration', transformation: 'cuda-to-hip', required: true, tolerance: { rtol: 1e-4, atol: 1e-5 } },
        ],
        revisionBudget: 2,
        frozenFiles: evaluate && evaluate.command.includes('.py') ? [evaluate.command.split(' ')[1]!] : [],
        pinRun: false,
      }
    : migrate
    ? {
        workload: { command: bounded, timeoutSec: 900, scale: boundedScale(entry, args, configSettings) ?? null },
        compare: ['outputs'],
        reference: { workload: 'torch-cuda', accelVendor: 'nvidia' },
        target: { workload: hardware.workload, ...(hardware.accelVendor ? { accelVendor: hardware.accelVendor } : {}) },
        steps: [{ name: 'migrate', kind: 'migration', transformation: 'pytorch-device-agnostic', required: true, tolerance: { rtol: 1e-4, atol: 1e-5 } }],
        revisionBudget: 3,
        frozenFiles: evaluate && evaluate.command.includes('.py') ? [evaluate.command.split(' ')[1]!] : [],
        pinRun: false,
      }
    : versionMigrate
    ? {
        // The unchanged code runs on no online worker: the stage takes the reference from the
        // rewrite on the same hardware (a FALLBACK record says so) and checks it is repeatable.
        workload: { command: bounded, timeoutSec: 900, scale: boundedScale(entry, args, configSettings) ?? null },
        compare: ['outputs'],
        reference: { workload: hardware.workload, ...(hardware.accelVendor ? { accelVendor: hardware.accelVendor } : {}) },
        target: { workload: hardware.workload, ...(hardware.accelVendor ? { accelVendor: hardware.accelVendor } : {}) },
        steps: [{ name: 'migrate', kind: 'migration', transformation: 'pytorch-version-compat', required: true, tolerance: { rtol: 1e-4, atol: 1e-5 } }],
        revisionBudget: 2,
        frozenFiles: evaluate && evaluate.command.includes('.py') ? [evaluate.command.split(' ')[1]!] : [],
        pinRun: false,
      }
    : null;
  // 6. Every third-party import of what will run, resolved before anything runs.
  const runFiles = [entry.path, ...(evalFile ? [evalFile] : []), ...(prepareScript ? [prepareScript] : [])];
  let install: string[] = [];
  // A replan's evidence: modules a run of this job could not import (the run supervisor's brief).
  const missingAtRunTime = [...new Set([...task.matchAll(/^Replan \d+:.*?missing module: ([A-Za-z_]\w*)/gm)].map((m) => m[1]!))];
  if (missingAtRunTime.length || [...importsOf(facts, runFiles).keys()].some((m) => m !== 'torch' && m !== 'numpy')) {
    const deps = last<DependencyCheck>('check_dependencies');
    if (!deps) return call('check_dependencies', { files: runFiles, workload: hardware.workload, ...(hardware.accelVendor ? { accelVendor: hardware.accelVendor } : {}), ...(missingAtRunTime.length ? { missingAtRunTime } : {}) });
    if (deps.unavailable.length) return call('give_up', { reason: deps.summary ?? `Unavailable on the workers: ${deps.unavailable.join(', ')}.` });
    install = deps.install;
  }
  if (askPlan.edits.length && preparation) {
    return call('give_up', { reason: `${entry.path} needs a migration before it can run here, and the settings you named (${askPlan.edits.map((e) => e.name).join(', ')}) have no flag, so they need a rewrite of the code; one plan cannot do both yet. Change them in the code and upload it again, or bring a worker online that runs the code as it is.` });
  }
  if (before.length && preparation) {
    return call('give_up', { reason: `${entry.path} needs both a migration (it is hard-wired to CUDA and no NVIDIA worker is online) and a data-preparation step first (${before[0]!.command}); one plan cannot do both yet. Run the preparation yourself and upload its output, or bring an NVIDIA worker online.` });
  }
  const pipelineWords =
    (minTorch && hardware.workload.startsWith('torch') ? ` Only workers with torch ≥ ${minTorch} take it (${torchPin!.file} pins torch${torchPin!.spec}; online: ${cap.summary}).` : '') +
    (before.length ? ` First \`${before[0]!.command}\` prepares ${before[0]!.produces.join(', ')}, which the run reads.` : '') +
    (install.length ? ` A setup phase installs ${install.join(', ')} on the worker first.` : '');
  return submit({
    summary: (toAmd
      ? `${entry.path} is written for NVIDIA GPUs (${[...facts.cudaSources.slice(0, 3), ...entry.hardwiredCuda.slice(0, 2)].join(', ')}) and you asked for AMD: take a reference run of \`${bounded}\` on an NVIDIA worker, try an optimization there, migrate CUDA C++ to HIP and PyTorch device code to device-agnostic, check the migration on an AMD worker against the NVIDIA reference, then train the frozen result on AMD${checkpoint ? ` and reload and evaluate ${checkpoint}` : ''}.${asked ? ' (Planned with your answers.)' : ''}`
      : migrate
      ? `${entry.path} is hard-wired to CUDA (${entry.hardwiredCuda.slice(0, 3).join(', ')}) and no NVIDIA worker is online (${cap.summary}): migrate it to device-agnostic code, check the rewrite against a reference run of \`${bounded}\`, then train the frozen result on a ${hardware.workload} worker${checkpoint ? ` and reload and evaluate ${checkpoint}` : ''}.${asked ? ' (Planned with your answers.)' : ''}`
      : versionMigrate
      ? `Migrate the calls of ${entry.path}'s project that are newer than the workers' torch (${[...new Set(versionMigrate.uses.map((u) => u.api))].join(', ')}) to what torch ${versionMigrate.torch} has, check the rewrite with two runs of \`${bounded}\` on a ${hardware.workload} worker, then run the frozen result${checkpoint ? ` and reload and evaluate ${checkpoint}` : ''}. (Planned with your answers.)`
      : sharding?.spec
      ? `Run ${entry.path} unchanged on ${sharding.spec.shards.length} ${hardware.workload} workers at once. ${sharding.reason}`
      : `Run ${entry.path} as it is on a ${hardware.workload} worker${checkpoint ? `, keep ${checkpoint}, then reload it on a worker and evaluate it` : ''}.${facts.dataFolders.length ? ` Data shipped with the code: ${facts.dataFolders.join(', ')}.` : ''}${asked ? ' (Planned with your answers.)' : ''}`) + (sharding && !sharding.spec ? ` ${sharding.reason}` : '') + pipelineWords,
    steps: [
      ...before.map((b) => `Prepare the data: \`${b.command}\` (hands ${b.produces.join(', ')} to the run)`),
      ...(toAmd
        ? [`Reference on NVIDIA: \`${bounded}\``, 'Optimize on NVIDIA where it pays (kept only when faster and equal)', 'Migrate CUDA C++ → HIP and PyTorch device code → device-agnostic (required)', 'Validate on AMD against the NVIDIA reference (revisions within the budget)', 'Freeze the accepted code']
        : migrate
          ? [`Reference: \`${bounded}\``, 'Migrate to device-agnostic code (required) and check it against the reference', 'Freeze the accepted code']
          : versionMigrate
            ? [`Reference: \`${bounded}\` on the rewrite (the unchanged code needs a newer torch)`, "Migrate the newer PyTorch calls to the workers' torch (required) and check the rewrite is repeatable", 'Freeze the accepted code']
            : []),
      ...(smoke ? [`Smoke run: \`${smoke.command}\` (${smoke.scale.bounded} of ${smoke.scale.full} ${smoke.scale.unit}s) on the same hardware, to catch errors early and estimate the full run`] : []),
      ...(sharding?.spec
        ? [
            `Adaptation check: \`${sharding.spec.check.original}\` against the same ${sharding.spec.check.shards.length} shards merged (${(sharding.spec.merge.kind ?? 'fields') === 'fields' ? sharding.spec.merge.fields.map((f) => `${f.name}: ${f.how}`).join(', ') : mergeWords(sharding.spec.merge)})`,
            ...sharding.spec.shards.map((s, i) => `Shard ${i + 1}: \`${s.command}\``),
            `Merge ${(sharding.spec.merge.kind ?? 'fields') === 'fields' ? sharding.spec.merge.file : mergeWords(sharding.spec.merge)}`,
          ]
        : [`Run \`${command}\``]),
      ...(resumable ? [`Checkpoints the program writes in ${resumable.path}/${resumable.flag ? ` (${resumable.flag})` : ''} are uploaded as they change; a drained or lost run resumes from the latest on another worker`] : []),
      'Collect outputs/',
      ...(evaluate
        ? [`Evaluate: \`${evaluate.command}\`${evaluate.reports.length ? `; it must report ${evaluate.reports.join(', ')}` : ''}${evaluate.metrics.length ? `; required: ${evaluate.metrics.map((m) => `${m.name} ${m.op} ${m.value}`).join(', ')}` : ''}`]
        : []),
      'Check the acceptance criteria',
    ],
    command,
    environment: askPlan.environment.length ? askPlan.environment : null,
    hardware: { workload: hardware.workload, accelVendor: hardware.accelVendor ?? null, minMemoryMiB: null, minAccelMemoryMiB: null, minTorch: minTorch && hardware.workload.startsWith('torch') ? minTorch : null },
    timeoutSec: askPlan.timeoutSec ?? 3600,
    asks: dispositions,
    ...(askPlan.edits.length ? { settings: askPlan.edits } : {}),
    outputs: [...outputs],
    acceptance: { exitCode: 0, requiredFiles: [...(checkpoint ? [checkpoint] : []), ...resultFiles], metrics: runMetrics, evaluate: evaluate ?? null },
    preparation,
    smoke,
    ...(sharding?.spec ? { shards: sharding.spec } : {}),
    ...(before.length && !preparation ? { before } : {}),
    ...(install.length ? { install: { pip: install } } : {}),
    ...(resumable ? { checkpoint: resumable } : {}),
    ...checkableMark(checkableOutputs({ source, command, workload: hardware.workload, request, preparation: !!preparation, service: false })),
  });
}

const checkableMark = (c: ReturnType<typeof checkableOutputs>) => (c ? { checkable: c } : {});

/**
 * Where a script in a folder must start: its folder, when it (or a module of the project it imports)
 * reads a literal `../` path that exists from there (pygcn's `../data/cora/`); `up` is the way back to
 * the run folder, and `pythonPath` says the root goes on the import path (it imports its own package,
 * `from pygcn.utils import …`). Null: it runs from the root as `python DIR/FILE`.
 */
function startsIn(entryPath: string, text: string, uploaded: ReadonlySet<string>, localImports: readonly string[]): { dir: string; up: string; pythonPath: boolean } | null {
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

/** "accuracy above 0.9", "loss below 0.5" → thresholds on those metrics. */
function requestThresholds(request: string): { name: string; op: string; value: number }[] {
  return [...request.matchAll(/\b(accuracy|acc|loss|val[_ ]?loss|f1|auc)\s+(?:of\s+)?(above|over|greater than|at least|>=?|below|under|less than|at most|<=?)\s*([\d.]+)/gi)].map((m) => ({
    name: m[1]!.toLowerCase().replace(/\s/g, '_'),
    op: /above|over|greater|>$/.test(m[2]!) ? '>' : /at least|>=/.test(m[2]!) ? '>=' : /at most|<=/.test(m[2]!) ? '<=' : '<',
    value: Number(m[3]),
  }));
}

/** How much of one file the builtin planner reads, page by page (a 5 MB script is not read whole). */
const READ_ALL_CHARS = 200_000;

/** Why the job stops before anything runs: each refused ask with its reason, and what was understood. */
function refusalWords(entry: string, dispositions: AskDisposition[]): string {
  const refused = dispositions.filter((d) => d.status === 'refused');
  const honoured = dispositions.filter((d) => d.status === 'honoured');
  return `Not run: ${refused.map((d) => `"${d.ask}" — ${d.detail}`).join('; ')}.${honoured.length ? ` Understood: ${honoured.map((d) => `"${d.ask}" (${d.detail})`).join('; ')}.` : ''} Ask again with what ${entry} can do, and nothing runs until every part of the request can be honoured.`.slice(0, 2000);
}

/** A hosted service's asks: how long it serves and where are honoured; settings and outputs are not changed for a service yet. */
function serviceAsks(request: string, durationSec: number | null): AskDisposition[] {
  const honoured = (a: Ask, detail: string): AskDisposition => ({ ask: a.text, kind: a.kind, status: 'honoured', detail });
  return parseAsks(request).map((a) => {
    if (a.kind === 'limit' && a.maxSeconds && durationSec) return honoured(a, `served for ${durationSec} s`);
    if (a.kind === 'hardware' && a.hardware === 'cpu') return honoured(a, 'served from a CPU worker');
    // Where it listens: a service answers at its own URL (the API's proxy); the worker's port is private.
    if (a.kind === 'setting' && /^(port|host|address|bind|listen)$/i.test((a.phrase ?? '').replace(/^--/, '')))
      return honoured(a, `reachable at the service's URL (printed when it is ready); the app listens on the port the worker gives it, which the URL stands for — ${a.value ?? 'that address'} on the worker itself is not reachable from outside`);
    if ((a.kind === 'output' || a.kind === 'other') && /\b(url|address|link|page|endpoint)\b/i.test(a.text)) return honoured(a, "the service's URL and its API URL are printed once it is ready (`chatgpu service JOB`, the job page)");
    if ((a.kind === 'other' || a.kind === 'target') && /\b(serve|host|run|start|deploy|launch)\b/i.test(a.text)) return honoured(a, 'served as an HTTP endpoint at its own URL');
    return { ask: a.text, kind: a.kind, status: 'refused', detail: `a hosted service runs the app as uploaded: its ${a.kind === 'setup' ? 'setup steps' : a.kind === 'setting' || a.kind === 'sweep' ? 'settings' : a.kind === 'output' ? 'outputs' : 'options'} are not changed by the builtin planner yet` };
  });
}

/**
 * The command-line of a nanoGPT-style script (a configurator: config files, then --key=value
 * overrides of its globals; a value keeps its global's type). The device from the worker, the
 * run length and any setting the request names, torch.compile off on PyTorch before 2.0,
 * intervals no longer than the run (or the checkpoint is never written), out_dir in outputs/.
 */
function configuratorArgs(
  entry: EntryPoint,
  o: { request: string; given: Map<string, string | true>; configFile: string | null; settings: Record<string, string>; source: string; oldTorch: boolean },
): { args: string[]; checkpoint: string | null } {
  const args: string[] = o.configFile ? [o.configFile] : [];
  const value = (name: string) => o.settings[name] ?? entry.flags.find((f) => f.flag === `--${name}`)?.default ?? null;
  const iters = /(\d[\d_,]*)\s*(?:iterations|iters|steps)\b/i.exec(o.request)?.[1]?.replace(/[_,]/g, '');
  let outDir: string | null = null;
  for (const f of entry.flags) {
    const name = f.flag.slice(2);
    const said = o.given.get(name.replace(/_/g, '-'));
    let v: string | null = null;
    if (typeof said === 'string') v = said;
    else if (name === 'device') v = '"$CHATGPU_DEVICE"';
    else if (name === 'compile' && f.type === 'bool' && o.oldTorch) v = 'False';
    else if (/^(max_iters|max_steps|num_iters|iters|steps)$/.test(name) && iters) v = iters;
    else if (/_interval$/.test(name) && f.type === 'int' && iters && Number(value(name)) > Number(iters)) v = iters;
    else if (OUT_DIR_SETTING.test(name)) v = `outputs/${(value(name) ?? 'out').split('/').pop()!.replace(/[^\w.-]/g, '') || 'out'}`;
    else if (name === 'seed' && /seed\s*(\d+)/i.test(o.request)) v = /seed\s*(\d+)/i.exec(o.request)![1]!;
    else if ((f.type === 'int' || f.type === 'float') && numberBefore(o.request, name.replace(/_/g, '-'))) v = numberBefore(o.request, name.replace(/_/g, '-'))!;
    if (v === null) continue;
    if (OUT_DIR_SETTING.test(name)) outDir = v;
    args.push(`--${name}=${v.startsWith('"') ? v : shellWord(v)}`);
  }
  const saved = /torch\.save\([^\n]*os\.path\.join\(\s*(\w+)\s*,\s*['"]([^'"]+\.(?:pt|pth|ckpt|bin))['"]\s*\)/.exec(o.source);
  const checkpoint = saved && outDir && OUT_DIR_SETTING.test(saved[1]!) ? `${outDir}/${saved[2]}` : null;
  return { args, checkpoint };
}

/** A configurator setting naming where a run writes its results (out_dir, checkpoint_dir, …). */
const OUT_DIR_SETTING = /^(out_dir|output_dir|save_dir|ckpt_dir|checkpoint_dir)$/;

/** Flags that set a run's length (epochs, steps, iterations), by their normalized name. */
const RUN_LENGTH_RE = /^(num-|max-)?(epochs?|steps|iters|iterations)$/;
/** The run directory's checkpoint folder (worker/src/checkpoint.ts's default). */
const CHECKPOINT_DIR = 'checkpoint';

/** The lowest major.minor a requirement spec allows (">=2.1", "==2.3.0", "~=2.1.0", ">2.0" → "2.1", "2.3", "2.1", "2.0"); null when it has no lower bound. */
function lowerBound(spec: string): string | null {
  const lows = spec
    .split(',')
    .map((part) => /^(==|>=|~=|>)\s*(\d+)\.(\d+)/.exec(part.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [Number(m[2]), Number(m[3])] as const);
  const high = lows.sort((a, b) => b[0] - a[0] || b[1] - a[1])[0];
  return high ? `${high[0]}.${high[1]}` : null;
}
const flagName = (f: ArgFlag) => f.flag.replace(/^--?/, '').replace(/_/g, '-');

/** Scripts that prepare data for a run rather than being the run. */
const PREPARE_RE = /(^|\/)(prepare|preprocess|prepare_data|make_data(set)?|build_data(set)?|download(_data)?|get_data)\.py$/i;

/** Data files a preparation script writes, from the literal names in it ("train.bin", "data/x.npy"). */
function preparedFiles(source: string): string[] {
  const names = new Set<string>();
  for (const m of source.matchAll(/['"]([\w./-]+\.(?:bin|npy|npz|pkl|pt|pth|csv|tsv|json|jsonl|txt|parquet|h5|arrow))['"]/g)) names.add(m[1]!.replace(/^\.\//, ''));
  return [...names];
}

/**
 * Files a script writes at literal relative paths outside outputs/ (`np.save('predict%d.npy' % i, y)`,
 * `plt.savefig("loss.png")`, `df.to_csv('results.csv')`, `open('log.txt', 'w')`, `torch.save(m, 'm.pt')`),
 * as globs: a %-format or {} field becomes `*`. Paths built at run time (os.path.join, variables)
 * are not guessed.
 */
export function literalWrites(source: string): string[] {
  const calls = [
    /\b(?:np|numpy)\.(?:save|savez|savez_compressed|savetxt)\(\s*f?(['"])([^'"\n]+)\1/g,
    /\.savefig\(\s*f?(['"])([^'"\n]+)\1/g,
    /\.to_(?:csv|json|parquet)\(\s*f?(['"])([^'"\n]+)\1/g,
    /\bopen\(\s*f?(['"])([^'"\n]+)\1\s*,\s*(['"])[wax]b?\+?\3/g,
    /\btorch\.save\((?:[^,()]|\([^()]*\))+,\s*f?(['"])([^'"\n]+)\1/g,
  ];
  const out = new Set<string>();
  for (const re of calls) {
    for (const m of source.matchAll(re)) {
      const p = m[2]!.replace(/^\.\//, '').replace(/%[-#0-9.]*[sdifgx]|\{[^}]*\}/g, '*');
      if (p.startsWith('/') || p.split('/').includes('..') || p.startsWith('outputs/') || !/^[\w*.-]+(\/[\w*.-]+)*\.\w+$/.test(p) || /^\*\.\w+$/.test(p)) continue;
      out.add(p);
    }
  }
  return [...out].sort().slice(0, 20);
}

/**
 * The bounded workload of a preparation run: the same command with the smallest sensible
 * workload flags (one epoch, a few steps, few samples) and a fixed seed. Flags the entry
 * point does not have are not invented: without any, the bounded workload is the full command.
 */
function boundedCommand(entry: EntryPoint, args: string[], runner: string): string {
  return [runner, ...boundedArgs(entry, args)].join(' ');
}

/** The arguments of the bounded workload (see boundedCommand). */
function boundedArgs(entry: EntryPoint, args: string[]): string[] {
  let out = args;
  const set = (flag: string, value: string) => (out = withFlag(out, flag, value, entry.cli === 'configurator'));
  for (const f of entry.flags) {
    const name = f.flag.replace(/^--/, '').replace(/_/g, '-');
    if (/^(num-)?epochs?$/.test(name)) set(f.flag, '1');
    else if (/^(num-|max-)?(steps|iters|iterations)$/.test(name)) set(f.flag, '20');
    else if (/^(num-|n-)?(samples|trials|paths)$/.test(name)) set(f.flag, '1000');
    else if (name === 'seed') set(f.flag, '0');
  }
  return out;
}

/**
 * Whether the run splits into shards (shards.ts proposeShards): only a sample/trial count with
 * a known value; the shard count from the compatible workers online. Null: not a question here
 * (no sample count, or the user asked for one run).
 */
function shardingOf(entry: EntryPoint, args: string[], runner: string, settings: Record<string, string>, source: string, resultFiles: string[], classes: WorkerClass[], workload: string, request: string, shapes: (Divisible & { readOf: (p: string) => string | undefined }) | null) {
  if (/\b(no|without|don'?t|do not)\s+(shard|split)|\bunsharded\b|\bone (run|worker)\b/i.test(request)) return null;
  const resultFile = resultFiles.find((f) => f.startsWith('outputs/') && f.endsWith('.json')) ?? null;
  const workers = classes.filter((c) => c.workloads.includes(workload)).reduce((n, c) => n + c.count, 0);
  const rl = runLength(entry, args, settings);
  const countArg = (entry.positionals ?? []).find((p) => /^(n[-_]?)?(samples|trials|paths|points|draws|iterations)$|^(n|number)$/.test(p.name));
  if (!rl && countArg && entry.positionals?.[0] === countArg && /^\d+$/.test(args[0] ?? '')) {
    // A sample count given as the first positional argument (`python pi.py 1000000`).
    const seed = entry.flags.find((f) => flagName(f) === 'seed');
    return proposeShards({ source, runner, args, countFlag: countArg.name, seedFlag: seed?.flag ?? null, total: Number(args[0]), baseSeed: Number(seed?.default ?? 0) || 0, resultFile, workers, positional: true, unitSec: unitSeconds(request, Number(args[0])) });
  }
  if (!rl || !['sample', 'trial', 'path'].includes(rl.unit)) {
    // A sweep: a list flag (seeds, configs) the user did not set, its default list split.
    const sweep = sweepFlag(source);
    if (sweep && !args.includes(sweep.flag)) return proposeSweep({ source, runner, args, flag: sweep.flag, values: sweep.values, resultFile, workers, unitSec: unitSeconds(request, sweep.values.length) });
    return shapes ? otherShapes(entry, args, runner, source, resultFiles, workers, request, shapes) : null;
  }
  const seed = entry.flags.find((f) => flagName(f) === 'seed');
  const i = seed ? args.indexOf(seed.flag) : -1;
  const baseSeed = Number(i >= 0 ? args[i + 1] : (seed?.default ?? 0));
  return proposeShards({
    source,
    runner,
    args,
    countFlag: rl.flag.flag,
    seedFlag: seed?.flag ?? null,
    total: rl.full,
    baseSeed: Number.isInteger(baseSeed) ? baseSeed : 0,
    resultFile,
    workers,
    unitSec: unitSeconds(request, rl.full),
  });
}

/** A merge program the project ships: merge.py, merge_results.py, scripts/merge-shards.py. */
const MERGE_SCRIPT_RE = /(^|\/)merge[\w-]*\.py$/i;

/** What a run might be split over, read from its flags and the upload; `reads` must be read first. */
interface Divisible {
  inputs: { kind: 'files' | 'rows'; path: string; count: number | null } | null;
  range: { start: string; end: string; total: number } | null;
  mergeScript: string | null;
  reads: string[];
}

/**
 * The inputs a run could be split over: an input flag (`--input-dir data/`, `--input rows.csv`)
 * naming a folder of the upload (its files) or a CSV (its rows); `--start/--end` flags with a
 * known end (an evaluation over index ranges); and the merge program the project ships or the
 * request names ("merge with merge.py").
 */
function divisibleInputs(entry: EntryPoint, args: string[], uploaded: Set<string>, request: string): Divisible {
  const named = /\bmerge (?:it |them |the results |results )?(?:with|using|by) ([\w./-]+\.py)\b/i.exec(request)?.[1];
  const scripts = [...uploaded].filter((p) => MERGE_SCRIPT_RE.test(p) && p !== entry.path);
  const mergeScript = named && uploaded.has(named) ? named : scripts.length === 1 ? scripts[0]! : null;
  let inputs: Divisible['inputs'] = null;
  for (const f of entry.flags) {
    if (!/^(input|inputs|in|input-dir|in-dir|inputs-dir|data-dir|data|images|image-dir|src-dir|csv|input-csv|input-file|rows)$/.test(flagName(f))) continue;
    const value = (flagValue(args, f.flag) ?? f.default ?? '').replace(/^\.\//, '').replace(/\/$/, '');
    if (!value) continue;
    const files = [...uploaded].filter((p) => p.startsWith(`${value}/`));
    if (files.length) inputs = { kind: 'files', path: value, count: files.length };
    else if (/\.(csv|tsv)$/i.test(value) && uploaded.has(value)) inputs = { kind: 'rows', path: value, count: null };
    if (inputs) break;
  }
  const start = entry.flags.find((f) => /^(start|begin|start-index|from)$/.test(flagName(f)));
  const end = entry.flags.find((f) => /^(end|stop|end-index|to)$/.test(flagName(f)));
  const total = end ? Number(flagValue(args, end.flag) ?? end.default) : NaN;
  const range = start && end && Number.isInteger(total) && total > 0 ? { start: start.flag, end: end.flag, total } : null;
  return { inputs, range, mergeScript, reads: [...(inputs?.kind === 'rows' ? [inputs.path] : []), ...(mergeScript ? [mergeScript] : [])] };
}

/** The batch, range and loop shapes (shardShapes.ts), in that order; null when none fits. */
function otherShapes(entry: EntryPoint, args: string[], runner: string, source: string, resultFiles: string[], workers: number, request: string, shapes: Divisible & { readOf: (p: string) => string | undefined }) {
  let script: MergeScript | null = null;
  if (shapes.mergeScript) {
    const read = readMergeScript(shapes.mergeScript, shapes.readOf(shapes.mergeScript) ?? '');
    if (!read.script) return { spec: null, reason: `Not split into shards: ${read.why}.` };
    script = read.script;
  }
  const command = [runner, ...args].join(' ');
  const outDir = args.some((a, i) => a === 'outputs' && /^--?(out|output|out-dir|output-dir|outdir|save-dir)$/.test(args[i - 1] ?? ''));
  const file = resultFiles.find((f) => f.startsWith('outputs/') && /\.(json|csv|tsv)$/.test(f)) ?? literalResult(source);
  const result = file ? { kind: /\.(csv|tsv)$/.test(file) ? ('rows' as const) : ('json' as const), file } : outDir ? { kind: 'files' as const, file: 'outputs/' } : null;
  if (shapes.inputs) {
    let count = shapes.inputs.count;
    if (count === null) {
      const text = shapes.readOf(shapes.inputs.path) ?? '';
      if (text.length >= 20_000) return { spec: null, reason: `Not split into shards: ${shapes.inputs.path} is larger than the planner reads, so its rows could not be counted.` };
      count = splitCsv(text, shapes.inputs.path).rows;
    }
    return proposeBatch({ source, command, inputs: { ...shapes.inputs, count }, result, mergeScript: script, workers, unitSec: unitSeconds(request, count) });
  }
  if (shapes.range && file?.endsWith('.json')) return proposeRanges({ source, runner, args, startFlag: shapes.range.start, endFlag: shapes.range.end, total: shapes.range.total, resultFile: file, mergeScript: script, workers, unitSec: unitSeconds(request, shapes.range.total) });
  // No suitable flags: a top-level loop over a literal list or range, run through the driver.
  if (!entry.flags.length && topLevelLoop(source)) return proposeDriver({ path: entry.path, source, args, resultFile: file ?? null, mergeScript: script, workers, unitSec: null });
  return null;
}

/** A result file the script writes at a literal path under outputs/ (`open("outputs/sweep.json", "w")`). */
function literalResult(source: string): string | null {
  const m = /open\(\s*(?:os\.path\.join\(\s*["']outputs["']\s*,\s*["']([^"']+)["']\s*\)|["'](?:\.\/)?(outputs\/[^"']+\.(?:json|csv|tsv))["'])\s*,\s*["']w/.exec(source);
  return m ? (m[1] ? `outputs/${m[1]}` : m[2]!) : null;
}

/** Smoke runs do about this share of the full run (at least the minimum of their unit). */
const SMOKE_SHARE = 1 / 20;

/**
 * The smoke run (docs/architecture.md §4, "Smoke run"): the full command with its run length
 * cut to a small share — 2 epochs (two, so progress metrics give a time per epoch), 1/20 of
 * the steps or samples with a floor — and the scale that turns its timing into an estimate of
 * the full run. None when the entry point has no run-length flag with a known value, or when
 * the cut would not be smaller than the run itself (a tiny job needs no smoke run).
 */
function smokeRun(entry: EntryPoint, args: string[], runner: string, settings: Record<string, string>): { command: string; timeoutSec: number; scale: RunScale } | null {
  const rl = runLength(entry, args, settings);
  if (!rl) return null;
  const floor = rl.unit === 'epoch' ? 2 : rl.unit === 'step' ? 20 : 1000;
  const bounded = rl.unit === 'epoch' ? 2 : Math.max(floor, Math.ceil(rl.full * SMOKE_SHARE));
  if (bounded >= rl.full) return null;
  const out = withFlag(args, rl.flag.flag, String(bounded), entry.cli === 'configurator');
  return { command: [runner, ...out].join(' '), timeoutSec: 1800, scale: { unit: rl.unit, bounded, full: rl.full } };
}

/** The value `args` pass for `flag` (`--epochs 3` or `--max_iters=200`), or undefined. */
function flagValue(args: string[], flag: string): string | undefined {
  const eq = args.find((a) => a.startsWith(`${flag}=`));
  if (eq !== undefined) return eq.slice(flag.length + 1);
  const sep = args.indexOf(flag);
  return sep >= 0 ? args[sep + 1] : undefined;
}

/** `args` with `flag` set to `value`, in the form already there (else `--k=v` for a configurator). */
function withFlag(args: string[], flag: string, value: string, keyValue: boolean): string[] {
  const out = [...args];
  const eq = out.findIndex((a) => a.startsWith(`${flag}=`));
  const sep = out.indexOf(flag);
  if (eq >= 0) out[eq] = `${flag}=${value}`;
  else if (sep >= 0) out[sep + 1] = value;
  else if (keyValue) out.push(`${flag}=${value}`);
  else out.push(flag, value);
  return out;
}

interface RunScale {
  unit: string;
  bounded: number;
  full: number;
}

/**
 * The entry point's run-length flag (epochs, steps/iterations, samples/trials) and the full
 * run's value of it: what the command passes (`--epochs 20`, `--max_iters=200`), else the
 * config file's setting, else the flag's default. Null when there is none or its value is unknown.
 */
function runLength(entry: EntryPoint, args: string[], settings: Record<string, string>): { flag: ArgFlag; unit: string; full: number } | null {
  for (const f of entry.flags) {
    const m = /^(?:num-|max-|n-)?(epochs?|steps|iters|iterations|samples|trials|paths)$/.exec(flagName(f));
    if (!m) continue;
    const raw = flagValue(args, f.flag) ?? settings[f.flag.replace(/^--/, '')] ?? f.default;
    const full = Number(raw);
    if (!Number.isInteger(full) || full <= 0) continue;
    return { flag: f, unit: /^epoch/.test(m[1]!) ? 'epoch' : /^(steps|iters|iterations)$/.test(m[1]!) ? 'step' : m[1]!.replace(/s$/, ''), full };
  }
  return null;
}

/** The scale of boundedCommand's workload (1 epoch, 20 steps, 1000 samples) against the full run. */
function boundedScale(entry: EntryPoint, args: string[], settings: Record<string, string>): RunScale | undefined {
  const rl = runLength(entry, args, settings);
  if (!rl) return undefined;
  return { unit: rl.unit, bounded: rl.unit === 'epoch' ? 1 : rl.unit === 'step' ? 20 : 1000, full: rl.full };
}

/**
 * Flags written in the request: "--emsize 64", "--lr=0.1", "--dry-run" → emsize → "64",
 * lr → "0.1", dry-run → true. Names are normalized like the entry point's (dashes).
 */
export function requestFlags(request: string): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (const m of request.matchAll(/(?:^|\s)--([A-Za-z][\w-]*)(?:=(\S+)|\s+(?!-)([^\s,;]+))?/g)) {
    const raw = m[2] ?? m[3];
    // Sentence punctuation after the value is not part of it ("--epochs 3." / "--save 'a.pt',").
    const value = raw?.replace(/[,;:).]+$/, '').replace(/^(['"])(.*)\1$/, '$2');
    // "--epochs 2 and …": a following plain word that is not a value ("and", "then") is not taken.
    out.set(m[1]!.replace(/_/g, '-'), value !== undefined && !/^(and|then|with|for|to|on|in|please)$/i.test(value) ? value : true);
  }
  return out;
}


/** "run it with 50000 samples" → "50000" for --samples (also --batch-size ← "batch size 64"). */
function numberBefore(request: string, flagName: string): string | undefined {
  const words = flagName.split('-').join('[ _-]?');
  const before = new RegExp(`(\\d[\\d_]*(?:\\.\\d+)?)\\s+${words}s?\\b`, 'i').exec(request)?.[1];
  const after = new RegExp(`\\b${words}s?\\s+(?:of\\s+|=\\s*)?(\\d[\\d_]*(?:\\.\\d+)?)\\b`, 'i').exec(request)?.[1];
  return (before ?? after)?.replace(/_/g, '');
}

/**
 * A hosted service: read the Python files and the README/Makefile, find the app (the README's own
 * serve command's app spec first, else serviceApp.ts) and the README's setup steps before it
 * (planner/serviceSetup.ts), resolve what its start command imports like any dependency, and
 * submit a plan with `service` (readiness on the app's health path, or /; until stopped unless
 * the request gives a duration) and the setup steps as `before`.
 */
function planService(request: string, out: Outputs, facts: ProjectFacts): Item[] {
  const files = ((out.get('list_files')?.at(-1) as { files?: { path: string }[] } | undefined)?.files ?? []).map((f) => f.path);
  const read = new Map<string, string>();
  const tried = new Set<string>(); // a binary or unreadable file is asked for once
  for (const o of out.get('read_file') ?? []) {
    const r = o as { path?: string; content?: string };
    if (r.path) tried.add(r.path);
    if (r.path && typeof r.content === 'string') read.set(r.path, r.content);
  }
  for (const p of [...files.filter((f) => f.endsWith('.py')).slice(0, 10), ...serviceDocs(files)]) if (!tried.has(p)) return call('read_file', { path: p });
  const found = servicePlanParts(read, request);
  if ('reason' in found) return call('give_up', { reason: found.reason });
  const { app, before } = found;
  const hardware = { workload: facts.usesTorch ? 'torch-cpu' : 'python' };
  let install: string[] = [];
  if ([...importsOf(facts, [app.file]).keys()].some((m) => m !== 'torch' && m !== 'numpy') || app.servers.length) {
    const deps = out.get('check_dependencies')?.at(-1) as DependencyCheck | undefined;
    if (!deps) return call('check_dependencies', { files: [app.file], workload: hardware.workload });
    if (deps.unavailable.length) return call('give_up', { reason: deps.summary ?? `Unavailable on the workers: ${deps.unavailable.join(', ')}.` });
    install = deps.install;
  }
  const durationSec = requestedDuration(request);
  const setup = before.map((b) => `\`${b.command}\``).join(', then ');
  return call('submit_plan', {
    summary: `Serve ${app.file} (${app.framework}) as an HTTP endpoint on a ${hardware.workload} worker: ${setup ? `first ${setup} (the README's setup, its products handed to the service), then ` : ''}\`${app.command}\`${found.specFrom ? ` (the app as ${found.specFrom} starts it)` : ''} listening on $PORT, reachable at its URL with its access token once ${app.readinessPath} answers 2xx, ${durationSec ? `for ${durationSec} s` : 'until you stop it'}.${install.length ? ` A setup phase installs ${install.join(', ')} first.` : ''}`,
    steps: [
      ...before.map((b) => `Set up: \`${b.command}\`${b.produces.length ? ` (hands ${b.produces.join(', ')} to the service)` : ''}`),
      `Start \`${app.command}\` in the sandbox (its only network: the port the worker proxies to)`,
      `Serve it on a host of its own (<slug>.svc.…, and /svc/<slug>/ under the API's address for programs) once GET ${app.readinessPath} answers 2xx`,
      'Restart it on a compatible worker, at the same URL, if its worker is lost',
    ],
    command: app.command,
    environment: null,
    hardware: { workload: hardware.workload, accelVendor: null, minMemoryMiB: null, minAccelMemoryMiB: null },
    timeoutSec: null,
    outputs: ['outputs'],
    acceptance: { exitCode: 0, requiredFiles: [], metrics: [], evaluate: null },
    preparation: null,
    service: { readiness: { path: app.readinessPath, intervalSec: 1, timeoutSec: 5 }, durationSec, servers: app.servers },
    asks: withSetupSteps(serviceAsks(request, durationSec), request, found),
    ...(before.length ? { before } : {}),
    ...(install.length ? { install: { pip: install } } : {}),
  });
}
