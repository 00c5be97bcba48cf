/**
 * The commands a project's own README and Makefile give, in the order they give them, and what a
 * hosted service needs from them (pure; the same files give the same answer):
 *   - the app spec of the README's serve command (`flask --app flaskr run`, `FLASK_APP=flaskr`
 *     then `flask run`, `uvicorn main:app`), so the worker starts the app the README starts;
 *   - the setup commands that come before it (`flask --app flaskr init-db`, `python init_db.py`,
 *     `make data`, or the prerequisites of a Makefile's serve target), each with the files or
 *     folders it writes (Flask's instance folder, a sqlite file, a file opened for writing),
 *     so they can run as steps before the service and hand it what they made.
 * README code is read wherever it is (fenced or indented blocks, `$ ` prompts, inline code in
 * prose): a line or code span counts when it starts with a command this module knows, so prose
 * never does.
 */

export interface ReadmeCommand {
  /** README.md / README.rst / Makefile */
  file: string;
  /** 1-based line it was read from. */
  line: number;
  /** As written, without its prompt or an inline `VAR=value` prefix. */
  command: string;
  /** FLASK_APP and the like, from an inline prefix or an earlier `export`/`set` line of the same file. */
  env: Record<string, string>;
}

/** A setup command planned as a step before the service (planSchema PipelineStep). */
export interface SetupStep {
  name: string;
  command: string;
  produces: string[];
  /** Where it was read, for the plan's words: "README.rst line 12". */
  from: string;
}

export interface ServiceSetup {
  /** The app the README's serve command starts, when it names one. */
  app: { framework: 'flask' | 'fastapi'; spec: string; from: string } | null;
  steps: SetupStep[];
}

const README = /^README(\.md|\.rst|\.txt|\.markdown)?$/i;
const MAX_COMMANDS = 40;
/** The first word of a line that is a command (anything else is prose). */
const COMMAND_START = /^(?:(?:[A-Z_][A-Z0-9_]*=\S*\s+)*)(flask|python3?|make|uvicorn|gunicorn)\s/;
const ENV_LINE = /^(?:export|set)\s+([A-Z_][A-Z0-9_]*)=(\S*)\s*$|^\$env:([A-Z_][A-Z0-9_]*)\s*=\s*(\S+)\s*$/;

/** The command lines of the project's top-level README(s), in order (a Makefile's own targets: makeTargets). */
export function readmeCommands(files: ReadonlyMap<string, string>): ReadmeCommand[] {
  const out: ReadmeCommand[] = [];
  const seen = new Set<string>();
  for (const [file, text] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (file.includes('/') || !README.test(file)) continue;
    const env: Record<string, string> = {};
    let fenced = false;
    text.split('\n').forEach((raw, i) => {
      if (/^\s*(```|~~~)/.test(raw)) {
        fenced = !fenced;
        return;
      }
      // Code: a fenced or indented block, or a line with a shell prompt; prose only through its inline code.
      const code = fenced || /^( {4}|\t)/.test(raw) || /^\s*(?:\(\w+\)\s*)?[$%]\s/.test(raw);
      const line = raw
        .replace(/^[\s>]*(?:[-*]\s+)?`*\s*(?:\([\w.-]+\)\s*)?(?:[$%>]\s+)?/, '')
        .replace(/`+\s*$/, '')
        .replace(/\s+#.*$/, '')
        .trim();
      // A code line, or the commands quoted inline in prose ("then run `flask init-db`").
      const spans = code ? [line] : [...raw.matchAll(/`{1,2}([^`]+)`{1,2}/g)].map((m) => m[1]!.replace(/^\$\s+/, '').trim());
      for (const span of spans) {
        const e = ENV_LINE.exec(span);
        if (e) {
          env[e[1] ?? e[3]!] = (e[2] ?? e[4]!).replace(/^(['"])(.*)\1$/, '$2');
          continue;
        }
        if (!COMMAND_START.test(`${span} `) || out.length >= MAX_COMMANDS) continue;
        const inline: Record<string, string> = {};
        let command = span;
        for (let m = /^([A-Z_][A-Z0-9_]*)=(\S*)\s+/.exec(command); m; m = /^([A-Z_][A-Z0-9_]*)=(\S*)\s+/.exec(command)) {
          inline[m[1]!] = m[2]!.replace(/^(['"])(.*)\1$/, '$2');
          command = command.slice(m[0].length);
        }
        const cmdEnv = { ...env, ...inline };
        // The same commands shown again for another shell (Windows cmd) are one command.
        const key = `${command}\0${cmdEnv.FLASK_APP ?? ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ file, line: i + 1, command, env: cmdEnv });
      }
    });
  }
  return out;
}

/** A Makefile's targets: name → prerequisites and recipe lines (variables are not expanded). */
export function makeTargets(text: string): Map<string, { deps: string[]; recipe: string[] }> {
  const targets = new Map<string, { deps: string[]; recipe: string[] }>();
  let current: { deps: string[]; recipe: string[] } | null = null;
  for (const raw of text.split('\n')) {
    if (raw.startsWith('\t')) {
      if (current) current.recipe.push(raw.trim().replace(/^[@-]+/, ''));
      continue;
    }
    const m = /^([\w./-]+(?:\s+[\w./-]+)*)\s*::?(?!=)\s*([^;#]*)/.exec(raw);
    if (!m || /^\s*[\w.]+\s*[:?+]?=/.test(raw)) {
      if (raw.trim() && !raw.startsWith('#')) current = null;
      continue;
    }
    current = { deps: m[2]!.trim().split(/\s+/).filter(Boolean), recipe: [] };
    for (const name of m[1]!.split(/\s+/)) if (!name.startsWith('.')) targets.set(name, current);
  }
  return targets;
}

export interface FlaskCommand {
  /** --app / -A / FLASK_APP, when given. */
  app: string | null;
  sub: string;
  args: string[];
}

/** `flask --app X init-db`, `python -m flask -A X run`, `FLASK_APP=X flask init-db` → its parts; else null. */
export function flaskCommand(c: Pick<ReadmeCommand, 'command' | 'env'>): FlaskCommand | null {
  const words = c.command.split(/\s+/);
  let i = 0;
  if (words[0] === 'flask') i = 1;
  else if (/^python3?$/.test(words[0]!) && words[1] === '-m' && words[2] === 'flask') i = 3;
  else return null;
  let app: string | null = c.env.FLASK_APP ?? null;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--app' || w === '-A') app = words[++i] ?? app;
    else if (w.startsWith('--app=')) app = w.slice(6);
    else if (w === '-e' || w === '--env-file') i++;
    else if (!w.startsWith('-')) break;
  }
  const sub = words[i];
  if (!sub) return null;
  return { app: app?.replace(/^(['"])(.*)\1$/, '$2') ?? null, sub, args: words.slice(i + 1) };
}

/** Flask's own commands: none of them is a setup step. */
const FLASK_BUILTIN = new Set(['run', 'shell', 'routes', '--help', 'help']);
/** Make targets that are not setup: installing, checking, cleaning, serving. */
const MAKE_NOT_SETUP =
  /^(install|dev|develop|deps|requirements|venv|env|test|tests|check|lint|format|fmt|typecheck|clean|distclean|help|docs|serve|server|run|start|up|all|build-docs|release|publish|docker.*)$/;
/** Python commands that install, test or format: not setup. */
const PYTHON_NOT_SETUP =
  /^python3?\s+(?:-m\s+(?:pip|venv|virtualenv|pytest|unittest|coverage|black|flake8|mypy|build|twine|http\.server)\b|setup\.py\b)/;
/** Without a serve command in the README, only commands named like setup are steps. */
const SETUP_NAME = /init|setup|prepare|seed|migrat|create|data|download|fetch|build|generate|populate|db\b|database/i;

/**
 * What the service needs from the README: the app spec of its serve command and the setup steps
 * before it. `appFile`: the app the planner found (serviceApp.ts), so `python app.py` is known as
 * the serve command; `sources`: the project's text files (path → text), read for what a step writes.
 */
export function readmeServiceSetup(files: ReadonlyMap<string, string>, appFile: string | null): ServiceSetup {
  const commands = readmeCommands(files);
  const isServe = (c: ReadmeCommand) => {
    const f = flaskCommand(c);
    if (f) return f.sub === 'run';
    if (/^(uvicorn|gunicorn)\s/.test(c.command)) return true;
    const py = /^python3?\s+(?:-m\s+([\w.]+)|([\w./-]+\.py))/.exec(c.command);
    const module = appFile?.replace(/(\/__init__)?\.py$/, '').replace(/\//g, '.');
    return !!py && !!appFile && (py[2]?.replace(/^\.\//, '') === appFile || (py[1] !== undefined && py[1] === module));
  };
  // Several serve commands ("the simplest app", then "the blog app"): the one that serves the app its setup commands set up.
  const setupApps = new Set(
    commands
      .map((c) => flaskCommand(c))
      .filter((f) => f && f.sub !== 'run' && f.app)
      .map((f) => f!.app),
  );
  const serves = commands.flatMap((c, i) => (isServe(c) ? [i] : []));
  const serveAt = serves.find((i) => setupApps.has(flaskCommand(commands[i]!)?.app ?? '')) ?? serves[0] ?? -1;
  const serve = serveAt >= 0 ? commands[serveAt]! : null;
  const app = serve ? appSpec(serve) : null;
  const steps: SetupStep[] = [];
  const makefile = files.get('Makefile') ?? files.get('makefile') ?? files.get('GNUmakefile');
  const targets = makefile ? makeTargets(makefile) : new Map<string, { deps: string[]; recipe: string[] }>();
  const add = (name: string, command: string, produces: string[], from: string) => {
    let unique = name;
    for (let n = 2; steps.some((s) => s.name === unique); n++) unique = `${name}-${n}`;
    if (!steps.some((s) => s.command === command)) steps.push({ name: unique, command, produces, from });
  };
  for (const c of serveAt >= 0 ? commands.slice(0, serveAt) : commands) {
    const from = `${c.file} line ${c.line}`;
    const f = flaskCommand(c);
    if (f) {
      if (FLASK_BUILTIN.has(f.sub) || f.sub.startsWith('-')) continue;
      const prefix = c.env.FLASK_APP && !/(^|\s)(--app|-A)\b|--app=/.test(c.command) ? `FLASK_APP=${c.env.FLASK_APP} ` : '';
      add(stepName(f.sub), `${prefix}${c.command}`, flaskWrites(files, f.app ?? app?.spec ?? null), from);
      continue;
    }
    const make = /^make\s+([\w.-]+)\s*$/.exec(c.command);
    if (make) {
      const t = make[1]!;
      if (MAKE_NOT_SETUP.test(t) || (serveAt < 0 && !SETUP_NAME.test(t))) continue;
      add(stepName(t), c.command, makeWrites(targets, t, files), from);
      continue;
    }
    const py = /^python3?\s+(?:-m\s+([\w.]+)|([\w./-]+\.py))(\s.*)?$/.exec(c.command);
    if (py && !PYTHON_NOT_SETUP.test(c.command)) {
      const script = py[2]?.replace(/^\.\//, '') ?? moduleFile(files, py[1]!);
      if (!script || !files.has(script) || script === appFile) continue;
      if (serveAt < 0 && !SETUP_NAME.test(script)) continue;
      add(stepName(script.replace(/^.*\//, '').replace(/\.py$/, '')), c.command, scriptWrites(files.get(script)!), from);
    }
  }
  // No setup in the README: the prerequisites of the Makefile's serve target come first.
  if (steps.length === 0 && makefile) {
    const serveTarget = ['run', 'serve', 'server', 'start'].find((t) => targets.has(t));
    for (const dep of serveTarget ? targets.get(serveTarget)!.deps : []) {
      if (!MAKE_NOT_SETUP.test(dep) && targets.has(dep))
        add(stepName(dep), `make ${dep}`, makeWrites(targets, dep, files), `Makefile (${serveTarget}: ${dep})`);
    }
  }
  return { app, steps: steps.slice(0, 5) };
}

/** The app a serve command names: `flask --app X run` / FLASK_APP=X → X; `uvicorn M:app` → M:app. */
function appSpec(c: ReadmeCommand): ServiceSetup['app'] {
  const from = `${c.file} line ${c.line}`;
  const f = flaskCommand(c);
  if (f) return f.app && /^[\w.:]+(\([\w'", =.-]*\))?$/.test(f.app) ? { framework: 'flask', spec: f.app, from } : null;
  const u = /^uvicorn\s+(?:.*\s)?([\w.]+:[\w]+)(\s|$)/.exec(c.command);
  return u ? { framework: 'fastapi', spec: u[1]!, from } : null;
}

function stepName(raw: string): string {
  const n = raw
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return n || 'setup';
}

function moduleFile(files: ReadonlyMap<string, string>, module: string): string | null {
  const base = module.replace(/\./g, '/');
  return [`${base}.py`, `${base}/__main__.py`].find((f) => files.has(f)) ?? null;
}

/**
 * What a flask command of the app writes: the app's instance folder (a sqlite file joined to
 * `app.instance_path`, else the folder), plus sqlite files at literal paths. Flask puts the
 * instance folder beside the app's package (or module) when it is not installed.
 */
export function flaskWrites(files: ReadonlyMap<string, string>, app: string | null): string[] {
  const py = [...files].filter(([p]) => p.endsWith('.py'));
  const module = app?.split(':')[0]?.replace(/\(.*$/, '') ?? null;
  const appPath = module
    ? [`${module.replace(/\./g, '/')}/__init__.py`, `${module.replace(/\./g, '/')}.py`].find((f) => files.has(f))
    : undefined;
  // The package's folder's parent, or the module's folder.
  const appDir = appPath
    ? appPath
        .split('/')
        .slice(0, appPath.endsWith('__init__.py') ? -2 : -1)
        .join('/')
    : '';
  const instance = appDir ? `${appDir}/instance` : 'instance';
  const out = new Set<string>();
  let usesInstance = false;
  for (const [, text] of py) {
    if (/\binstance_path\b/.test(text)) usesInstance = true;
    for (const m of text.matchAll(/os\.path\.join\(\s*(?:\w+\.)*instance_path\s*,\s*(['"])([\w.-]+)\1\s*\)/g))
      out.add(`${instance}/${m[2]}`);
    for (const w of sqliteFiles(text)) out.add(w);
  }
  if (usesInstance && ![...out].some((o) => o.startsWith(`${instance}/`))) out.add(instance);
  return [...out].sort();
}

/** sqlite files at literal relative paths: sqlite3.connect("app.db"), "sqlite:///app.db". */
function sqliteFiles(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/sqlite3\.connect\(\s*(['"])([\w./-]+)\1|(['"])sqlite:\/\/\/([\w./-]+)\3/g)) {
    const p = (m[2] ?? m[4]!).replace(/^\.\//, '');
    if (p !== ':memory:' && !p.startsWith('/') && !p.split('/').includes('..')) out.push(p);
  }
  return out;
}

/** What a setup script writes at literal relative paths: sqlite files, files opened for writing, folders it makes. */
export function scriptWrites(source: string): string[] {
  const out = new Set(sqliteFiles(source));
  for (const m of source.matchAll(/\bopen\(\s*(['"])([\w./-]+)\1\s*,\s*(['"])[wax]b?\+?\3/g)) out.add(m[2]!.replace(/^\.\//, ''));
  for (const m of source.matchAll(/\bos\.(?:makedirs|mkdir)\(\s*(['"])([\w./-]+)\1|\bPath\(\s*(['"])([\w./-]+)\3\s*\)\.mkdir\(/g))
    out.add((m[2] ?? m[4]!).replace(/^\.\//, '').replace(/\/$/, ''));
  return [...out].filter((p) => p && !p.startsWith('/') && !p.split('/').includes('..') && !p.startsWith('outputs')).sort();
}

/** What `make T` writes: its file targets (its own name when it names a path) and what its recipe writes (`> f`, `-o f`, `mkdir -p d`, a script it runs). */
function makeWrites(
  targets: Map<string, { deps: string[]; recipe: string[] }>,
  target: string,
  files: ReadonlyMap<string, string>,
): string[] {
  const out = new Set<string>();
  const visit = (t: string, depth: number) => {
    const rule = targets.get(t);
    if (!rule || depth > 3) return;
    if (/[./]/.test(t) && !files.has(t)) out.add(t);
    for (const line of rule.recipe) {
      for (const m of line.matchAll(/(?:>|\s-o|\s--output)\s*([\w./-]+)/g)) out.add(m[1]!);
      for (const m of line.matchAll(/mkdir\s+(?:-p\s+)?([\w./-]+)/g)) out.add(m[1]!.replace(/\/$/, ''));
      const py = /python3?\s+([\w./-]+\.py)/.exec(line);
      if (py && files.has(py[1]!)) for (const w of scriptWrites(files.get(py[1]!)!)) out.add(w);
    }
    for (const d of rule.deps) visit(d, depth + 1);
  };
  visit(target, 0);
  return [...out].filter((p) => !p.includes('$') && !p.startsWith('/') && !p.split('/').includes('..')).sort();
}
