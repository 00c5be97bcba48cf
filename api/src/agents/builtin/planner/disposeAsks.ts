/**
 * The builtin planner's asks rule (invariant 12): every ask of the request, matched against the
 * entry point's settings surface (list_settings) and the plan built so far, gets a disposition —
 * honoured (and the change that honours it: a flag, a configurator override, a config override,
 * an environment variable, a literal rewritten by set-settings, an output collected), asked (a
 * question with the candidate settings as choices), or refused (why, naming what the project
 * has). The rule reads no project-specific names: settings come from the surface, words from the
 * lexicon (planner/asks/lexicon.ts).
 *
 * Pure: the caller (requestAsks.ts) gives it the asks, the surface, the files it read and the
 * plan so far; it answers with the changes to make, or with a tool call it needs first (a file to
 * read, a question to ask).
 */
import type { Ask, Setting, SettingsSurface } from '../../planner/contract.js';
import { coerceValue, matchSetting } from '../../planner/asks/matchAsks.js';
import type { AskDisposition } from '../../../domain/jobs/planSchema.js';
import { offsetOf, type SettingEdit } from '../../../preparation/setSettings.js';
import { setFlag, shellWord } from './flags.js';

export interface AskContext {
  /** The request as the user wrote it (for words around an ask: "… for both models"). */
  request: string;
  asks: Ask[];
  /** The entry point's surface; null when no ask needs one (list_settings was not called). */
  surface: SettingsSurface | null;
  entry: string;
  /** A configurator script takes `--name=value`. */
  keyValue: boolean;
  /** The command's arguments as built so far (flags the request wrote, device, outputs …). */
  args: string[];
  /** How many leading arguments are positionals. */
  positionals: number;
  /** Text of a project file the planner read, or undefined (then the rule asks to read it). */
  read: (path: string) => string | undefined;
  /** Files of the upload. */
  uploaded: ReadonlySet<string>;
  /** The text of the Python files that will run (entry point and its local imports), for what they call. */
  runSource: string;
  /** The checkpoint the run keeps, if any; files it writes at literal paths; outputs so far. */
  checkpoint: string | null;
  /** The entry point's flags that name where it saves a file (`--save model.pt`), with their defaults. */
  saveFlags: { flag: string; default: string | null }[];
  writes: string[];
  /** Metric names with a threshold already in the criteria (the request's "accuracy above 0.9"). */
  thresholds: string[];
  hardware: { workload: string; accelVendor?: string };
  onlineSummary: string;
  /** The job's spending cap in CAD, or null. */
  capCad: number | null;
  /** The script or config the plan runs, and the steps before it. */
  targets: string[];
  setupSteps: string[];
  /** The answers the user gave so far (question text + answer). */
  answerTo: (marker: string) => string | undefined;
}

export interface AskPlan {
  dispositions: AskDisposition[];
  args: string[];
  edits: SettingEdit[];
  environment: { name: string; value: string }[];
  /** Extra outputs to collect and outputs that must exist (a folder ends in /). */
  outputs: string[];
  required: string[];
  /** Thresholds to add to the run's criteria. */
  metrics: { name: string; op: '<' | '<=' | '>' | '>='; value: number }[];
  timeoutSec: number | null;
  /** Sweeps the rule matched: the caller splits them into runs, or refuses them. */
  sweeps: { ask: Ask; setting: Setting; values: string[] }[];
  /** Scale asks ("across all available workers"): the caller honours them with shards, or refuses them. */
  scale: Ask[];
  /** The checkpoint's new path when an ask renamed it ("save the model as lm-small.pt"). */
  checkpoint: string | null;
  /** "run the sweep" with no setting named: the project's own sweep, run as written (split into shards when it can be). */
  ownSweep: Ask[];
}

export type AskStep =
  { need: 'read'; path: string } | { need: 'ask'; question: string; choices: string[] } | { need: 'none'; plan: AskPlan };

/** Kinds whose refusal stops the job before anything runs: the user asked for different work. */
export const BLOCKING_KINDS = new Set(['setting', 'sweep', 'output', 'target']);

/** The question's marker: the planner finds the answer to it among the user's messages. */
export const settingQuestionMarker = (ask: Ask) => `By "${ask.text}"`;

/** A plan of the asks with nothing decided yet: the command's arguments as given. */
export function emptyAskPlan(args: string[]): AskPlan {
  return {
    dispositions: [],
    args: [...args],
    edits: [],
    environment: [],
    outputs: [],
    required: [],
    metrics: [],
    timeoutSec: null,
    sweeps: [],
    scale: [],
    checkpoint: null,
    ownSweep: [],
  };
}

export function disposeAsks(ctx: AskContext): AskStep {
  const plan = emptyAskPlan(ctx.args);
  const settings = ctx.surface?.settings ?? [];
  const honour = (ask: Ask, detail: string, setting?: Setting) =>
    plan.dispositions.push({ ask: ask.text, kind: ask.kind, status: 'honoured', detail, ...(setting ? { setting: setting.id } : {}) });
  const refuse = (ask: Ask, detail: string) => plan.dispositions.push({ ask: ask.text, kind: ask.kind, status: 'refused', detail });
  const settingsList = (first: Setting[]) => describeSettings(first, settings, ctx.entry);

  for (const ask of ctx.asks) {
    switch (ask.kind) {
      case 'setting':
      case 'sweep': {
        // "run the sweep": the project's own sweep, as it is written (the caller says how it runs).
        if (ask.kind === 'sweep' && !ask.phrase && !ask.values?.length) {
          plan.ownSweep.push(ask);
          break;
        }
        const m = matchSetting(ask, settings, { entry: ctx.entry });
        let setting: Setting | undefined;
        if (m.status === 'ambiguous' && ask.kind === 'setting' && meansAll(ctx.request, ask)) {
          // "max_depth to 3 for both tree models": every place the name is set.
          const hows: string[] = [];
          let problem: string | null = null;
          for (const c of m.candidates) {
            const checked = coerceValue(ask.value, c);
            if (!checked.ok) {
              problem = checked.reason;
              break;
            }
            const applied = applySetting(ctx, plan, c, checked.value);
            if ('read' in applied) return { need: 'read', path: applied.read };
            if ('refused' in applied) {
              problem = applied.refused;
              break;
            }
            hows.push(applied.how);
          }
          if (problem) refuse(ask, problem);
          else honour(ask, `all ${m.candidates.length}: ${hows.join('; ')}`);
          break;
        }
        const narrowed = m.status === 'ambiguous' ? namedByOtherWords(ask, m.candidates) : null;
        if (narrowed) setting = narrowed;
        else if (m.status === 'ambiguous') {
          const choices = m.candidates.map((s) => settingLabel(s));
          const marker = settingQuestionMarker(ask);
          const answer = ctx.answerTo(marker);
          if (!answer)
            return {
              need: 'ask',
              question: `${marker}, which setting do you mean? ${ctx.entry} can be told: ${choices.join('; ')}.`,
              choices,
            };
          const said = answer.split(':').pop() ?? '';
          setting = m.candidates.find((s) => said.includes(settingLabel(s))) ?? m.candidates.find((s) => said.includes(s.name));
          if (!setting) {
            refuse(ask, `the answer "${said.trim()}" names none of ${choices.join('; ')}`);
            break;
          }
        } else if (m.status === 'none') {
          const unread = ctx.surface?.problems.length
            ? ` (not read: ${ctx.surface.problems
                .map((p) => `${p.file}: ${p.error}`)
                .join('; ')
                .slice(0, 300)})`
            : '';
          refuse(ask, `${ctx.entry} has no setting for "${ask.phrase ?? ask.text}"; ${settingsList(m.closest)}${unread}`);
          break;
        } else if (m.status === 'bad-value') {
          refuse(ask, `${m.reason}`);
          break;
        } else setting = m.setting;
        if (!setting) break;
        if (ask.kind === 'sweep') {
          const values = m.status === 'matched' && m.values?.length ? m.values : (ask.values ?? []);
          if (values.length < 2) {
            const marker = `Which values of ${setting.name}`;
            const answer = ctx.answerTo(marker);
            if (!answer)
              return {
                need: 'ask',
                question: `${marker} should the sweep run? Its default is ${setting.default ?? 'unknown'}; give the values separated by commas (e.g. ${exampleValues(setting)}).`,
                choices: [],
              };
            const given = (answer.split(':').pop() ?? '')
              .split(/[,\s]+/)
              .map((v) => v.trim())
              .filter(Boolean);
            const coerced = given.map((v) => coerceValue(v, setting!));
            const bad = coerced.find((c) => !c.ok);
            if (given.length < 2 || bad) {
              refuse(
                ask,
                bad && !bad.ok ? bad.reason : `a sweep needs at least two values of ${setting.name}; the answer gave ${given.length}`,
              );
              break;
            }
            plan.sweeps.push({ ask, setting, values: coerced.map((c) => (c.ok ? (c.value ?? '') : '')) });
          } else plan.sweeps.push({ ask, setting, values });
          break;
        }
        if (ask.values && ask.values.length > 1 && setting.type === 'list') {
          const checkedAll = ask.values.map((v) => coerceValue(v, { ...setting!, type: null }));
          const bad = checkedAll.find((c) => !c.ok);
          if (bad && !bad.ok) {
            refuse(ask, bad.reason);
            break;
          }
          const listed = applyList(plan, setting, ask.values);
          if ('refused' in listed) refuse(ask, listed.refused);
          else honour(ask, listed.how, setting);
          break;
        }
        const value = m.status === 'matched' ? (m.value ?? ask.value) : ask.value;
        const checked = coerceValue(value, setting);
        if (!checked.ok) {
          refuse(ask, checked.reason);
          break;
        }
        const applied = applySetting(ctx, plan, setting, checked.value);
        if ('read' in applied) return { need: 'read', path: applied.read };
        if ('refused' in applied) refuse(ask, applied.refused);
        else honour(ask, applied.how, setting);
        break;
      }
      case 'output': {
        const out = disposeOutput(ctx, plan, ask);
        if (out.ok) honour(ask, out.detail);
        else refuse(ask, out.detail);
        break;
      }
      case 'threshold': {
        if (!ask.metric || ask.op === undefined || ask.threshold === undefined) {
          refuse(ask, 'a threshold needs a metric, a comparison and a number (e.g. "accuracy above 0.9")');
          break;
        }
        const name = ask.metric.toLowerCase().replace(/\s+/g, '_');
        if (!ctx.thresholds.some((t) => t === name || t.endsWith(`_${name}`) || t.startsWith(`${name}_`)))
          plan.metrics.push({ name, op: ask.op, value: ask.threshold });
        honour(
          ask,
          `required: the ${name} the run (or the evaluation of its checkpoint) reports ${ask.op} ${ask.threshold}; a run that misses it fails`,
        );
        break;
      }
      case 'hardware': {
        const want = (ask.hardware ?? '').toLowerCase();
        const vendor = ctx.hardware.accelVendor;
        const fits = want === 'cpu' ? !vendor : want === 'gpu' ? !!vendor : want === vendor;
        if (fits) honour(ask, `runs on a ${ctx.hardware.workload}${vendor ? ` (${vendor})` : ''} worker`);
        else
          refuse(
            ask,
            `no online worker of that kind can run it (online: ${ctx.onlineSummary}); it runs on a ${ctx.hardware.workload} worker — resubmit with --hardware ${want === 'gpu' ? 'nvidia' : want} once one is online`,
          );
        break;
      }
      case 'limit': {
        if (ask.maxSeconds) {
          plan.timeoutSec = Math.max(60, Math.round(ask.maxSeconds));
          honour(ask, `the run is stopped after ${plan.timeoutSec} s (its time limit)`);
        } else if (ask.maxCost !== undefined) {
          if (ctx.capCad !== null && ctx.capCad <= ask.maxCost) honour(ask, `the job stops at its spending cap of ${ctx.capCad} CAD`);
          else
            refuse(
              ask,
              `the job's spending cap is ${ctx.capCad === null ? 'not set' : `${ctx.capCad} CAD`}; a cap is set when submitting (\`chatgpu submit … --cap ${ask.maxCost}\` or the dashboard's cap field), not by the request's words`,
            );
        } else refuse(ask, 'a limit needs an amount (e.g. "under 2 dollars") or a duration (e.g. "within 30 minutes")');
        break;
      }
      case 'target': {
        const t = ask.target ?? '';
        if (ctx.targets.some((x) => x === t || x.endsWith(`/${t}`) || t.endsWith(x))) honour(ask, `runs ${t}`);
        else refuse(ask, `the plan runs ${ctx.targets.join(' with ') || ctx.entry}; the project has no ${t} to run`);
        break;
      }
      case 'setup': {
        if (ctx.setupSteps.length) honour(ask, `runs first: ${ctx.setupSteps.map((s) => `\`${s}\``).join(', then ')}`);
        else
          refuse(
            ask,
            "the project's README and Makefile give no setup command to run first; upload the prepared files, or name the command",
          );
        break;
      }
      case 'scale':
        plan.scale.push(ask);
        break;
      default: {
        // "on the features in data/features": a file or folder of the upload the run reads.
        const f = ask.file?.replace(/^\.\//, '').replace(/\/$/, '');
        if (f && [...ctx.uploaded].some((u) => u === f || u.startsWith(`${f}/`))) {
          if (ctx.runSource.includes(f) || ctx.runSource.includes(f.split('/').pop()!))
            honour(ask, `${f} is in the upload, where ${ctx.entry} reads it`);
          else refuse(ask, `${f} is in the upload, but nothing ${ctx.entry} runs names it; say which setting should point at it`);
          break;
        }
        refuse(
          ask,
          'not understood as a setting and a value, an output, a sweep, a threshold, hardware or a limit; say it as one of those',
        );
      }
    }
  }
  return { need: 'none', plan };
}

/**
 * Of several candidates, the only one whose place the ask's other words name ("training seed 7" →
 * `train.seed`, not `prepare.seed`): a word of the ask (4+ letters) that begins a part of the
 * candidate's dotted name or file, or that such a part begins. Null when none or several fit.
 */
function namedByOtherWords(ask: Ask, candidates: Setting[]): Setting | null {
  // The words of the ask other than the setting's own name ("training seed 7" → "training").
  const own = new Set(candidates.map((c) => c.name.toLowerCase().split(/[._]/).pop()!));
  const words = ask.text
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w.length >= 4 && !own.has(w) && !own.has(w.replace(/s$/, '')));
  if (words.length === 0) return null;
  const partsOf = (c: Setting) =>
    [...c.name.toLowerCase().split(/[._]/).slice(0, -1), ...c.file.toLowerCase().split(/[/._]/)].filter((p) => p.length >= 3);
  // Only what tells them apart: a part every candidate has (the file they share) names none of them.
  const common = candidates.map(partsOf).reduce((a, b) => a.filter((p) => b.includes(p)));
  const fits = candidates.filter((c) => {
    const parts = partsOf(c).filter((p) => !common.includes(p));
    return words.some((w) => parts.some((p) => w.startsWith(p) || p.startsWith(w)));
  });
  return fits.length === 1 ? fits[0]! : null;
}

/** A list for a list-valued option: `--seeds 1 2 3` (nargs) or `--number 1 --number 2` (append, click multiple, typer List). */
function applyList(plan: Pick<AskPlan, 'args'>, s: Setting, values: string[]): { how: string } | { refused: string } {
  if (s.kind !== 'flag' || !s.flag)
    return { refused: `${s.name} takes a list only as a flag; a list for a ${s.kind} is not supported yet` };
  const flags = [s.flag, ...(s.aliases ?? [])];
  const spaced = s.nargs === '+' || s.nargs === '*' || /^\d+$/.test(s.nargs ?? '');
  // What the command already passes for it goes: the flag and its value(s).
  const kept: string[] = [];
  for (let i = 0; i < plan.args.length; i++) {
    const a = plan.args[i]!;
    if (flags.some((f) => a.startsWith(`${f}=`))) continue;
    if (!flags.includes(a)) {
      kept.push(a);
      continue;
    }
    if (spaced) while (i + 1 < plan.args.length && !plan.args[i + 1]!.startsWith('-')) i++;
    else i++;
  }
  const words = values.map((v) => shellWord(v));
  plan.args = spaced ? [...kept, s.flag, ...words] : [...kept, ...words.flatMap((w) => [s.flag!, w])];
  return { how: spaced ? `passed \`${s.flag} ${words.join(' ')}\`` : `passed ${words.map((w) => `\`${s.flag} ${w}\``).join(' ')}` };
}

/** Words right after an ask that say it is meant for every place its setting appears ("for both", "in all of them"). */
function meansAll(request: string, ask: Ask): boolean {
  const at = request.indexOf(ask.text);
  if (at < 0) return false;
  return /^[^.;]{0,40}?\b(both|all|every|each)\b/i.test(request.slice(at + ask.text.length));
}

/** "n_layer (constant in model.py)", "--epochs (flag)". */
export function settingLabel(s: Setting): string {
  if (s.kind === 'flag' || s.kind === 'configurator') return `${s.flag ?? s.name} (${s.kind})`;
  const where = `${s.file}${s.span ? ` line ${s.span.line}` : ''}`;
  return `${s.name} (${s.kind} in ${where}${s.expression ? `: ${s.expression.length > 60 ? `${s.expression.slice(0, 60)}…` : s.expression}` : ''})`;
}

function describeSettings(first: Setting[], all: Setting[], _entry: string): string {
  const shown = [...new Set([...first, ...all])]
    .slice(0, 12)
    .map((s) => `${s.flag ?? s.name}${s.default != null ? `=${s.default.length > 20 ? `${s.default.slice(0, 20)}…` : s.default}` : ''}`);
  if (shown.length === 0) return `it reads no flags, constants, config keys or environment variables that could be changed`;
  return `its settings are: ${shown.join(', ')}${all.length > shown.length ? `, and ${all.length - shown.length} more` : ''} (list them with \`chatgpu submit\` --wait, or ask for one of these by name)`;
}

function exampleValues(s: Setting): string {
  const d = Number(s.default);
  return Number.isFinite(d) && d !== 0
    ? [d / 2, d, d * 2].map((x) => (s.type === 'int' ? Math.max(1, Math.round(x)) : Number(x.toPrecision(3)))).join(', ')
    : '1, 2, 4';
}

/** A value as a Python literal of the setting's type ("cpu" → 'cpu', true → True). */
export function pythonLiteral(value: string, s: Setting): string {
  if (s.type === 'bool') return /^(true|1|yes|on)$/i.test(value) ? 'True' : 'False';
  if (s.type === 'int' || s.type === 'float') return value;
  if (s.type === 'list') return value;
  if (s.type === null && /^[-+]?(\d[\d_]*\.?\d*(e[-+]?\d+)?|\.\d+)$/i.test(value)) return value;
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export function applySetting(
  ctx: Pick<AskContext, 'positionals' | 'read' | 'entry'>,
  plan: Pick<AskPlan, 'args' | 'edits' | 'environment'>,
  s: Setting,
  value: string | undefined,
): { how: string } | { refused: string } | { read: string } {
  switch (s.kind) {
    case 'flag': {
      const flags = [s.flag ?? `--${s.name}`, ...(s.aliases ?? [])];
      const isSwitch = s.action === 'store_true' || s.action === 'store_false' || (s.type === 'bool' && !s.nargs && s.action !== 'store');
      if (isSwitch) {
        // store_true: passing it sets True; store_false: passing it sets False.
        const on = value === 'True' ? s.action !== 'store_false' : s.action === 'store_false';
        plan.args = setFlag(plan.args, flags, on ? '' : undefined, false, true);
        return { how: on ? `passed ${flags[0]}` : `${flags[0]} left out` };
      }
      plan.args = setFlag(plan.args, flags, value, false, false);
      return { how: `passed \`${flags[0]} ${shellWord(value ?? '')}\`` };
    }
    case 'configurator': {
      const flag = s.flag ?? `--${s.name}`;
      plan.args = setFlag(plan.args, [flag], value, true, false);
      return { how: `passed \`${flag}=${shellWord(value ?? '')}\`` };
    }
    case 'positional': {
      const pos = s.position ?? 0;
      if (pos < ctx.positionals) plan.args[pos] = shellWord(value ?? '');
      else if (pos === ctx.positionals) plan.args.splice(pos, 0, shellWord(value ?? ''));
      else return { refused: `${s.name} is positional argument ${pos + 1} of ${ctx.entry}, after ones the request does not give` };
      return { how: `passed as positional argument ${pos + 1} (${s.name})` };
    }
    case 'env':
      plan.environment.push({ name: s.env ?? s.name, value: value ?? '' });
      return { how: `environment variable ${s.env ?? s.name}=${value}` };
    case 'config-key':
      if (s.override) {
        plan.args.push(`${s.override}${shellWord(value ?? '')}`);
        return { how: `overridden on the command line: \`${s.override}${shellWord(value ?? '')}\`` };
      }
      if (s.format !== 'yaml' && s.format !== 'json' && s.format !== 'python')
        return {
          refused: `${s.name} is a key of ${s.file} (${s.format ?? 'unknown format'}), which ${ctx.entry} reads with no command-line override; rewriting ${s.format ?? 'such'} files is not supported yet — edit it and upload again`,
        };
    // falls through: a config file of a supported format is rewritten like a constant
    case 'constant': {
      if (!s.span) return { refused: `${s.name} in ${s.file} has no literal value to change (it is computed)` };
      const text = ctx.read(s.file);
      if (text === undefined) return { read: s.file };
      const start = offsetOf(text, s.span.line, s.span.col);
      const end = offsetOf(text, s.span.endLine, s.span.endCol);
      if (start === null || end === null) return { refused: `${s.name}'s position in ${s.file} could not be found` };
      const from = text.slice(start, end);
      const to =
        s.format === 'json'
          ? JSON.stringify(jsonValue(value ?? '', s))
          : s.format === 'yaml'
            ? yamlScalar(value ?? '', s)
            : pythonLiteral(value ?? '', s);
      if (from === to) return { how: `${s.name} is already ${from} in ${s.file}` };
      plan.edits.push({ file: s.file, name: s.name, ...s.span, from, to });
      return {
        how: `set-settings: ${s.name} = ${to} in ${s.file} line ${s.span.line} (was ${from}${s.expression ? `, in \`${s.expression}\`` : ''})`,
      };
    }
  }
}

function jsonValue(value: string, s: Setting): unknown {
  if (s.type === 'int' || s.type === 'float') return Number(value);
  if (s.type === 'bool') return /^(true|1|yes|on)$/i.test(value);
  return value;
}

function yamlScalar(value: string, s: Setting): string {
  if (s.type === 'bool') return /^(true|1|yes|on)$/i.test(value) ? 'true' : 'false';
  if (s.type === 'int' || s.type === 'float' || /^[-+]?\d/.test(value)) return value;
  return JSON.stringify(value);
}

const MODEL_SAVE = /\b(torch\.save|save_pretrained|joblib\.dump|pickle\.dump|\.save_model|\.save_weights|np\.save|\.save\()/;
const DRAWS = /\b(matplotlib|pylab|seaborn)\b/;
const SHOWS = /\.show\(\s*\)/;

function disposeOutput(ctx: AskContext, plan: AskPlan, ask: Ask): { ok: boolean; detail: string } {
  switch (ask.output) {
    case 'model':
      // "the model as lm-small.pt": where it is saved, like a file by name.
      if (ask.file) return disposeOutput(ctx, plan, { ...ask, output: 'file' });
      if (ctx.checkpoint)
        return {
          ok: true,
          detail: `${ctx.checkpoint} is collected${ctx.checkpoint.startsWith('outputs/') ? '' : ' with outputs/'} and reloaded on a worker to check it`,
        };
      if (MODEL_SAVE.test(ctx.runSource))
        return { ok: true, detail: `what ${ctx.entry} saves is collected (${ctx.writes.length ? ctx.writes.join(', ') : 'outputs/'})` };
      return {
        ok: false,
        detail: `${ctx.entry} never saves a model (no torch.save, save_pretrained, pickle or joblib dump), so there is none to hand back`,
      };
    case 'figures': {
      if (!DRAWS.test(ctx.runSource)) return { ok: false, detail: `${ctx.entry} draws no figures (it does not use matplotlib)` };
      const saved = ctx.writes.filter((w) => /\.(png|jpe?g|svg|pdf)$/i.test(w));
      plan.environment.push({ name: 'CHATGPU_FIGURES', value: 'outputs/figures' });
      if (SHOWS.test(ctx.runSource)) plan.required.push('outputs/figures/');
      return {
        ok: true,
        detail: `every figure is saved as it is shown or left open, under outputs/figures/${saved.length ? `; also ${saved.join(', ')}` : ''}`,
      };
    }
    case 'samples':
    case 'stdout':
    case 'report': {
      const file = `outputs/${ask.output === 'stdout' ? 'stdout' : ask.output}.txt`;
      plan.environment.push({ name: 'CHATGPU_STDOUT_FILE', value: file });
      plan.required.push(file);
      return { ok: true, detail: `what the program prints is saved as ${file}` };
    }
    case 'file': {
      const f = (ask.file ?? '').replace(/^\.\//, '');
      if (!f) return { ok: false, detail: 'no file name given' };
      const written = ctx.writes.find(
        (w) => w === f || w.endsWith(`/${f}`) || new RegExp(`^${w.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`).test(f),
      );
      if (written) {
        if (!plan.outputs.includes(written)) plan.outputs.push(written);
        return { ok: true, detail: `${written} is collected` };
      }
      // "Save the model as lm-small.pt": the flag that names where the program saves such a file.
      const ext = /\.[^./]+$/.exec(f)?.[0]?.toLowerCase();
      const saver =
        ctx.saveFlags.find((s) => s.default && ext && s.default.toLowerCase().endsWith(ext)) ??
        (ctx.saveFlags.length === 1 && !ctx.saveFlags[0]!.default ? ctx.saveFlags[0] : undefined);
      if (saver) {
        const target = f.startsWith('outputs/') ? f : `outputs/${f.split('/').pop()}`;
        plan.args = setFlag(plan.args, [saver.flag], target, false, false);
        if (/\.(pt|pth|ckpt|bin|safetensors)$/i.test(target)) plan.checkpoint = target;
        else plan.required.push(target);
        return { ok: true, detail: `passed \`${saver.flag} ${target}\`: the program saves it there and it is collected` };
      }
      // Named on the command line (`python src/train.py data/features model.pkl`): where the program writes it.
      if (plan.args.includes(f)) {
        if (!plan.outputs.includes(f)) plan.outputs.push(f);
        plan.required.push(f);
        return { ok: true, detail: `the command names it (\`${f}\`); the run writes it there and it is collected` };
      }
      if (ctx.runSource.includes(f.split('/').pop()!)) return { ok: true, detail: `${f} is collected with what the run writes` };
      if (ctx.uploaded.has(f)) return { ok: false, detail: `${f} is one of the project's inputs, not something the run makes` };
      return { ok: false, detail: `nothing ${ctx.entry} runs writes ${f}` };
    }
    case 'metrics':
      return { ok: true, detail: "the metrics the run prints are kept (job.json, the job page's charts)" };
    case 'logs':
      return { ok: true, detail: "the run's logs are kept (`chatgpu logs JOB`, the job page)" };
    case 'data':
      return { ok: true, detail: 'what the run writes under outputs/ is collected' };
    default:
      return {
        ok: false,
        detail: 'not understood as an output: say the model, the figures, the samples, the output of each run, or a file by name',
      };
  }
}
