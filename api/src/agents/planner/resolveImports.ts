/**
 * Every third-party import of the files a plan will run — followed through the project's own
 * modules — resolved against the workers that could run it, before anything runs:
 *   present      every such worker's Python imports it;
 *   installable  the project's requirements name a distribution that provides it and some of
 *                those workers install packages (a setup phase: the requirement line goes to pip);
 *   unavailable  neither — the planner explains (or asks) before the run, never a crash at import.
 * Pure: facts from analyzeProject, classes from networkCapacity.
 */
import type { WorkerClass } from '../../domain/workers/networkCapacity.js';
import type { Pin, ProjectFacts } from './analyzeProject.js';

export interface ImportResolution {
  module: string;
  status: 'present' | 'installable' | 'unavailable' | 'unknown';
  /** The requirement line pip installs (installable), or the one that names it. */
  requirement: string | null;
  /** The files (of those that run) that import it. */
  importedBy: string[];
}

export interface DependencyCheck {
  imports: ImportResolution[];
  /** Requirement lines for the setup phase (plan.install.pip); empty when nothing to install. */
  install: string[];
  unavailable: string[];
  /** One sentence for the user (why it cannot run, or what will be installed), or null. */
  summary: string | null;
}

/** Import names whose distribution is called otherwise (lower-cased, normalized). */
const DISTRIBUTIONS: Record<string, string[]> = {
  yaml: ['pyyaml'],
  PIL: ['pillow'],
  sklearn: ['scikit-learn'],
  skimage: ['scikit-image'],
  cv2: ['opencv-python', 'opencv-python-headless', 'opencv-contrib-python'],
  bs4: ['beautifulsoup4'],
  dateutil: ['python-dateutil'],
  dotenv: ['python-dotenv'],
  jwt: ['pyjwt'],
  serial: ['pyserial'],
  zmq: ['pyzmq'],
  attr: ['attrs'],
  Crypto: ['pycryptodome'],
  google: ['protobuf'],
  tensorboardX: ['tensorboardx'],
};

/** Packages the planner checks by version (network_capacity's torch/numpy versions), not here. */
const VERSIONED = new Set(['torch', 'numpy']);

export const normalizeDist = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** Does the requirement `pin` provide the import `module`? */
export function provides(pin: Pin, module: string): boolean {
  const dist = normalizeDist(pin.name);
  return (
    dist === normalizeDist(module) || ((Object.hasOwn(DISTRIBUTIONS, module) ? DISTRIBUTIONS[module] : undefined) ?? []).includes(dist)
  );
}

/** Third-party imports of `files` and of the project modules they import, transitively. */
export function importsOf(facts: ProjectFacts, files: readonly string[]): Map<string, string[]> {
  const byModule = new Map<string, string[]>();
  const seen = new Set<string>();
  const queue = [...files];
  const files0 = Object.keys(facts.importsByFile);
  const filesOfModule = (m: string) => {
    if (!m.includes('.'))
      return files0.filter((p) => p === `${m}.py` || p.endsWith(`/${m}.py`) || p.startsWith(`${m}/`) || p.includes(`/${m}/`));
    // pkg.sub.mod: that module (a file or a package) and the __init__ of each package on the way.
    const parts = m.split('/').join('.').split('.');
    const path = parts.join('/');
    const inits = parts.slice(0, -1).map((_, i) => `${parts.slice(0, i + 1).join('/')}/__init__.py`);
    const wanted = new Set([`${path}.py`, `${path}/__init__.py`, ...inits]);
    return files0.filter((p) => wanted.has(p) || [...wanted].some((w) => p.endsWith(`/${w}`)));
  };
  while (queue.length) {
    const f = queue.shift()!;
    if (seen.has(f)) continue;
    seen.add(f);
    // Own entries only: a file named like a prototype member (__proto__, constructor) is not in the project.
    const own = Object.hasOwn(facts.importsByFile, f) ? facts.importsByFile[f] : undefined;
    if (!own) continue;
    for (const m of own.thirdParty) byModule.set(m, [...new Set([...(byModule.get(m) ?? []), f])]);
    for (const l of own.local) queue.push(...filesOfModule(l));
  }
  return byModule;
}

/**
 * `missingAtRunTime`: modules a run of this job failed to import (the run supervisor's evidence
 * on a replan) — checked even when no file imports them visibly (an import by name, a plugin),
 * and never taken as present on the workers' word: the run showed otherwise.
 */
export function resolveImports(
  facts: ProjectFacts,
  files: readonly string[],
  classes: readonly WorkerClass[],
  missingAtRunTime: readonly string[] = [],
): DependencyCheck {
  const wanted = importsOf(facts, files);
  for (const m of missingAtRunTime) if (!wanted.has(m)) wanted.set(m, ['(a run: ModuleNotFoundError)']);
  const known = classes.filter((c) => c.modules !== null);
  const installers = classes.reduce((n, c) => n + c.installers, 0);
  const imports: ImportResolution[] = [];
  for (const [module, importedBy] of [...wanted].sort(([a], [b]) => a.localeCompare(b))) {
    if (VERSIONED.has(module)) continue; // checked with their versions (pins, torch on the workers)
    const pin = facts.pins.find((p) => provides(p, module)) ?? null;
    let status: ImportResolution['status'];
    if (missingAtRunTime.includes(module)) status = pin && installers > 0 ? 'installable' : 'unavailable';
    else if (known.length === 0) status = 'unknown';
    else if (known.every((c) => c.modules!.includes(module))) status = 'present';
    else status = pin && installers > 0 ? 'installable' : 'unavailable';
    imports.push({ module, status, requirement: pin?.line ?? null, importedBy });
  }
  const install = [...new Set(imports.filter((i) => i.status === 'installable').map((i) => i.requirement!))];
  const missing = imports.filter((i) => i.status === 'unavailable');
  let summary: string | null = null;
  if (missing.length) {
    const unlisted = missing.filter((i) => !i.requirement);
    const listed = missing.filter((i) => i.requirement);
    const who = (i: ImportResolution) => `${i.module} (imported by ${i.importedBy.join(', ')})`;
    const python = [...new Set(classes.flatMap((c) => c.pythonVersions))].join('/') || 'unknown';
    summary = [
      `The workers' Python (${python}) lacks ${missing.map(who).join(', ')}.`,
      unlisted.length
        ? `No requirements file lists ${unlisted.map((i) => i.module).join(', ')}: add ${unlisted.length === 1 ? 'it' : 'them'} to requirements.txt so a worker can install ${unlisted.length === 1 ? 'it' : 'them'}.`
        : null,
      listed.length && installers === 0
        ? `${listed.map((i) => i.requirement).join(', ')} ${listed.length === 1 ? 'is' : 'are'} listed, but no online worker installs packages.`
        : null,
    ]
      .filter(Boolean)
      .join(' ');
  } else if (install.length)
    summary = `A setup phase installs ${install.join(', ')} on the worker before the run (the worker's own packages stay as they are).`;
  return { imports, install, unavailable: missing.map((i) => i.module), summary };
}
