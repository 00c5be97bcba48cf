/**
 * The project's settings surface (contract.ts): every setting a user can change, where it lives and
 * how it is changed — read from the source, never by running it.
 *
 *   Python files   one run of python/settings.py (the interpreter's own `ast`): flags, positionals,
 *                  configurator globals, module constants (a literal inside an expression too,
 *                  named by its keyword when passed as one: `gamma` of `svm.SVC(gamma=0.001)`), loop
 *                  counts (`for t in range(500)`), env variables, and the config files each file
 *                  reads; a constant's comments are its help
 *   config files   JSON (JSON.parse), YAML (`yaml`), TOML (`smol-toml`), INI/.cfg (configparser's
 *                  syntax, below): keys flattened as `a.b.c`; spans for JSON, YAML and INI values
 *   readBy         a config file is read by the Python files that name it by a literal path (resolved
 *                  from the file's folder, then the project root), by @hydra.main, by a README command
 *                  (`python train.py config/x.py`), and a configurator's config modules (config/*.py
 *                  holding only assignments of its globals) by the script that execs the configurator
 *   code configs   get_config() building a CfgNode / ConfigDict, following `C.trainer =
 *                  Trainer.get_default_config()` into other files (`trainer.max_iters`); with
 *                  merge_from_args they are `--trainer.max_iters=…` settings
 *   notebooks      a .ipynb's settings (python/settings.py#read_notebook: the `parameters`-tagged
 *                  cell's, else every code cell's; a name the top level of two cells assigns is
 *                  none, the second would undo the first): names a top level assigns a literal to, as
 *                  kind config-key of the notebook with override `--set NAME=` — the worker's notebook
 *                  runner (`python -m chatgpu.notebook X.ipynb --set NAME=VALUE`) rewrites that
 *                  assignment or fills the parameters cell; no span (the runner finds it, not a rewrite
 *                  of the JSON file)
 *   entry          narrows to what one entry point can be told: its own settings, the module-level
 *                  constants (settings classes' fields too), flags and env variables of the project
 *                  modules it imports (one level), and the config files it (or those modules) read
 *
 * Bounds: a Python file above MAX_PY_CHARS, a config file above MAX_CONFIG_CHARS or with more than
 * MAX_CONFIG_KEYS keys (data, not settings), binary files (a NUL byte) and files that do not parse
 * are skipped, each with a problem line; the Python reader takes no new file after `budgetMs` (two
 * thirds of `timeoutMs`; those files get a problem line each) and is killed at `timeoutMs`. Without a
 * Python interpreter the config files are still read and one problem line says the Python sources
 * were not. Duplicate names: the last assignment (or key) wins, as in the program.
 *
 * Ids: `${file}#${name}`; a literal inside an expression `${file}#${name}@${line}:${col}` (also a
 * constant whose name a flag of the same file has); an environment variable `${file}#env:${NAME}`.
 * Spans are Python `ast`'s: 1-based lines, 0-based columns counted in UTF-8 bytes, end exclusive.
 */
import path from 'node:path';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import { parse as parseToml } from 'smol-toml';
import { findPython } from '../../../preparation/findPython.js';
import { runProcess } from '../../../preparation/pythonAst.js';
import { inRepo } from '../../../paths.js';
import type { Setting, SettingsSurface, SettingType, Span } from '../contract.js';

const HELPER = inRepo('api/src/agents/planner/python/settings.py');
/**
 * Larger Python files are generated code or data, not a script someone tunes; parsing one takes
 * seconds (500 kB: ~1 s on an idle core, ~10 s on this project's loaded 2-core test machines).
 * loadSources already passes files above 256 KiB as empty.
 */
export const MAX_PY_CHARS = 500_000;
export const MAX_CONFIG_CHARS = 256 * 1024;
/** A "config" with more keys than this is a data file (a vocabulary, labels), not settings. */
export const MAX_CONFIG_KEYS = 500;
const MAX_DEPTH = 12;
const MAX_DEFAULT = 300;
const CONFIG_FORMATS: Record<string, NonNullable<Setting['format']>> = {
  '.json': 'json',
  '.yaml': 'yaml',
  '.yml': 'yaml',
  '.toml': 'toml',
  '.ini': 'ini',
  '.cfg': 'ini',
};
/** Configuration of tools, packaging and CI — not settings of the program — unless the program reads them. */
const TOOLING =
  /(^|\/)(package(-lock)?\.json|tsconfig[^/]*\.json|pyproject\.toml|setup\.cfg|tox\.ini|pytest\.ini|mypy\.ini|\.?flake8|\.pylintrc|\.pre-commit-[^/]*|environment[^/]*\.ya?ml|conda[^/]*\.ya?ml|mkdocs\.ya?ml|(docker-)?compose[^/]*\.ya?ml|codecov\.ya?ml|\.readthedocs\.ya?ml|\.travis\.ya?ml|\.gitlab-ci\.ya?ml|netlify\.toml|Cargo\.toml|\.coveragerc|\.bumpversion\.cfg|renovate\.json|dvc\.ya?ml|dvc\.lock|\.dvc\/config)$/i;
/** Python files that configure tools, not the program (packaging, docs, tests' fixtures). */
const PY_TOOLING = /(^|\/)(setup\.py|noxfile\.py|conftest\.py|docs?\/(source\/)?conf\.py)$/;
const IGNORED_DIRS = /(^|\/)(\.[^/]+|node_modules|__pycache__|venv|site-packages)\//; // a folder named env/ is often the project's own (RL environments)

type PySetting = Omit<Setting, 'id' | 'file'> & {
  inExpression?: boolean;
  /** a notebook's: the cell that sets it (1-based, among all cells) */ cell?: number;
};
type PyFile =
  | {
      ok: true;
      settings: PySetting[];
      reads: { path: string; line: number; hydra: boolean }[];
      imports: { module: string | null; level: number; names: string[] }[];
      configurator: string | null;
      configShaped: boolean;
      mains: string[];
      mainGuard: boolean;
      fromCli: boolean;
      configFunctions: ConfigFunction[];
      mergesArgs: boolean;
      /** a notebook: the first cell a setting comes from (1-based, among all cells) */
      cell?: number | null;
    }
  | { ok: false; error: string };

/** A config built in code (python/settings.py#config_functions): literals at dotted paths and included config functions, in order. */
interface ConfigFunction {
  name: string;
  topLevel: boolean;
  steps: (
    { include: string; callee: string } | { path: string; type: SettingType; default: string | null; span: Span; help: string | null }
  )[];
}

let python: Promise<string | null> | undefined;

export interface ListSettingsOptions {
  /** The entry point to narrow to (a project path), or null/absent for the whole project. */
  entry?: string | null;
  /** The Python interpreter that reads the sources (default: the API machine's, found once). */
  python?: string;
  /** The limit on the Python process (default 30 s): it is killed then, and nothing it read comes back. */
  timeoutMs?: number;
  /** After this long the reader takes no new file (default two thirds of timeoutMs), so what it read comes back. */
  budgetMs?: number;
}

export async function listSettings(files: ReadonlyMap<string, string>, opts: ListSettingsOptions = {}): Promise<SettingsSurface> {
  const problems: SettingsSurface['problems'] = [];
  const entry = opts.entry ?? null;
  if (entry !== null && !files.has(entry)) {
    return { entry, settings: [], problems: [{ file: entry, error: `no file ${entry} in the project` }] };
  }
  const py: Record<string, string> = {};
  const configs: [string, string][] = [];
  for (const [file, text] of files) {
    if (IGNORED_DIRS.test(file) || (PY_TOOLING.test(file) && file !== entry)) continue;
    const ext = path.posix.extname(file).toLowerCase();
    if (ext !== '.py' && ext !== '.ipynb' && !CONFIG_FORMATS[ext]) continue;
    if (text.includes('\0')) {
      problems.push({ file, error: 'binary (a NUL byte): not read' });
    } else if (ext === '.ipynb' && !text.trim()) {
      // loadSources passes a file above its size limit as '' (a notebook saved with large outputs)
      problems.push({ file, error: 'empty, or too large to read (a notebook saved with its outputs): its settings were not read' });
    } else if (ext === '.py' || ext === '.ipynb') {
      if (text.length > MAX_PY_CHARS)
        problems.push({ file, error: `too large to read for settings (${text.length} characters; the limit is ${MAX_PY_CHARS})` });
      else py[file] = text;
    } else configs.push([file, text]);
  }
  const parsed = await readPython(py, opts, problems);

  const settings: Setting[] = [];
  const readBy = new Map<string, Set<string>>(); // config file → Python files that read it
  const hydraFiles = new Set<string>();
  const cliFiles = new Set<string>(); // OmegaConf.from_cli: `key=value` overrides
  const configModules = new Map<string, string[]>(); // config/*.py → the scripts that exec the configurator over it
  const globalsOf = new Map<string, Set<string>>(); // a configurator script → its globals (what `--name=value` may set)
  const note = (config: string, reader: string) => {
    if (!readBy.has(config)) readBy.set(config, new Set());
    readBy.get(config)!.add(reader);
  };

  for (const [file, facts] of Object.entries(parsed)) {
    if (!facts.ok) {
      problems.push({ file, error: facts.error });
      continue;
    }
    for (const r of facts.reads) {
      const found = resolvePath(files, file, r.path);
      if (!found) continue;
      note(found, file);
      if (r.hydra) hydraFiles.add(found);
      if (facts.fromCli) cliFiles.add(found);
    }
  }
  // nanoGPT's configurator: the config modules are the assignments-only files that set the script's globals.
  for (const [script, facts] of Object.entries(parsed)) {
    if (!facts.ok || !facts.configurator) continue;
    const globals = new Set(facts.settings.filter((s) => s.kind === 'configurator').map((s) => s.name));
    globalsOf.set(script, globals);
    for (const [file, other] of Object.entries(parsed)) {
      if (file === script || !other.ok || !other.configShaped || file === resolvePath(files, script, facts.configurator)) continue;
      if (other.settings.some((s) => s.kind === 'constant' && globals.has(s.name))) {
        configModules.set(file, [...(configModules.get(file) ?? []), script]);
        note(file, script);
      }
    }
  }
  for (const [config, script] of readmeCommands(files)) note(config, script);

  for (const [file, facts] of Object.entries(parsed)) {
    if (!facts.ok) continue;
    if (file.endsWith('.ipynb')) {
      for (const { inExpression: _, span: __, cell, ...s } of facts.settings) {
        settings.push({
          ...s,
          id: `${file}#${s.name}`,
          file,
          kind: 'config-key',
          format: 'python',
          override: `--set ${s.name}=`,
          readBy: [file],
          help: s.help ?? `set in cell ${cell ?? facts.cell} of the notebook`,
        });
      }
      continue;
    }
    const flagNames = new Set(facts.settings.filter((s) => s.kind === 'flag' || s.kind === 'positional').map((s) => s.name));
    const readers = configModules.get(file);
    for (const s of facts.settings) {
      const { inExpression, ...rest } = s;
      if (readers && s.kind === 'constant' && !inExpression) {
        // the command line can override only the script's own globals (the configurator refuses an unknown key)
        const overridable = readers.every((r) => globalsOf.get(r)?.has(s.name));
        settings.push({
          ...rest,
          id: `${file}#${s.name}`,
          file,
          kind: 'config-key',
          format: 'python',
          ...(overridable ? { override: `--${s.name}=` } : {}),
          readBy: [...readBy.get(file)!].sort(),
        });
        continue;
      }
      let id = `${file}#${s.name}`;
      if (s.kind === 'env') id = `${file}#env:${s.name}`;
      else if (s.kind === 'constant' && s.span && (inExpression || flagNames.has(s.name)))
        id = `${file}#${s.name}@${s.span.line}:${s.span.col}`;
      settings.push({ ...rest, id, file });
    }
  }

  for (const [file, text] of configs) {
    const readers = readBy.get(file);
    if (TOOLING.test(file) && !readers) continue;
    const read = readConfig(file, text);
    if ('error' in read) {
      problems.push({ file, error: read.error });
      continue;
    }
    const format = CONFIG_FORMATS[path.posix.extname(file).toLowerCase()]!;
    for (const k of read.keys) {
      settings.push({
        id: `${file}#${k.name}`,
        name: k.name,
        kind: 'config-key',
        file,
        type: k.type,
        default: k.default,
        help: null,
        format,
        readBy: readers ? [...readers].sort() : [],
        ...(k.span ? { span: k.span } : {}),
        ...(hydraFiles.has(file) || cliFiles.has(file) ? { override: `${k.name}=` } : {}),
      });
    }
  }

  const rootOf = configFunctionSettings(parsed, settings);

  const unique = new Map<string, Setting>();
  for (const s of settings) unique.set(s.id, s); // last wins (an id is written once per file, in source order)
  const all = [...unique.values()];
  if (entry === null) return { entry, settings: all, problems };
  return { entry, ...narrow(all, entry, files, parsed, problems, rootOf) };
}

/**
 * The settings of configs built in code: each top-level config function (get_config) is a root;
 * its includes (`C.trainer = Trainer.get_default_config()`) are followed into the function of that
 * name in any file (the same file first), their literals named under the include's path
 * (`trainer.max_iters`) and living where they are written; a later literal at the same path wins.
 * With merge_from_args in the root's file they are `--trainer.max_iters=…` settings (kind
 * configurator); otherwise constants. Returns each such setting's root file (narrowing keeps
 * them for that entry point only).
 */
function configFunctionSettings(parsed: Record<string, PyFile>, settings: Setting[]): Map<string, string> {
  const byName = new Map<string, { file: string; fn: ConfigFunction }[]>();
  for (const [file, facts] of Object.entries(parsed)) {
    if (!facts.ok) continue;
    for (const fn of facts.configFunctions ?? []) byName.set(fn.name, [...(byName.get(fn.name) ?? []), { file, fn }]);
  }
  const rootOf = new Map<string, string>();
  for (const [rootFile, facts] of Object.entries(parsed)) {
    if (!facts.ok) continue;
    for (const root of (facts.configFunctions ?? []).filter((f) => f.topLevel)) {
      const found = new Map<string, Setting>();
      const expand = (file: string, fn: ConfigFunction, prefix: string, seen: string[]) => {
        if (seen.length > 6 || seen.includes(fn.name)) return;
        for (const step of fn.steps) {
          if ('include' in step) {
            const name = step.callee.split('.').slice(-2).join('.');
            const candidates = byName.get(name) ?? byName.get(step.callee.split('.').pop()!) ?? [];
            const target = candidates.find((c) => c.file === file) ?? (candidates.length === 1 ? candidates[0] : undefined);
            if (target) expand(target.file, target.fn, `${prefix}${step.include}.`, [...seen, fn.name]);
            continue;
          }
          const name = `${prefix}${step.path}`;
          for (const key of [...found.keys()]) if (key.startsWith(`${name}.`)) found.delete(key);
          found.set(name, {
            id: `${file}#${name}`,
            name,
            kind: facts.mergesArgs ? 'configurator' : 'constant',
            file,
            type: step.type,
            default: step.default,
            help: step.help,
            span: step.span,
            scope: `${fn.name}()`,
            ...(facts.mergesArgs ? { flag: `--${name}` } : {}),
          });
        }
      };
      expand(rootFile, root, '', []);
      for (const s of found.values()) {
        settings.push(s);
        rootOf.set(s.id, rootFile);
      }
    }
  }
  return rootOf;
}

/** Runs settings.py once over the Python files; without an interpreter, one problem line. */
async function readPython(
  py: Record<string, string>,
  opts: ListSettingsOptions,
  problems: SettingsSurface['problems'],
): Promise<Record<string, PyFile>> {
  const names = Object.keys(py);
  if (names.length === 0) return {};
  const unread = (why: string) => {
    problems.push({ file: names.length === 1 ? names[0]! : `${names.length} Python files`, error: why });
    return {};
  };
  const interpreter = opts.python ?? (await (python ??= findPython().then((f) => f?.path ?? null)));
  if (!interpreter)
    return unread('no Python interpreter on the API machine: the Python sources could not be parsed (only config files were read)');
  const timeoutMs = opts.timeoutMs ?? 30_000;
  // The entry point first, then the smallest: when the budget runs out, the files that matter most were read.
  const ordered = Object.fromEntries(
    Object.entries(py).sort(([a, x], [b, y]) => Number(b === opts.entry) - Number(a === opts.entry) || x.length - y.length),
  );
  // The reader stops taking new files after its budget, so what it read comes back before the hard limit kills it.
  const budgetSeconds = (opts.budgetMs ?? (timeoutMs * 2) / 3) / 1000;
  try {
    const r = await runProcess(interpreter, [HELPER], JSON.stringify({ files: ordered, maxChars: MAX_PY_CHARS, budgetSeconds }), timeoutMs);
    if (r.code !== 0) {
      const killed = r.stderr.includes('killed by');
      return unread(
        killed
          ? `reading the Python sources took longer than ${timeoutMs} ms: stopped`
          : `the Python reader failed: ${r.stderr.trim().split('\n').pop() ?? ''}`,
      );
    }
    try {
      return JSON.parse(r.stdout) as Record<string, PyFile>;
    } catch {
      return unread(`the Python reader's answer was not JSON: ${r.stdout.slice(0, 200)}`);
    }
  } catch (e) {
    return unread(
      `no Python interpreter could run (${(e as Error).message}): the Python sources could not be parsed (only config files were read)`,
    );
  }
}

/** A path named in `from`'s source: relative to its folder, then to the project root. */
function resolvePath(files: ReadonlyMap<string, string>, from: string, named: string): string | null {
  const clean = named.replace(/\\/g, '/').replace(/^\.\//, '');
  if (path.posix.isAbsolute(clean)) return null;
  for (const base of [path.posix.dirname(from), '.']) {
    const p = path.posix.normalize(path.posix.join(base, clean));
    if (!p.startsWith('..') && files.has(p)) return p;
  }
  return null;
}

/** `python train.py config/x.py --k=v` in a README: the config files each script is run with. */
function readmeCommands(files: ReadonlyMap<string, string>): [string, string][] {
  const out: [string, string][] = [];
  for (const [file, text] of files) {
    if (!/(^|\/)readme[^/]*$/i.test(file) || text.length > MAX_CONFIG_CHARS) continue;
    for (const line of text.split('\n')) {
      const m = /\bpython[0-9.]*\s+(?:-u\s+)?(\S+\.py)\b(.*)$/.exec(line);
      if (!m) continue;
      const script = resolvePath(files, file, m[1]!);
      if (!script) continue;
      for (const token of m[2]!.split(/[\s=]+/)) {
        const config = resolvePath(files, file, token.replace(/^['"`]|['"`;]$/g, ''));
        if (config && config !== script && (CONFIG_FORMATS[path.posix.extname(config).toLowerCase()] || config.endsWith('.py')))
          out.push([config, script]);
      }
    }
  }
  return out;
}

/** The project modules `file` imports directly, as project paths. */
function importedModules(files: ReadonlyMap<string, string>, file: string, facts: PyFile): string[] {
  if (!facts.ok) return [];
  const out = new Set<string>();
  const candidates = (dotted: string, base: string) => {
    const rel = dotted.replace(/\./g, '/');
    return [`${rel}.py`, `${rel}/__init__.py`].map((p) => path.posix.normalize(path.posix.join(base, p)));
  };
  for (const imp of facts.imports) {
    let bases: string[];
    if (imp.level > 0) {
      let base = path.posix.dirname(file);
      for (let i = 1; i < imp.level; i++) base = path.posix.dirname(base);
      bases = [base];
    } else bases = [path.posix.dirname(file), '.'];
    const names = imp.module ? [imp.module, ...imp.names.map((n) => `${imp.module}.${n}`)] : imp.names;
    for (const base of bases) {
      for (const name of names) {
        const hit = candidates(name, base).find((p) => files.has(p) && p !== file);
        if (hit) out.add(hit);
      }
    }
  }
  return [...out];
}

function narrow(
  all: Setting[],
  entry: string,
  files: ReadonlyMap<string, string>,
  parsed: Record<string, PyFile>,
  problems: SettingsSurface['problems'],
  rootOf: Map<string, string>,
) {
  const facts = parsed[entry];
  const modules = facts ? importedModules(files, entry, facts) : [];
  const readers = new Set([entry, ...modules]);
  const settings: Setting[] = [];
  for (const s of all) {
    const root = rootOf.get(s.id);
    if (root !== undefined) {
      if (root === entry) settings.push(s); // a config built in code: the entry point's own, wherever its literals are
    } else if (s.file === entry && s.kind !== 'config-key') settings.push(s);
    else if (modules.includes(s.file) && s.kind !== 'config-key') {
      // An imported module runs its module level (and the functions the entry calls), not its own __main__ block or main().
      const other = parsed[s.file];
      const mains = other?.ok ? other.mains : [];
      if (s.scope === 'main-guard' || (s.scope && mains.includes(s.scope))) continue;
      if (s.kind === 'constant' && s.scope !== 'module' && !s.scope?.startsWith('class ')) continue;
      settings.push(s);
    } else if (s.kind === 'config-key' && s.readBy?.some((r) => readers.has(r))) {
      settings.push(s.readBy.includes(entry) ? s : { ...s, readBy: [...s.readBy, entry].sort() });
    }
  }
  const relevant = new Set([entry, ...modules, ...settings.map((s) => s.file)]);
  return { settings, problems: problems.filter((p) => relevant.has(p.file) || !files.has(p.file)) };
}

// --- config files ---------------------------------------------------------------------------------

interface Key {
  name: string;
  type: SettingType;
  default: string | null;
  span?: Span;
}

function readConfig(file: string, text: string): { keys: Key[] } | { error: string } {
  if (text.length > MAX_CONFIG_CHARS)
    return { error: `too large to read as settings (${text.length} characters; the limit is ${MAX_CONFIG_CHARS})` };
  const format = CONFIG_FORMATS[path.posix.extname(file).toLowerCase()]!;
  let keys: Key[];
  try {
    if (format === 'json') keys = readJson(text);
    else if (format === 'yaml') keys = readYaml(text);
    else if (format === 'toml') keys = flatten(parseToml(text), '', 0).map((k) => k);
    else keys = readIni(text);
  } catch (e) {
    return { error: `${format.toUpperCase()} that does not parse: ${oneLine((e as Error).message)}` };
  }
  if (keys.length > MAX_CONFIG_KEYS) return { error: `${keys.length} keys: a data file, not settings (the limit is ${MAX_CONFIG_KEYS})` };
  const last = new Map<string, Key>();
  for (const k of keys) last.set(k.name, k);
  return { keys: [...last.values()] };
}

function oneLine(message: string): string {
  const flat = message.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}

function typeOf(v: unknown): SettingType {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  return null;
}

function defaultText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  let t: string;
  if (typeof v === 'string') t = v;
  else if (typeof v === 'bigint' || v instanceof Date) t = String(v);
  else {
    try {
      t = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)) ?? String(v);
    } catch {
      t = String(v);
    }
  }
  return t.length > MAX_DEFAULT ? `${t.slice(0, MAX_DEFAULT - 1)}…` : t;
}

/** A plain object's leaves as `a.b.c`; deeper than MAX_DEPTH, the rest is one value. */
function flatten(value: unknown, prefix: string, depth: number): Key[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date || depth >= MAX_DEPTH) {
    return prefix ? [{ name: prefix, type: typeOf(value), default: defaultText(value) }] : [];
  }
  const out: Key[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out.push(...flatten(v, prefix ? `${prefix}.${k}` : k, depth + 1));
  return out;
}

function readJson(text: string): Key[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const m = /position (\d+)/.exec((e as Error).message);
    const line = m ? text.slice(0, Number(m[1])).split('\n').length : null;
    throw new Error(`${(e as Error).message}${line ? ` (line ${line})` : ''}`);
  }
  const keys = flatten(value, '', 0);
  // Spans from the same text read as YAML (a superset of JSON for these purposes), where it agrees.
  const spans = yamlSpans(text);
  return keys.map((k) => (spans.has(k.name) ? { ...k, span: spans.get(k.name)! } : k));
}

function readYaml(text: string): Key[] {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length) throw new Error(doc.errors[0]!.message.split('\n')[0]!.replace(/:$/, '')); // "… at line 2, column 1
  const keys = flatten(doc.toJS({ maxAliasCount: 100 }), '', 0);
  const spans = yamlSpans(text);
  return keys.map((k) => (spans.has(k.name) ? { ...k, span: spans.get(k.name)! } : k));
}

/** The span of each scalar or list value of a YAML (or JSON) text, by its dotted key; empty when it does not parse. */
function yamlSpans(text: string): Map<string, Span> {
  const spans = new Map<string, Span>();
  const lc = new LineCounter();
  let doc;
  try {
    doc = parseDocument(text, { uniqueKeys: false, lineCounter: lc });
  } catch {
    return spans;
  }
  if (doc.errors.length) return spans;
  const toSpan = (start: number, end: number): Span => {
    const a = lc.linePos(start);
    const b = lc.linePos(end);
    const col = (line: number, charCol: number) =>
      Buffer.byteLength(text.slice(lc.lineStarts[line - 1]!, lc.lineStarts[line - 1]! + charCol - 1), 'utf8');
    return { line: a.line, col: col(a.line, a.col), endLine: b.line, endCol: col(b.line, b.col) };
  };
  const walk = (node: YamlNode | null | undefined, prefix: string, depth: number) => {
    if (!node || depth >= MAX_DEPTH || isAlias(node)) return;
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : null;
        if (key === null || key === '<<') continue;
        walk(pair.value as YamlNode | null, prefix ? `${prefix}.${key}` : key, depth + 1);
      }
    } else if ((isScalar(node) || isSeq(node)) && node.range && prefix) {
      spans.set(prefix, toSpan(node.range[0], node.range[1]));
    }
  };
  walk(doc.contents as YamlNode | null, '', 0);
  return spans;
}

/**
 * INI as Python's configparser reads it (its defaults): `[section]`, `key = value` or `key: value`,
 * keys lower-cased, `#`/`;` comment lines, indented continuation lines. The npm `ini` package
 * reads another dialect (no `:` delimiter, no continuations), so this small reader follows the
 * Python one — the program that reads the file is Python.
 */
function readIni(text: string): Key[] {
  const keys: Key[] = [];
  let section: string | null = null;
  let last: Key | null = null;
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (/^\s*([#;].*)?$/.test(line)) return;
    if (last && /^\s/.test(line)) {
      last.default = `${last.default ?? ''}\n${line.trim()}`;
      last.span = { ...last.span!, endLine: i + 1, endCol: Buffer.byteLength(line, 'utf8') };
      return;
    }
    const sec = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (sec) {
      section = sec[1]!.trim();
      last = null;
      return;
    }
    const kv = /^([^=:]+?)\s*[=:]\s?(.*)$/.exec(line);
    if (!kv) throw new Error(`line ${i + 1}: not a section, key or comment: ${line.slice(0, 80)}`);
    if (section === null) throw new Error(`line ${i + 1}: a key before any [section]`);
    const value = kv[2]!.trim();
    const start = line.length - kv[2]!.length + (kv[2]!.length - kv[2]!.trimStart().length);
    const col = Buffer.byteLength(line.slice(0, start), 'utf8');
    last = {
      name: `${section}.${kv[1]!.trim().toLowerCase()}`,
      type: /^[+-]?\d+$/.test(value)
        ? 'int'
        : /^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+)$/.test(value)
          ? 'float'
          : /^(true|false|yes|no|on|off)$/i.test(value)
            ? 'bool'
            : 'str',
      default: value,
      span: { line: i + 1, col, endLine: i + 1, endCol: col + Buffer.byteLength(value, 'utf8') },
    };
    keys.push(last);
  });
  return keys;
}
