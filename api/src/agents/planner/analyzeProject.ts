/**
 * Static facts about a project, read without running it: dependency pins, imports,
 * entry points with their argparse flags, CUDA-isms, data folders, checkpoints.
 * Pure: the same files give the same answer. Used by the find_dependencies tool.
 */

export interface Pin {
  name: string;
  spec: string;
  file: string;
  /** The requirement as written (what pip installs), e.g. "tqdm>=4.60". */
  line: string;
}

export interface ArgFlag {
  flag: string;
  default: string | null;
  /** int, float, str, bool (store_true/false and click/typer flags), … — or null when unknown. */
  type: string | null;
  help: string | null;
  /** argparse's action (store_true, store_false, count, …) when the parser knows it. */
  action?: string | null;
  choices?: string[] | null;
}

/**
 * What `python/entrypoints.py` (the interpreter's own `ast`) says about one file; when a file
 * has it, its flags and whether it is an entry point come from here instead of the patterns.
 */
export type PyFileFacts =
  | {
      ok: true;
      mainGuard: boolean;
      topLevelRuns: boolean;
      parsesArgs: boolean;
      cli: string | null;
      /** The file a nanoGPT-style script exec()s to read its configuration (configurator.py). */
      configurator?: string | null;
      imports: string[];
      /** Those of `imports` in the interpreter's standard library (sys.stdlib_module_names). */
      stdlib?: string[];
      /** Top-level names imported only inside functions or a `try … except ImportError`: optional, not needed to start. */
      lazyImports?: string[];
      /** Full dotted names of the absolute imports (`from pkg.sub import x` → pkg.sub, pkg.sub.x). */
      modules?: string[];
      flags: (ArgFlag & { aliases: string[]; required: boolean })[];
      positionals?: Positional[];
      /** Lines that use CUDA unconditionally (not under an `if` that tests for it). */
      cudaLines: number[];
      /** Its data downloads (python/downloads.py), null when it fetches nothing. */
      downloads?: { calls: DownloadCall[]; urls: string[] } | null;
    }
  | { ok: false; error: string };

/** A positional argparse argument (`p.add_argument("samples", type=int)`). */
export interface Positional {
  name: string;
  type: string | null;
  required: boolean;
  help: string | null;
}

export interface EntryPoint {
  path: string;
  /**
   * How it runs: a `__main__` block, code at the top level of a script, or a Jupyter notebook
   * (run top to bottom by the worker's runner: `python -m chatgpu.notebook PATH`, settings as
   * `--set NAME=VALUE`; NOTEBOOK_RUNNER).
   */
  kind?: 'main-guard' | 'top-level' | 'notebook';
  /** argparse, click or typer, when the flags were read with the parser. */
  cli?: string | null;
  flags: ArgFlag[];
  /** Its positional arguments, in order (argparse, read with the parser). */
  positionals?: Positional[];
  savesCheckpoint: boolean;
  hardwiredCuda: string[];
  /**
   * Metrics the script reports through the worker's helper (`log(name=value, …)` from
   * chatgpu.metrics), in order of first appearance; `step`/`ts` are not metrics.
   */
  reportsMetrics: string[];
}

/** A command the project's own README or Makefile gives for running it. */
export interface UsageCommand {
  file: string;
  /** As written, e.g. "python -m lmtool.train --epochs 3". */
  command: string;
  /** The Python file it runs (a module resolved to its file), when the project has it. */
  script: string | null;
  /** The module of `python -m MODULE`, else null. */
  module: string | null;
}

/** One call of a script that fetches over the network (python/downloads.py). */
export interface DownloadCall {
  line: number;
  /** urllib, requests, wget, curl, torchvision, datasets, huggingface_hub, torch.hub, gdown, … */
  kind: string;
  /** The call as written. */
  call: string;
  /** A torchvision dataset with literal arguments: the call with its full name, runnable on its own (`python -c`). */
  replay: string | null;
  /** That dataset's root folder, as written (relative to where the script runs). */
  root: string | null;
}

/**
 * A script that downloads data (issue 38, docs/data-downloads.md): the calls that fetch and the
 * URLs written in it. Tasks have no network, so the planner runs such a download as its own step,
 * marked as a data download (the only kind of task a worker's default policy gives the network).
 */
export interface DataDownload {
  script: string;
  calls: DownloadCall[];
  urls: string[];
}

export interface ProjectFacts {
  pins: Pin[];
  /** Run commands from README*.md / Makefile, in order (at most 20). */
  usage: UsageCommand[];
  imports: string[];
  /** Per Python file: its third-party imports (top-level names) and the local modules it imports. */
  importsByFile: Record<string, { thirdParty: string[]; local: string[] }>;
  localModules: string[];
  entryPoints: EntryPoint[];
  cudaSources: string[];
  dataFolders: string[];
  usesTorch: boolean;
  notes: string[];
  /** Scripts that download data, in path order (absent in facts made before downloads were read). */
  downloads?: DataDownload[];
}

const STDLIB = new Set(
  'abc argparse array ast asyncio base64 bisect builtins bz2 calendar cmath collections concurrent configparser contextlib copy csv ctypes dataclasses datetime decimal difflib enum errno functools gc getopt getpass glob gzip hashlib heapq hmac html http importlib inspect io ipaddress itertools json logging lzma math mimetypes multiprocessing numbers operator os pathlib pickle pkgutil platform pprint queue random re sched secrets select shlex shutil signal socket sqlite3 ssl stat statistics string struct subprocess sys sysconfig tarfile tempfile textwrap threading time timeit tkinter traceback types typing unittest urllib uuid warnings weakref xml zipfile zlib __future__'.split(
    ' ',
  ),
);

/** Packaging scripts: entry points in form (setup() at their top level), never the run. */
export const PACKAGING_RE = /(^|\/)setup\.py$/i;

/** The command that runs a notebook on a worker (worker/python/chatgpu/notebook.py). */
export const NOTEBOOK_RUNNER = 'python -m chatgpu.notebook';
/** What that runner imports on the worker: present there (Debian python3-nbclient, python3-ipykernel) or installed in a setup phase. */
export const NOTEBOOK_RUNTIME = ['ipykernel', 'nbclient'];

const PIN_RE =
  /^\s*([A-Za-z0-9_.-]+)\s*(\[[^\]]*\])?\s*((?:==|>=|<=|~=|!=|>|<)\s*[^;#\s,]+(?:\s*,\s*(?:==|>=|<=|~=|!=|>|<)\s*[^;#\s,]+)*)?/;

export function analyzeProject(files: Map<string, string>, parsed: Readonly<Record<string, PyFileFacts>> = {}): ProjectFacts {
  const pins: Pin[] = [];
  const notes: string[] = [];
  for (const [p, text] of files) {
    const base = p.split('/').pop()!;
    if (/^requirements.*\.txt$/.test(base)) {
      for (const line of text.split('\n')) {
        const l = line.replace(/#.*/, '').trim();
        if (!l || l.startsWith('-')) continue;
        const m = PIN_RE.exec(l);
        if (m) pins.push({ name: m[1]!.toLowerCase(), spec: (m[3] ?? '').replace(/\s+/g, ''), file: p, line: l.replace(/\s*;.*$/, '') });
      }
    } else if (base === 'pyproject.toml') {
      const block = /dependencies\s*=\s*\[([\s\S]*?)\]/.exec(text);
      for (const m of block?.[1]?.matchAll(/["']([^"']+)["']/g) ?? []) {
        const pm = PIN_RE.exec(m[1]!);
        if (pm)
          pins.push({ name: pm[1]!.toLowerCase(), spec: (pm[3] ?? '').replace(/\s+/g, ''), file: p, line: m[1]!.replace(/\s*;.*$/, '') });
      }
    } else if (base === 'environment.yml' || base === 'environment.yaml') {
      for (const m of text.matchAll(/^\s*-\s*([A-Za-z0-9_.-]+)\s*=?=\s*([0-9][^\s#]*)/gm)) {
        if (m[1] !== 'pip') pins.push({ name: m[1]!.toLowerCase(), spec: `==${m[2]}`, file: p, line: `${m[1]}==${m[2]}` });
      }
    }
  }
  const pyFiles = [...files.keys()].filter((p) => p.endsWith('.py')).sort();
  const localModules = new Set<string>();
  for (const p of pyFiles) {
    const parts = p.split('/');
    localModules.add(parts[parts.length - 1]!.replace(/\.py$/, ''));
    for (const d of parts.slice(0, -1)) localModules.add(d);
  }
  const imports = new Set<string>();
  const importsByFile: ProjectFacts['importsByFile'] = {};
  const entryPoints: EntryPoint[] = [];
  for (const p of pyFiles) {
    const text = files.get(p)!;
    const thirdParty = new Set<string>();
    const local = new Set<string>();
    const ast0 = parsed[p];
    const parsedImports = ast0?.ok ? ast0.imports : null;
    const stdlib = new Set(ast0?.ok ? (ast0.stdlib ?? []) : []);
    const lazy = new Set(ast0?.ok ? (ast0.lazyImports ?? []) : []);
    const dotted = ast0?.ok ? (ast0.modules ?? null) : null;
    const names =
      parsedImports ??
      [...text.matchAll(/^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import)/gm)].flatMap((m) =>
        m[1] ? m[1].split(',').map((x) => x.trim()) : [m[2]!],
      );
    for (const n of names) {
      const top = n.split('.')[0]!;
      // chatgpu is the worker's own helper package, always there.
      if (!top || STDLIB.has(top) || stdlib.has(top) || top === 'chatgpu') continue;
      if (localModules.has(top)) {
        // The project's own modules by their full names when the parser gave them (pkg.model, not all of pkg).
        const full = dotted?.filter((d) => d === top || d.startsWith(`${top}.`)) ?? [];
        for (const d of full.length ? full : [top]) local.add(d);
      } else if (!lazy.has(top)) thirdParty.add(top);
    }
    for (const t of thirdParty) imports.add(t);
    importsByFile[p] = { thirdParty: [...thirdParty].sort(), local: [...local].sort() };
    const ast = parsed[p];
    let isEntry: boolean;
    let flags: ArgFlag[];
    let kind: EntryPoint['kind'];
    if (ast?.ok) {
      // A script that runs at its top level is an entry point when it reads command-line
      // flags or no other file of the project imports it (then it is a module, not a script).
      const moduleName = p.replace(/\.py$/, '').split('/').pop()!;
      const importedByOthers = pyFiles.some((q) => {
        const other = parsed[q];
        return q !== p && other?.ok === true && other.imports.includes(moduleName);
      });
      // A file another script exec()s for its configuration is part of that script, not a script.
      const execd = pyFiles.some((q) => {
        const other = parsed[q];
        return other?.ok === true && other.configurator != null && (p === other.configurator || p.endsWith(`/${other.configurator}`));
      });
      isEntry = !execd && (ast.mainGuard || (ast.topLevelRuns && (ast.parsesArgs || !importedByOthers)));
      kind = ast.mainGuard ? 'main-guard' : 'top-level';
      flags = ast.flags.map((f) => ({
        flag: f.flag,
        default: f.default,
        type: f.type,
        help: f.help,
        action: f.action ?? null,
        choices: f.choices ?? null,
      }));
    } else {
      isEntry = /if\s+__name__\s*==\s*['"]__main__['"]/.test(text);
      kind = 'main-guard';
      flags = [];
      for (const m of text.matchAll(/add_argument\(\s*(?:['"]-\w['"]\s*,\s*)?['"](--[\w-]+)['"]([^)]*)\)/g)) {
        const rest = m[2] ?? '';
        const action = /action\s*=\s*['"](\w+)['"]/.exec(rest)?.[1] ?? null;
        flags.push({
          flag: m[1]!,
          default:
            /default\s*=\s*([^,)]+)/
              .exec(rest)?.[1]
              ?.trim()
              .replace(/^['"]|['"]$/g, '') ?? (action === 'store_true' ? 'False' : null),
          type: action === 'store_true' || action === 'store_false' ? 'bool' : (/type\s*=\s*(\w+)/.exec(rest)?.[1] ?? null),
          help: /help\s*=\s*['"]([^'"]*)['"]/.exec(rest)?.[1] ?? null,
          action,
        });
      }
    }
    if (isEntry) {
      const hardwiredCuda: string[] = [];
      if (ast?.ok) hardwiredCuda.push(...ast.cudaLines.map((n) => `${p}:${n}`));
      else {
        text.split('\n').forEach((line, i) => {
          const code = line.replace(/#.*/, '');
          if (
            /\.cuda\(\)|device\s*=\s*['"]cuda|torch\.device\(\s*['"]cuda['"]\s*\)|\.to\(\s*['"]cuda/.test(code) &&
            !/is_available/.test(code)
          )
            hardwiredCuda.push(`${p}:${i + 1}`);
        });
      }
      entryPoints.push({
        path: p,
        kind,
        cli: ast?.ok ? ast.cli : null,
        flags,
        ...(ast?.ok && ast.positionals?.length ? { positionals: ast.positionals } : {}),
        savesCheckpoint: /torch\.save\(|\.save_pretrained\(|np\.save\(/.test(text),
        hardwiredCuda,
        reportsMetrics: reportedMetrics(text),
      });
    }
  }
  // Notebooks are entry points when no Python file is one, packaging (setup.py) aside: a project of
  // scripts that also holds a notebook (a demo, an exploration) still runs its script, as before;
  // a package with a demo notebook (karpathy/micrograd) runs the notebook.
  const notebooks = [...files.keys()].filter((p) => p.endsWith('.ipynb') && !/(^|\/)\.ipynb_checkpoints\//.test(p)).sort();
  const notebooksRun = entryPoints.every((e) => PACKAGING_RE.test(e.path));
  for (const p of notebooks) {
    const code = notebookCode(files.get(p)!);
    const thirdParty = new Set<string>();
    const local = new Set<string>();
    for (const m of code.matchAll(/^\s*(?:import\s+([^\n#;]+)|from\s+([\w.]+)\s+import)/gm)) {
      for (const n of m[1] ? m[1].split(',').map((x) => x.trim().split(/\s+as\s+/)[0]!) : [m[2]!]) {
        const top = n.split('.')[0]!;
        if (!top || STDLIB.has(top) || top === 'chatgpu') continue;
        if (localModules.has(top)) local.add(top);
        else thirdParty.add(top);
      }
    }
    const asEntry = notebooksRun;
    if (asEntry) {
      for (const t of thirdParty) imports.add(t);
      // The runner's own needs, as imports of the notebook: resolved like any (present on the
      // worker, installed in a setup phase from the requirement below, or explained).
      for (const t of NOTEBOOK_RUNTIME) thirdParty.add(t);
    }
    importsByFile[p] = { thirdParty: [...thirdParty].sort(), local: [...local].sort() };
    if (!asEntry) continue;
    for (const name of NOTEBOOK_RUNTIME) if (!pins.some((x) => x.name === name)) pins.push({ name, spec: '', file: p, line: name });
    entryPoints.push({
      path: p,
      kind: 'notebook',
      cli: null,
      flags: [],
      savesCheckpoint: /torch\.save\(|\.save_pretrained\(|np\.save\(/.test(code),
      hardwiredCuda: [],
      reportsMetrics: reportedMetrics(code),
    });
  }
  if (entryPoints.some((e) => e.kind === 'notebook'))
    notes.push(
      `Notebooks run top to bottom with the worker's runner (\`${NOTEBOOK_RUNNER} X.ipynb\`, settings as \`--set NAME=VALUE\`), which needs ${NOTEBOOK_RUNTIME.join(' and ')} on the worker.`,
    );
  const usage = usageCommands(files);
  const cudaSources = [...files.keys()].filter((p) => /\.(cu|cuh|hip)$/.test(p)).sort();
  const dataFolders = [
    ...new Set(
      [...files.keys()]
        .filter((p) => /\.(csv|tsv|npy|npz|parquet|jsonl|txt|pt|bin|h5|png|jpg)$/.test(p) && p.includes('/') && !/requirements/.test(p))
        .map((p) => p.split('/').slice(0, -1).join('/')),
    ),
  ].sort();
  const usesTorch = imports.has('torch');
  const downloads = pyFiles.flatMap((p) => {
    const ast = parsed[p];
    const d = ast?.ok ? (ast.downloads ?? null) : downloadsByPattern(files.get(p)!);
    return d ? [{ script: p, calls: d.calls, urls: d.urls }] : [];
  });
  for (const d of downloads)
    notes.push(
      `${d.script} downloads data (${[...new Set(d.calls.map((c) => c.kind))].join(', ')}${d.urls.length ? `: ${d.urls.slice(0, 3).join(', ')}${d.urls.length > 3 ? ', …' : ''}` : ''}); tasks have no network, so it runs as a data-download step.`,
    );
  if (pins.length === 0 && imports.size > 0) notes.push(`No requirements file; imports: ${[...imports].sort().join(', ')}.`);
  return {
    pins,
    usage,
    imports: [...imports].sort(),
    importsByFile,
    localModules: [...localModules].sort(),
    entryPoints,
    cudaSources,
    dataFolders,
    usesTorch,
    notes,
    downloads,
  };
}

/**
 * The same as python/downloads.py where no Python parsed the file (a syntax error, no interpreter
 * on the API's machine): the common calls by pattern, comments and docstrings left out. Cruder —
 * no replay, a URL only in a help text still counts — but a download is not missed.
 */
export function downloadsByPattern(text: string): { calls: DownloadCall[]; urls: string[] } | null {
  const calls: DownloadCall[] = [];
  const lines = text.replace(/("""|''')[\s\S]*?\1/g, (m) => m.replace(/[^\n]/g, ' ')).split('\n');
  const PATTERNS: [RegExp, string][] = [
    [/\burl(?:open|retrieve)\(/, 'urllib'],
    [/\b(?:requests|httpx)\.(?:get|post|request|stream|head)\(/, 'requests'],
    [/\bwget\.download\(/, 'wget'],
    [/['"\s](wget|curl)['"\s]/, 'shell'],
    [/\bdownload\s*=\s*True\b/, 'torchvision'],
    [/\bload_dataset\(\s*['"](?!(?:csv|json|text|parquet|imagefolder)['"]|\.|\/)/, 'datasets'],
    [/\b(?:hf_hub_download|snapshot_download)\(/, 'huggingface_hub'],
    [/\b(?:load_state_dict_from_url|download_url_to_file)\(/, 'torch.hub'],
    [/\bgdown\.download\(/, 'gdown'],
    [/\b(?:read_csv|read_json|read_parquet|read_table|loadtxt)\(\s*['"](?:https?|ftp):\/\//, 'pandas'],
  ];
  const urls = new Set<string>();
  lines.forEach((raw, i) => {
    const line = raw.replace(/(^|\s)#.*$/, '');
    for (const [re, kind] of PATTERNS)
      if (re.test(line)) {
        calls.push({
          line: i + 1,
          kind: kind === 'shell' ? re.exec(line)![1]! : kind,
          call: line.trim().slice(0, 300),
          replay: null,
          root: null,
        });
        break;
      }
    for (const m of line.matchAll(/['"]((?:https?|ftp):\/\/[^\s'"]{4,})/g)) urls.add(m[1]!);
  });
  return calls.length ? { calls, urls: [...urls].slice(0, 20) } : null;
}

/**
 * The Python of a notebook's code cells, in order (IPython magics and shell lines left out); '' for
 * text that is not a notebook (or was too large to be read).
 */
export function notebookCode(text: string): string {
  let nb: unknown;
  try {
    nb = JSON.parse(text);
  } catch {
    return '';
  }
  const cells = (nb as { cells?: unknown })?.cells;
  if (!Array.isArray(cells)) return '';
  return cells
    .filter(
      (c): c is { cell_type: string; source?: unknown } =>
        !!c && typeof c === 'object' && (c as { cell_type?: unknown }).cell_type === 'code',
    )
    .map((c) => (Array.isArray(c.source) ? c.source.join('') : typeof c.source === 'string' ? c.source : ''))
    .filter((src) => !/^\s*%%(?!time|timeit|capture|prun)/.test(src))
    .map((src) =>
      src
        .split('\n')
        .filter((l) => !/^\s*(%|!)/.test(l))
        .join('\n'),
    )
    .join('\n');
}

/**
 * "python train.py --epochs 3" / "python -m pkg.train" lines in the README's code (a shell
 * prompt, backticks and indentation allowed), in Makefile recipes and in a pipeline file's stage
 * commands (dvc.yaml `cmd:`), resolved to the project's
 * files: `-m pkg.train` → pkg/train.py (or pkg/train/__main__.py).
 */
export function usageCommands(files: ReadonlyMap<string, string>): UsageCommand[] {
  const out: UsageCommand[] = [];
  for (const [p, text] of files) {
    const base = p.split('/').pop()!;
    if (p.includes('/') || !/^(README(\.md|\.rst|\.txt)?|Makefile|dvc\.ya?ml)$/i.test(base)) continue;
    const pipeline = /^dvc\.ya?ml$/i.test(base);
    for (const raw of text.split('\n')) {
      // A pipeline file's stage command (dvc.yaml: `cmd: python src/train.py data/features model.pkl`).
      const stage = pipeline ? /^\s*(?:-\s*)?cmd:\s*(.+)$/.exec(raw)?.[1] : undefined;
      if (pipeline && !stage) continue;
      const line = (stage ?? raw)
        .replace(/^[\s>`]*(?:\$\s+)?/, '')
        .replace(/`+\s*$/, '')
        .replace(/^(['"])(.*)\1$/, '$2')
        .trim();
      const m = /^python3?\s+(?:-m\s+([\w.]+)|([\w./-]+\.py))(\s.*)?$/.exec(line);
      if (!m) continue;
      const module = m[1] ?? null;
      const script = module
        ? ([`${module.replace(/\./g, '/')}.py`, `${module.replace(/\./g, '/')}/__main__.py`].find((f) => files.has(f)) ?? null)
        : files.has(m[2]!.replace(/^\.\//, ''))
          ? m[2]!.replace(/^\.\//, '')
          : null;
      out.push({ file: p, command: line, script, module });
      if (out.length >= 20) return out;
    }
  }
  return out;
}

/**
 * Names passed as keywords to the metrics helper: `log(step=s, loss=l, accuracy=a)` →
 * loss, accuracy. Only when the file imports `log` from chatgpu.metrics (or calls
 * `chatgpu.metrics.log`), so an unrelated `log(...)` is not mistaken for one.
 */
export function reportedMetrics(text: string): string[] {
  const imported = /from\s+chatgpu\.metrics\s+import\s+[^\n]*\blog\b/.test(text);
  const calls = [
    ...text.matchAll(imported ? /(?<![\w.])log\(([^)]*)\)|chatgpu\.metrics\.log\(([^)]*)\)/g : /chatgpu\.metrics\.log\(([^)]*)\)/g),
  ];
  const names = new Set<string>();
  for (const c of calls) {
    const args = c[1] ?? c[2] ?? '';
    for (const m of args.matchAll(/(?:^|,)\s*([A-Za-z_]\w*)\s*=(?!=)/g)) if (m[1] !== 'step' && m[1] !== 'ts') names.add(m[1]!);
  }
  return [...names];
}

/** Does `version` satisfy a pip-style spec like "==1.13.1" or ">=1.10,<2"? Unknown specs: null. */
export function satisfies(version: string, spec: string): boolean | null {
  if (!spec) return true;
  const v = parseVersion(version);
  for (const part of spec.split(',')) {
    const m = /^(==|>=|<=|~=|!=|>|<)(.+)$/.exec(part.trim());
    if (!m) return null;
    const op = m[1]!;
    const raw = m[2]!.trim();
    if (op === '==' && raw.endsWith('.*')) {
      const prefix = parseVersion(raw.slice(0, -2));
      if (!prefix.every((x, i) => v[i] === x)) return false;
      continue;
    }
    const w = parseVersion(raw);
    const c = compare(v, w);
    const ok =
      op === '=='
        ? c === 0
        : op === '!='
          ? c !== 0
          : op === '>='
            ? c >= 0
            : op === '<='
              ? c <= 0
              : op === '>'
                ? c > 0
                : op === '<'
                  ? c < 0
                  : c >= 0 && v[0] === w[0] && (w.length < 3 || v[1] === w[1]);
    if (!ok) return false;
  }
  return true;
}

function parseVersion(s: string): number[] {
  return s
    .split(/[.+-]/)
    .map((x) => Number.parseInt(x, 10))
    .filter((n) => Number.isFinite(n));
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}
