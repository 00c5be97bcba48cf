/**
 * Outputs a plan asks the worker to make besides the program's own files. The planner sets them in
 * the task's environment, each a path relative to the run folder:
 *
 * - `CHATGPU_FIGURES=<folder>` (e.g. outputs/figures): every matplotlib figure the program shows is
 *   saved there as figure-1.png, figure-2.png … (numbered across the run), and the figures still
 *   open when it exits too (worker/python/chatgpu/figures.py, loaded at the interpreter's start-up
 *   through chatgpu/_startup/sitecustomize.py, which is put on PYTHONPATH only for such tasks).
 * - `CHATGPU_STDOUT_FILE=<file>` (e.g. outputs/stdout.txt): the program's stdout, byte for byte,
 *   without the metric lines (metricLine.ts), written by the worker as the program prints
 *   (stdoutFile.ts) and uploaded as an output at that path. Generated samples that a program prints
 *   are asked for the same way, with a samples name (CHATGPU_STDOUT_FILE=outputs/samples.txt).
 *
 * Both are collected as outputs whether or not the plan's `outputs` list them. A value that is
 * absolute, leaves the run folder or names the worker's own folder (.chatgpu) is refused with a
 * note and nothing is made for it.
 */
import path from 'node:path';

export const FIGURES_ENV = 'CHATGPU_FIGURES';
export const STDOUT_FILE_ENV = 'CHATGPU_STDOUT_FILE';
/** The PYTHONPATH entry (under the helpers) whose sitecustomize installs the figures hook. */
export const FIGURES_STARTUP = 'chatgpu/_startup';

export interface RequestedOutputs {
  /** the figures folder, relative to the run folder */
  figures: string | null;
  /** the stdout file, relative to the run folder */
  stdoutFile: string | null;
  /** why a value was refused, one sentence each */
  problems: string[];
}

/** A path inside the run folder, normalized ("./outputs//x/" → "outputs/x"), or null. */
export function runPath(value: string): string | null {
  const clean = path.posix
    .normalize(value.trim())
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '');
  if (!clean || clean === '.' || clean === '..' || clean.startsWith('../') || path.posix.isAbsolute(clean)) return null;
  if (clean === '.chatgpu' || clean.startsWith('.chatgpu/')) return null;
  return clean;
}

/** What the task's environment asks for. */
export function requestedOutputs(environment: unknown): RequestedOutputs {
  const env = (environment && typeof environment === 'object' ? environment : {}) as Record<string, unknown>;
  const problems: string[] = [];
  const read = (name: string): string | null => {
    const v = env[name];
    if (v === undefined || v === null || v === '') return null;
    const p = typeof v === 'string' ? runPath(v) : null;
    if (p === null) problems.push(`${name}=${String(v)} ignored: it must be a path inside the run folder (e.g. outputs/…)`);
    return p;
  };
  const figures = read(FIGURES_ENV);
  const stdoutFile = read(STDOUT_FILE_ENV);
  return { figures, stdoutFile, problems };
}

/**
 * The task environment's changes for its figures: the folder as the task sees it, and the start-up
 * hook first on PYTHONPATH. `env` is the task's environment so far; `workDir` and `helpersDir` are
 * the paths inside the sandbox (sandboxPaths). Without figures the variable is removed (a refused
 * value must not reach the hook) and nothing else changes.
 */
export function figuresEnvironment(
  env: Record<string, string>,
  figures: string | null,
  workDir: string,
  helpersDir: string,
): Record<string, string> {
  if (!figures) {
    delete env[FIGURES_ENV];
    return env;
  }
  const startup = `${helpersDir}/${FIGURES_STARTUP}`;
  env[FIGURES_ENV] = `${workDir}/${figures}`;
  env.PYTHONPATH = env.PYTHONPATH ? `${startup}:${env.PYTHONPATH}` : startup;
  return env;
}
