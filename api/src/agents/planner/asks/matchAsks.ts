/**
 * An ask matched against a project's settings surface (contract.ts: SettingMatch).
 *
 * Which settings fit, best first (a score per setting):
 *   100  the same name: the ask's words and the setting's name, flag, an alias or its variable,
 *        equal up to case, plural, `-`/`_`/spaces (lexicon.ts#compactName): "epochs" ≈ `--epochs`
 *    95  the last part of a config key: "hidden size" ≈ `model.hidden_size`
 *    90  the part before a key that picks one: "optimizer" ≈ `optimizer.name`
 *    90  (also) a positional by its place: "first argument" ≈ the positional at index 0
 *    80  one lexicon group: "iterations" ≈ `max_iters`, "n_embd" ≈ `--emsize`
 *    70  a lexicon group through the name's words: "epochs" ≈ `num_train_epochs`
 *    60  the same name without count prefixes: "particles" ≈ `n_particles`
 *    85  the help text (or a constant's comment) has every word of a phrase of two or more words that is
 *        not itself in the lexicon: "mesh step" ≈ `h` ("step size of the mesh"), over `max_iter` by "step"
 *    50  the help text has all the ask's words: "warmup" ≈ `--wu` ("linear warmup length")
 *    40  the help text has a word of the ask's lexicon group
 * A setting that says where outputs go (`out_dir`, `--save-path` …) never fits an ask for a number.
 *
 * When several fit equally, in this order:
 *   1. with `entry`: the settings the entry point reads itself (its file, or a config whose
 *      `readBy` names it) — a same-named setting of another script is not this run's;
 *   2. the one spelled exactly as the ask ("seeds" → `--seeds` over `--seed`);
 *   3. a sweep prefers a list-valued setting (`--seeds 1 2 3`), a single value a scalar one;
 *   4. the same name in several places (nanoGPT's `n_layer` in train.py and in
 *      config/train_shakespeare_char.py): the place a command line changes wins, in the order
 *      flag, configurator, positional, env, config-key, constant — a `--n_layer=2` override is
 *      applied after the config file, so it is the value the run gets, and needs no rewrite;
 *   5. anything still tied is 'ambiguous': the planner asks which one.
 *
 * Values are checked against the setting's type and choices and coerced to the form the project
 * reads: "1e3" for an int → "1000"; "yes"/"true"/"on" for a bool → "True"; a choice in the
 * choice's own spelling. A fraction for an int flag is 'bad-value' (argparse would refuse it);
 * for a constant or a config key whose lexicon group is a float (weight decay written as `0`),
 * it is accepted.
 */
import type { Ask, Setting, SettingKind, SettingMatch } from '../contract.js';
import {
  compactName,
  coreName,
  isOutputLocation,
  lexiconGroups,
  lexiconGroupsByWords,
  normalizeName,
  type LexiconGroup,
} from './lexicon.js';

export interface MatchOptions {
  /** The entry point the run uses: its own settings win over a same-named setting elsewhere. */
  entry?: string | null;
}

const KIND_RANK: Record<SettingKind, number> = { flag: 0, configurator: 1, positional: 2, env: 3, 'config-key': 4, constant: 5 };

const ORDINALS: Record<string, number> = {
  first: 0,
  second: 1,
  third: 2,
  fourth: 3,
  fifth: 4,
  sixth: 5,
  '1st': 0,
  '2nd': 1,
  '3rd': 2,
  '4th': 3,
  '5th': 4,
  '6th': 5,
  last: -1,
};

/** How many settings a 'none' names. */
const CLOSEST = 5;

const HELP_STOP = new Set([
  'the',
  'a',
  'an',
  'of',
  'to',
  'for',
  'in',
  'on',
  'and',
  'or',
  'with',
  'number',
  'num',
  'use',
  'default',
  'is',
  'be',
  'size',
]);

/** A help text's way of saying the ask's word: "an image every N steps" is the image interval. */
const HELP_SAME: Record<string, string[]> = {
  interval: ['every', 'frequency', 'freq', 'period', 'often'],
  batch: ['iteration', 'iter', 'step'],
  image: ['figure', 'plot', 'snapshot', 'frame', 'picture', 'png'],
};

/** The help text has every content word of the phrase (at least `min` of them), or its help-text synonym. */
function helpHasAll(phrase: string, helpText: string, min: number): boolean {
  const help = new Set(words(helpText));
  const pw = words(phrase).filter((w) => !HELP_STOP.has(w));
  return pw.length >= min && pw.every((w) => help.has(w) || (HELP_SAME[w] ?? []).some((x) => help.has(x)));
}

function words(s: string): string[] {
  return normalizeName(s.replace(/[^\p{L}\p{N}]+/gu, ' '))
    .split('_')
    .filter(Boolean);
}

/** The names a setting answers to, with the score an equal name earns. */
function names(s: Setting): { name: string; score: number }[] {
  const out: { name: string; score: number }[] = [{ name: s.name, score: 100 }];
  if (s.flag) out.push({ name: s.flag, score: 100 });
  for (const a of s.aliases ?? []) out.push({ name: a, score: 100 });
  if (s.env) out.push({ name: s.env, score: 100 });
  if (s.name.includes('.')) {
    const parts = s.name.split('.');
    out.push({ name: parts[parts.length - 1]!, score: 95 });
    // `optimizer.name`, `model.type`: the key that picks one is named by its parent ("the adam optimizer").
    if (parts.length > 1 && /^(name|type|kind|class|_target_|choice|select|id)$/.test(parts[parts.length - 1]!))
      out.push({ name: parts[parts.length - 2]!, score: 90 });
  }
  return out;
}

function positionOf(phrase: string): number | null {
  const m =
    /^(?:the\s+)?(?:script's\s+)?(\w+)\s+(?:positional\s+|command-line\s+|cli\s+|script\s+)?(?:argument|arg|parameter|param|positional|input)s?\b/i.exec(
      phrase.trim(),
    );
  if (!m) return null;
  const n = ORDINALS[m[1]!.toLowerCase()];
  return n === undefined ? null : n;
}

function isNumber(v: string): boolean {
  return v.trim() !== '' && Number.isFinite(Number(v.replace(/_/g, '')));
}

function isQuantity(ask: Ask): boolean {
  if (ask.value !== undefined) return isNumber(ask.value);
  if (ask.values && ask.values.length > 0) return ask.values.every(isNumber);
  // A sweep with its values still to come is about a quantity too ("six values of dt").
  return ask.kind === 'sweep';
}

function isList(s: Setting): boolean {
  if (s.type === 'list') return true;
  const n = s.nargs;
  return n === '+' || n === '*' || (n != null && /^\d+$/.test(n) && Number(n) > 1);
}

function settingGroups(s: Setting): { direct: LexiconGroup[]; byWords: LexiconGroup[] } {
  const direct = new Set<LexiconGroup>();
  const byWords = new Set<LexiconGroup>();
  for (const { name } of names(s)) {
    for (const g of lexiconGroups(name)) direct.add(g);
    for (const g of lexiconGroupsByWords(name)) byWords.add(g);
  }
  return { direct: [...direct], byWords: [...byWords] };
}

function phraseGroups(phrase: string): LexiconGroup[] {
  const direct = lexiconGroups(phrase);
  return direct.length > 0 ? direct : lexiconGroupsByWords(phrase);
}

function score(phrase: string, s: Setting): number {
  const pc = compactName(phrase);
  if (!pc) return 0;
  let best = 0;
  for (const { name, score: sc } of names(s)) if (compactName(name) === pc) best = Math.max(best, sc);
  if (best > 0) return best;
  const pg = phraseGroups(phrase);
  // "mesh step" ≈ `h` ("step size of the mesh"): a help text or comment that has every word of a
  // phrase of several words says more than the lexicon group one of those words is in.
  if (s.help && lexiconGroups(phrase).length === 0 && helpHasAll(phrase, s.help, 2)) return 85;
  const { direct, byWords } = settingGroups(s);
  if (pg.some((g) => direct.includes(g))) return 80;
  if (pg.some((g) => byWords.includes(g))) return 70;
  // "particles" ≈ `n_particles`, "number of particles" ≈ `num_particles`.
  const core = coreName(phrase);
  if (core.length > 1 && names(s).some((n) => coreName(n.name) === core)) return 60;
  if (s.help) {
    if (helpHasAll(phrase, s.help, 1)) return 50;
    const helpText = ` ${words(s.help).join(' ')} `;
    for (const g of pg) {
      if (g.words.some((w) => w.length > 2 && helpText.includes(` ${words(w).join(' ')} `))) return 40;
    }
  }
  return 0;
}

/** Character-bigram overlap of two names (Dice), for naming the closest settings. */
function similarity(a: string, b: string): number {
  const bigrams = (s: string) => {
    const out = new Map<string, number>();
    for (let i = 0; i < s.length - 1; i++) out.set(s.slice(i, i + 2), (out.get(s.slice(i, i + 2)) ?? 0) + 1);
    return out;
  };
  const x = compactName(a);
  const y = compactName(b);
  if (x.length < 2 || y.length < 2) return x === y ? 1 : 0;
  const bx = bigrams(x);
  const by = bigrams(y);
  let common = 0;
  for (const [k, n] of bx) common += Math.min(n, by.get(k) ?? 0);
  return (2 * common) / (x.length - 1 + (y.length - 1));
}

/** The settings most like the ask's words, one per name (the place a command line changes first). */
function closest(phrase: string, settings: Setting[]): Setting[] {
  const ranked = settings
    .map((s, i) => ({ s, i, sim: Math.max(...names(s).map((n) => similarity(phrase, n.name))) }))
    .sort((a, b) => b.sim - a.sim || KIND_RANK[a.s.kind] - KIND_RANK[b.s.kind] || a.i - b.i);
  const seen = new Set<string>();
  const out: Setting[] = [];
  for (const { s } of ranked) {
    const key = compactName(s.name);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(s);
    if (out.length === CLOSEST) break;
  }
  return out;
}

const TRUE_WORDS = new Set(['true', 'yes', 'on', '1', 'enable', 'enabled', 'y']);
const FALSE_WORDS = new Set(['false', 'no', 'off', '0', 'disable', 'disabled', 'n', 'none']);

function unquote(v: string): string {
  const t = v.trim();
  return /^(["'`]).*\1$/s.test(t) && t.length >= 2 ? t.slice(1, -1) : t;
}

/** One value checked against a setting: its coerced form, or why it does not fit. */
export function coerceValue(
  value: string | undefined,
  s: Setting,
): { ok: true; value: string | undefined } | { ok: false; reason: string } {
  const label = s.flag ?? s.name;
  const boolish = s.type === 'bool' || s.action === 'store_true' || s.action === 'store_false';
  if (value === undefined) {
    if (boolish) return { ok: true, value: 'True' };
    if (s.action === 'count' || s.action === 'store_const' || s.action === 'help' || s.action === 'version')
      return { ok: true, value: undefined };
    return {
      ok: false,
      reason: `${label} needs a value${s.type ? ` (${s.type === 'int' ? 'a whole number' : s.type === 'float' ? 'a number' : s.type})` : ''}`,
    };
  }
  const v = unquote(value);
  if (s.choices && s.choices.length > 0) {
    const hit =
      s.choices.find((c) => c === v) ??
      s.choices.find((c) => c.toLowerCase() === v.toLowerCase()) ??
      (isNumber(v) ? s.choices.find((c) => isNumber(c) && Number(c) === Number(v.replace(/_/g, ''))) : undefined);
    if (hit === undefined) return { ok: false, reason: `"${v}" is not one of ${label}'s choices: ${s.choices.join(', ')}` };
    return { ok: true, value: hit };
  }
  if (boolish) {
    if (TRUE_WORDS.has(v.toLowerCase())) return { ok: true, value: 'True' };
    if (FALSE_WORDS.has(v.toLowerCase())) return { ok: true, value: 'False' };
    return { ok: false, reason: `${label} is true or false; "${v}" is neither` };
  }
  if (s.type === 'int') {
    const n = Number(v.replace(/_/g, ''));
    if (!isNumber(v)) return { ok: false, reason: `${label} takes a whole number; "${v}" is not a number` };
    if (!Number.isInteger(n)) {
      // A literal `0` for weight decay is still a rate: only an argparse int really refuses 2.5.
      const floaty = settingGroups(s)
        .direct.concat(settingGroups(s).byWords)
        .some((g) => g.valueType === 'float');
      if (floaty && s.kind !== 'flag' && s.kind !== 'positional') return { ok: true, value: v };
      return { ok: false, reason: `${label} takes a whole number; ${v} is not one` };
    }
    if (!Number.isSafeInteger(n)) return { ok: false, reason: `${label}: ${v} is too large a whole number` };
    return { ok: true, value: String(n) };
  }
  if (s.type === 'float') {
    if (!isNumber(v) && !/^[-+]?(inf|infinity|nan)$/i.test(v)) return { ok: false, reason: `${label} takes a number; "${v}" is not one` };
    return { ok: true, value: v.replace(/_/g, '') };
  }
  return { ok: true, value: v };
}

function checkValues(ask: Ask, s: Setting): SettingMatch {
  if (ask.kind === 'sweep') {
    if (!ask.values) return { status: 'matched', setting: s };
    const out: string[] = [];
    for (const v of ask.values) {
      // A list-valued setting takes each value as one item.
      const c = isList(s) ? { ok: true as const, value: unquote(v) } : coerceValue(v, s);
      if (!c.ok) return { status: 'bad-value', setting: s, reason: c.reason };
      out.push(c.value ?? v);
    }
    return { status: 'matched', setting: s, values: out };
  }
  // "sum the numbers 1.5, 2 and 3": a list for one run, item by item, into a list-valued setting.
  if (ask.values && ask.values.length > 1) {
    if (!isList(s))
      return {
        status: 'bad-value',
        setting: s,
        reason: `${s.flag ?? s.name} takes one value; the request gives ${ask.values.length} (${ask.values.join(', ')}): say "one run per value" to sweep them`,
      };
    return { status: 'matched', setting: s, values: ask.values.map(unquote) };
  }
  const c = coerceValue(ask.value, s);
  if (!c.ok) return { status: 'bad-value', setting: s, reason: c.reason };
  return c.value === undefined ? { status: 'matched', setting: s } : { status: 'matched', setting: s, value: c.value };
}

/** Narrow a tie by the rules in this file's header; one left → the setting. */
function breakTie(ask: Ask, phrase: string, tied: Setting[], opts: MatchOptions): Setting[] {
  let c = tied;
  const keep = (pred: (s: Setting) => boolean) => {
    const f = c.filter(pred);
    if (f.length > 0) c = f;
  };
  // "seed 7 in params.yaml": the setting of the file the request names.
  if (ask.file) {
    const file = ask.file.replace(/^\.\//, '');
    keep((s) => s.file === file || s.file.endsWith(`/${file}`));
  }
  if (opts.entry) {
    const entry = opts.entry;
    keep((s) => s.file === entry || (s.readBy ?? []).includes(entry));
  }
  if (c.length > 1) {
    const spelled = phrase.trim().replace(/^-+/, '').replace(/[-\s]/g, '_').toLowerCase();
    keep((s) => names(s).some((n) => n.name.replace(/^-+/, '').replace(/-/g, '_').toLowerCase() === spelled));
  }
  if (c.length > 1) keep((s) => (ask.kind === 'sweep' ? isList(s) : !isList(s)));
  if (
    c.length > 1 &&
    new Set(c.map((s) => compactName(s.name.includes('.') ? s.name.slice(s.name.lastIndexOf('.') + 1) : s.name))).size === 1
  ) {
    const top = Math.min(...c.map((s) => KIND_RANK[s.kind]));
    c = c.filter((s) => KIND_RANK[s.kind] === top);
  }
  return c;
}

const DEVICE_VALUE: Record<string, string> = { cpu: 'cpu', nvidia: 'cuda', amd: 'cuda', gpu: 'cuda', apple: 'mps' };

/** "on CPU" against a `--device` (→ cpu), a `--cuda` switch (→ False) or a `--cpu` switch (→ True). */
function matchHardware(ask: Ask, settings: Setting[], opts: MatchOptions): SettingMatch {
  const hw = ask.hardware ?? 'gpu';
  const fits = settings.filter((s) => score('device', s) >= 70 && !isOutputLocation(s.name));
  if (fits.length === 0) return { status: 'none', closest: [] };
  const boolish = (s: Setting) => s.type === 'bool' || s.action === 'store_true' || s.action === 'store_false';
  // A device string says it most directly; then the switch for this hardware.
  const strings = breakTie(
    ask,
    'device',
    fits.filter((s) => !boolish(s)),
    opts,
  );
  if (strings.length > 1) return { status: 'ambiguous', candidates: strings };
  if (strings.length === 1) return checkValues({ ...ask, kind: 'setting', value: DEVICE_VALUE[hw] ?? 'cuda' }, strings[0]!);
  const sw = (re: RegExp) => fits.filter((s) => re.test(compactName(s.name)));
  const cpuSwitch = sw(/^(cpu|nocuda|nogpu|usecpu|forcecpu)$/);
  const cudaSwitch = sw(/^(cuda|gpu|usecuda|usegpu)$/);
  const mpsSwitch = sw(/^(mps|usemps)$/);
  const noMps = sw(/^(nomps)$/);
  const one = (list: Setting[], value: string): SettingMatch =>
    list.length === 1 ? { status: 'matched', setting: list[0]!, value } : { status: 'ambiguous', candidates: list };
  if (hw === 'cpu') {
    if (cpuSwitch.length > 0) return one(cpuSwitch, 'True');
    if (cudaSwitch.length > 0) return one(cudaSwitch, 'False');
    if (mpsSwitch.length > 0) return one(mpsSwitch, 'False');
    if (noMps.length > 0) return one(noMps, 'True');
  } else if (hw === 'apple') {
    if (mpsSwitch.length > 0) return one(mpsSwitch, 'True');
    if (noMps.length > 0) return one(noMps, 'False');
    const s = cudaSwitch[0] ?? cpuSwitch[0] ?? fits[0]!;
    return {
      status: 'bad-value',
      setting: s,
      reason: `${s.flag ?? s.name} switches CUDA or the CPU; the project has no setting for Apple's MPS`,
    };
  } else {
    if (cudaSwitch.length > 0) return one(cudaSwitch, 'True');
    if (cpuSwitch.length > 0) return one(cpuSwitch, 'False');
    const s = fits[0]!;
    return { status: 'bad-value', setting: s, reason: `${s.flag ?? s.name} does not switch a GPU on` };
  }
  return { status: 'ambiguous', candidates: fits };
}

/**
 * The setting an ask is about, among `settings`. Asks that are not about a setting (outputs,
 * scale, limits …) match nothing ('none' with no closest settings); a hardware ask matches a
 * device setting when the project has one.
 */
export function matchSetting(ask: Ask, settings: Setting[], opts: MatchOptions = {}): SettingMatch {
  if (ask.kind === 'hardware') return matchHardware(ask, settings, opts);
  if (ask.kind !== 'setting' && ask.kind !== 'sweep') return { status: 'none', closest: [] };
  const quantity = isQuantity(ask);
  const eligible = quantity ? settings.filter((s) => !isOutputLocation(s.name)) : settings;
  const phrase = ask.phrase?.trim() ?? '';
  if (!phrase) return { status: 'none', closest: eligible.slice(0, CLOSEST) };

  let scored: { s: Setting; sc: number }[];
  const pos = positionOf(phrase);
  if (pos !== null) {
    const positionals = eligible.filter((s) => s.kind === 'positional').sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
    const s = pos === -1 ? positionals[positionals.length - 1] : positionals.find((p) => (p.position ?? 0) === pos);
    if (!s) return { status: 'none', closest: positionals.length > 0 ? positionals.slice(0, CLOSEST) : closest(phrase, eligible) };
    scored = [{ s, sc: 90 }];
  } else {
    scored = eligible.map((s) => ({ s, sc: score(phrase, s) })).filter((x) => x.sc > 0);
  }
  if (scored.length === 0) return { status: 'none', closest: closest(phrase, eligible) };
  const best = Math.max(...scored.map((x) => x.sc));
  const tied = breakTie(
    ask,
    phrase,
    scored.filter((x) => x.sc === best).map((x) => x.s),
    opts,
  );
  if (tied.length > 1) return { status: 'ambiguous', candidates: tied };
  return checkValues(ask, tied[0]!);
}

/** Every ask of a request matched at once (the asks that are not about a setting are left out). */
export function matchAsks(asks: Ask[], settings: Setting[], opts: MatchOptions = {}): Map<string, SettingMatch> {
  const out = new Map<string, SettingMatch>();
  for (const a of asks)
    if (a.kind === 'setting' || a.kind === 'sweep' || a.kind === 'hardware') out.set(a.id, matchSetting(a, settings, opts));
  return out;
}
