/**
 * The two sides of a request, and the match between them (DESIGN.md invariant 12).
 *
 *   settings surface  what a project lets a user change (list_settings: settings/listSettings.ts)
 *   asks              what the user's words ask for (asks/parseAsks.ts)
 *   disposition       each ask's fate in the plan: honoured (how), asked (the question), refused (why)
 *
 * Glossary: a *setting* has one address (a flag, a positional, a configurator global, a module
 * constant — possibly one literal inside an expression — a config-file key, an environment
 * variable); an *ask* is one span of the request; the *lexicon* maps the field's words to the
 * names projects use for the same setting (iterations ≈ iters ≈ max_iters ≈ steps …).
 * Types only: no logic lives here.
 */

/** Where a setting lives, and therefore how it is changed. */
export type SettingKind =
  /** An argparse / click / typer / fire option: changed by passing the flag. */
  | 'flag'
  /** A positional argument: changed by its place on the command line. */
  | 'positional'
  /** A nanoGPT-style configurator global (`exec(open('configurator.py').read())`): `--name=value`. */
  | 'configurator'
  /** A module-level constant of literal value (or one literal inside an expression): a set-settings rewrite. */
  | 'constant'
  /** A key of a JSON / YAML / TOML / INI / OmegaConf file the entry point reads: an override or a rewrite. */
  | 'config-key'
  /** An environment variable the code reads (`os.environ.get("LR", "3e-4")`): set in the plan's environment. */
  | 'env';

export type SettingType = 'int' | 'float' | 'str' | 'bool' | 'list' | null;

/** A source span as Python's `ast` gives it: 1-based lines, 0-based UTF-8 columns (end exclusive). */
export interface Span {
  line: number;
  col: number;
  endLine: number;
  endCol: number;
}

export interface Setting {
  /** Stable and unique in one surface: `${file}#${name}` (a literal inside an expression: `${file}#${name}@${line}:${col}`; an environment variable: `${file}#env:${name}`). */
  id: string;
  /** The name a user would use: `epochs` for `--epochs`, `n_embd`, `dt`, `model.hidden_size`, `LR`. */
  name: string;
  kind: SettingKind;
  /** The file it lives in (the entry point, a config file, a config module). */
  file: string;
  type: SettingType;
  /** The default as written in the source ("0.1", "'cpu'" unquoted → "cpu", "[1, 2, 3]"), null when unknown. */
  default: string | null;
  help: string | null;
  choices?: string[] | null;
  /** kind flag / configurator: the flag as passed (`--max_iters`, `-e` aliases in `aliases`). */
  flag?: string;
  aliases?: string[];
  /** argparse `nargs` ('+', '*', 2) — a list-valued flag when '+' or '*' or a number > 1. */
  nargs?: string | null;
  /** store_true / store_false / count … for a flag. */
  action?: string | null;
  /** kind positional: its index among the positionals. */
  position?: number;
  /** kind constant / configurator / config-key in a .py file: the literal's span (what a rewrite replaces). */
  span?: Span;
  /** kind constant inside an expression: the statement's source (`dt = 0.1*dx*dx`), for a person to read; of a statement over several lines, the part around the literal (`classifiers = … DecisionTreeClassifier(max_depth=5) …`). */
  expression?: string;
  /** kind env: the variable's name. */
  env?: string;
  /** kind config-key: the file's format. */
  format?: 'json' | 'yaml' | 'toml' | 'ini' | 'python';
  /** kind config-key: the entry points that read this file (by a literal path in their source or a README command). */
  readBy?: string[];
  /** kind config-key: how the command line overrides it without a rewrite, the value to follow: `--n_layer=` (a configurator's config module), `model.lr=` (Hydra, OmegaConf.from_cli). */
  override?: string;
  /** A .py setting: where in the file it is — `module`, `main-guard` (inside `if __name__ == "__main__":`) or a function (`main()`). */
  scope?: string;
}

export interface SettingsSurface {
  /** The entry point the surface was read for (its flags, constants, the configs it reads), or null for the whole project. */
  entry: string | null;
  settings: Setting[];
  /** Files that could not be read, with why (a syntax error, binary, too large, a config that does not parse). */
  problems: { file: string; error: string }[];
}

/** What one span of the request asks for. */
export type AskKind =
  /** A value for a setting: "200 iterations", "n_embd 64", "lr 3e-4", "--emsize 64", "batch size 32". */
  | 'setting'
  /** Several values of one setting, one run each: "sweep dt over 0.1, 0.2, 0.4", "seeds 1 to 5". */
  | 'sweep'
  /** Something to hand back: the model, the figures, samples, a metric, each run's output, a file by name. */
  | 'output'
  /** How widely to run: "across all available workers", "on 4 workers". */
  | 'scale'
  /** A metric threshold: "accuracy above 0.9". */
  | 'threshold'
  /** Where to run: "on CPU", "on an AMD GPU". */
  | 'hardware'
  /** A spending cap or deadline: "under 2 dollars", "within an hour". */
  | 'limit'
  /** Which script or config to run: "run config/train_shakespeare_char.py", "with main.py". */
  | 'target'
  /** A setup step the user names: "initialise the database first". */
  | 'setup'
  /** A request the parser recognised as an ask but could not classify further. */
  | 'other';

export type OutputWanted = 'model' | 'figures' | 'samples' | 'metrics' | 'report' | 'stdout' | 'file' | 'data' | 'logs';

export interface Ask {
  /** a1, a2, … in the order of the request. */
  id: string;
  kind: AskKind;
  /** The words of the request this ask came from, as the user wrote them. */
  text: string;
  /** setting / sweep: the words naming the setting ("iterations", "n_embd", "block size", "learning rate", "--emsize");
   *  setup: what the step acts on ("database"); other: the words ("tiny model"). */
  phrase?: string;
  /** setting: the value as written ("200", "64", "3e-4", "False", "cpu"), a number without separators or suffixes ("1,000" and "1_000" → "1000", "10k" → "10000", "two" → "2", "90%" → "0.9"). */
  value?: string;
  /** sweep: the values, in order (a range expanded: "1 to 5" → 1..5; at most 64).
   *  setting: the items of a list-valued setting, all for one run ("sum the numbers 1.5, 2 and 3" → ['1.5', '2', '3']);
   *  `value` then holds them joined by spaces ("1.5 2 3"). The words "one run per …" make such a list a sweep. */
  values?: string[];
  /** output: what is wanted, and the file for kind 'file' (or the name to save the model under: "save the model as lm.pt");
   *  other: a file or folder the request names that the run reads ("train on data.csv");
   *  setting / sweep: the config file the request says the setting lives in ("seed 7 in params.yaml"). */
  output?: OutputWanted;
  file?: string;
  /** threshold. */
  metric?: string;
  op?: '<' | '<=' | '>' | '>=';
  threshold?: number;
  /** hardware: cpu | nvidia | amd | apple | gpu (also on a scale ask: "on 4 GPUs"). */
  hardware?: string;
  /** scale: a worker count, or 'all'. */
  workers?: number | 'all';
  /** target: a file the request names (or a config by name: "the shakespeare_char config"); setup: the script or make target it runs. */
  target?: string;
  /** limit: a spending cap in the currency the user named ("under $2" → 2). */
  maxCost?: number;
  /** limit: a time cap in seconds ("within 30 minutes" → 1800). */
  maxSeconds?: number;
}

/** An ask matched against a surface (asks/matchAsks.ts). */
export type SettingMatch =
  | { status: 'matched'; setting: Setting; value?: string; values?: string[] }
  /** Two or more settings fit equally: ask which. */
  | { status: 'ambiguous'; candidates: Setting[] }
  /** None fits: refuse, naming the settings there are (the closest first). */
  | { status: 'none'; closest: Setting[] }
  /** The setting is there but the value does not fit its type or choices. */
  | { status: 'bad-value'; setting: Setting; reason: string };

export type DispositionStatus = 'honoured' | 'asked' | 'refused';

/** One ask's fate, as the plan records it (plan.asks) and the final summary reports it. */
export interface Disposition {
  ask: string;
  kind: AskKind;
  status: DispositionStatus;
  /** honoured: how ("--max_iters=200", "n_layer = 2 in train.py line 12", "outputs/figures/ collected"); asked: the question; refused: why, naming what the project has. */
  detail: string;
  /** The setting's id, when the ask is about one. */
  setting?: string | null;
}
