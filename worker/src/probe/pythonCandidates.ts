import { accessSync, constants, existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';

export interface PythonCandidateOptions {
  /** `--python PATH`: when given, it is the only candidate (even if it does not exist: the probe says so). */
  python?: string;
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  home?: string;
}

/**
 * The interpreters worth probing, in order of preference for ties: PATH's python3/python first (what
 * the owner would run), then active virtualenv / conda envs, then the usual system places. On these
 * machines PATH's python3 may be a pyenv Python without torch while /usr/bin/python3 has Debian's.
 *
 * Deduplicated by realpath — except a virtualenv's python, which is a symlink to its base interpreter
 * yet sees other packages, so it keeps its own path as identity (a pyvenv.cfg sits next to its bin/).
 */
export function pythonCandidates(opts: PythonCandidateOptions = {}): string[] {
  if (opts.python) return [resolve(opts.python)];
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  const home = opts.home ?? env.HOME ?? homedir();

  const raw: string[] = [];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    raw.push(join(dir, 'python3'), join(dir, 'python'));
  }
  if (env.VIRTUAL_ENV) raw.push(join(env.VIRTUAL_ENV, 'bin', 'python'));
  const condaRoots = new Set<string>();
  if (env.CONDA_PREFIX) {
    raw.push(join(env.CONDA_PREFIX, 'bin', 'python'));
    // CONDA_PREFIX is the active env: its base holds the other envs.
    const base = /[/\\]envs[/\\][^/\\]+$/.test(env.CONDA_PREFIX) ? dirname(dirname(env.CONDA_PREFIX)) : env.CONDA_PREFIX;
    condaRoots.add(base);
  }
  if (env.CONDA_EXE) condaRoots.add(dirname(dirname(env.CONDA_EXE)));
  for (const root of condaRoots) {
    raw.push(join(root, 'bin', 'python'));
    for (const name of safeReaddir(join(root, 'envs'))) raw.push(join(root, 'envs', name, 'bin', 'python'));
  }
  // macOS's /usr/bin/python3 is a stub that pops an installer dialog without the command line tools.
  if (platform !== 'darwin' || existsSync('/Library/Developer/CommandLineTools/usr/bin/python3')) {
    raw.push('/usr/bin/python3');
  }
  raw.push(
    '/usr/local/bin/python3',
    '/opt/homebrew/bin/python3',
    '/opt/conda/bin/python3',
    join(home, 'miniconda3', 'bin', 'python3'),
    join(home, 'anaconda3', 'bin', 'python3'),
    join(home, 'miniforge3', 'bin', 'python3'),
  );

  const seen = new Set<string>();
  const out: string[] = [];
  for (const p of raw) {
    if (!isExecutable(p)) continue;
    const key = identity(p);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(p);
  }
  return out.slice(0, 24);
}

function identity(p: string): string {
  if (existsSync(join(dirname(p), '..', 'pyvenv.cfg'))) return resolve(p);
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}
