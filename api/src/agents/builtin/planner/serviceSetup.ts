/**
 * The builtin planner's services rule, README part: the app a hosted service starts and the
 * setup steps that run before it, as the project's own README (or Makefile) says.
 *   - The README's serve command names the app (`flask --app flaskr run`, FLASK_APP=flaskr then
 *     `flask run`, `uvicorn main:app`): that spec is started, on the worker's $PORT, the way
 *     serviceApp.ts starts any app; otherwise the app serviceApp.ts finds.
 *   - The README's setup commands before its serve command (`flask --app flaskr init-db`,
 *     `python init_db.py`, `make data`; or the prerequisites of the Makefile's serve target)
 *     become the plan's `before` steps, each producing what it writes (Flask's instance folder,
 *     a sqlite file), handed to the SERVICE task at the same paths.
 *   - A setup ask ("initialise the database first") is honoured by those steps, or by the step it
 *     names (`make data`, `init_db.py`) when the project has it; otherwise it is refused, saying
 *     which setup the project's README gives (none) — never silently dropped.
 * Pure: the caller (hostedService.ts) gives the files it read.
 */
import type { AskDisposition, PipelineStep } from '../../../domain/jobs/planSchema.js';
import { findServiceApp, type ServiceApp } from '../../planner/serviceApp.js';
import { makeTargets, readmeServiceSetup, scriptWrites, type SetupStep } from '../../planner/readmeCommands.js';
import { parseAsks } from '../../planner/asks/parseAsks.js';

/** Top-level files the rule reads besides the Python sources. */
export function serviceDocs(paths: string[]): string[] {
  return paths
    .filter((p) => !p.includes('/') && (/^README(\.md|\.rst|\.txt|\.markdown)?$/i.test(p) || /^(GNUmakefile|[Mm]akefile)$/.test(p)))
    .slice(0, 3);
}

export interface ServicePlanParts {
  app: ServiceApp;
  before: PipelineStep[];
  /** Where the app spec came from ("README.rst line 40"), or null: found in the code. */
  specFrom: string | null;
  /** Each step's origin, by name. */
  stepsFrom: Record<string, string>;
}

/** The app and its setup steps from what was read (path → text), or the reason there is no app to serve. */
export function servicePlanParts(read: ReadonlyMap<string, string>, request: string): ServicePlanParts | { reason: string } {
  const found = findServiceApp(new Map([...read].filter(([p]) => p.endsWith('.py'))));
  const setup = readmeServiceSetup(read, 'app' in found ? found.app.file : null);
  let app: ServiceApp;
  if (setup.app) {
    const module = setup.app.spec.split(':')[0]!.replace(/\(.*$/, '');
    const base = module.replace(/\./g, '/');
    const file = [`${base}/__init__.py`, `${base}.py`].find((f) => read.has(f)) ?? ('app' in found ? found.app.file : `${base}.py`);
    const text = [...read]
      .filter(([p]) => p === file || p.startsWith(`${base}/`))
      .map(([, t]) => t)
      .join('\n');
    const readinessPath = /['"](\/(?:healthz?|ready|readyz|ping|status))['"]/.exec(text)?.[1] ?? '/';
    // A factory call (`hello:create_app("dev")`) is one shell word.
    const spec = /^[\w.:]+$/.test(setup.app.spec) ? setup.app.spec : `'${setup.app.spec.replace(/'/g, `'\\''`)}'`;
    app =
      setup.app.framework === 'flask'
        ? {
            file,
            command: `python -m flask --app ${spec} run --host 127.0.0.1 --port "$PORT"`,
            framework: 'flask',
            servers: ['flask'],
            readinessPath,
          }
        : {
            file,
            command: `python -m uvicorn ${setup.app.spec} --host 127.0.0.1 --port "$PORT"`,
            framework: 'fastapi',
            servers: ['uvicorn'],
            readinessPath,
          };
  } else if ('app' in found) app = found.app;
  else return found;
  const steps: SetupStep[] = [...setup.steps];
  // A setup step the user names that the README does not give, when the project has it.
  for (const ask of parseAsks(request)) {
    const target = ask.kind === 'setup' ? ask.target : undefined;
    if (!target || steps.some((s) => s.command.includes(target))) continue;
    const make = /^make\s+([\w.-]+)$/.exec(target)?.[1];
    const makefile = read.get('Makefile') ?? read.get('makefile') ?? read.get('GNUmakefile');
    if (make && makefile && makeTargets(makefile).has(make))
      steps.push({ name: uniqueName(steps, make), command: target, produces: [], from: 'your request' });
    else if (/\.py$/.test(target) && read.has(target) && target !== app.file)
      steps.push({
        name: uniqueName(steps, target.replace(/^.*\//, '').replace(/\.py$/, '')),
        command: `python ${target}`,
        produces: scriptWrites(read.get(target)!),
        from: 'your request',
      });
  }
  return {
    app,
    before: steps.slice(0, 5).map((s) => ({ name: s.name, command: s.command, produces: s.produces })),
    specFrom: setup.app?.from ?? null,
    stepsFrom: Object.fromEntries(steps.map((s) => [s.name, s.from])),
  };
}

function uniqueName(steps: SetupStep[], raw: string): string {
  const name =
    raw
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || 'setup';
  let unique = name;
  for (let n = 2; steps.some((s) => s.name === unique); n++) unique = `${name}-${n}`;
  return unique;
}

/**
 * The service's asks with its setup asks decided by its steps: honoured by the step the ask names
 * (or, when it names none, by all of them), refused when there is no step to honour it.
 */
export function withSetupSteps(
  asks: AskDisposition[],
  request: string,
  parts: Pick<ServicePlanParts, 'before' | 'stepsFrom'>,
): AskDisposition[] {
  const setupAsks = parseAsks(request).filter((a) => a.kind === 'setup');
  return asks.map((d) => {
    if (d.kind !== 'setup') return d;
    const ask = setupAsks.find((a) => a.text === d.ask);
    const steps = ask?.target ? parts.before.filter((s) => s.command.includes(ask.target!)) : parts.before;
    if (steps.length === 0) {
      const have = parts.before.map((s) => `\`${s.command}\``).join(', ');
      return {
        ...d,
        status: 'refused' as const,
        detail: have
          ? `the project has no setup command ${ask?.target ? `\`${ask.target}\`` : 'for that'}; the setup its README gives is ${have}`
          : "the project's README and Makefile give no setup command to run before the app serves (a `flask … init-db`, `python init_db.py` or `make data` line before its serve command), and the request names none the project has",
      };
    }
    const words = steps
      .map(
        (s) =>
          `\`${s.command}\` (${parts.stepsFrom[s.name] ?? 'README'}${s.produces.length ? `; hands ${s.produces.join(', ')} to the service` : ''})`,
      )
      .join(', then ');
    return { ...d, status: 'honoured' as const, detail: `runs first as a setup step on the same worker class: ${words}`.slice(0, 1000) };
  });
}
