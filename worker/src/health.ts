/**
 * The worker's own prerequisites, checked before it takes work and again when a run could not
 * start: what every task of this worker needs from the machine, which the machine can lose while
 * the worker runs (a package removed or upgraded, a full disk, a crashed GPU driver, a Python
 * deleted). A worker that fails the check would fail every task it is offered at once — a black
 * hole — so it stops claiming (UNHEALTHY, with the reason: session.ts) until the check passes
 * again, and a run that failed because of it is an infrastructure error (retried on another
 * worker, not counted against the user's attempts), never the user's failure.
 *
 *   sandbox binary  bwrap, when tasks run in the sandbox (resolved the way the runner starts it)
 *   interpreter     the Python tasks run with (caps.python; `python` in a task's command)
 *   disk            free space for the run folder (the attempt's files and outputs) in the data dir
 *   devices         the GPU device nodes, when the worker advertises a real accelerator
 * Each is a few system calls (no process is started), so it runs before every claim.
 */
import { accessSync, constants, statfsSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Accelerator } from './probe/types.js';
import { gpuDeviceNodes } from './sandbox.js';

/** Free space the run folder needs at least (MiB): a task's files, its outputs and logs on the way out. */
export const MIN_FREE_DISK_MIB = 256;

/** How often an idle or busy worker re-checks (a claim re-checks too). */
export const HEALTH_CHECK_MS = 5000;

export interface Prerequisites {
  sandbox: 'bwrap' | 'none';
  /** the sandbox binary as the runner starts it (default 'bwrap', found on the launcher's PATH) */
  bwrap?: string;
  python: string | null;
  dataDir: string;
  minFreeMiB?: number;
  accelerators?: Accelerator[];
  /** where GPU device nodes live (tests) */
  devDir?: string;
}

export type Health = { ok: true } | { ok: false; errorClass: 'SANDBOX_ERROR' | 'WORKER_ERROR'; reason: string };

/** The PATH the runner's launchers are found on (sandbox.ts buildSandboxedCommand), then the worker's own. */
const LAUNCHER_PATH = ['/usr/bin', '/bin'];

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK); // follows links: a dangling one fails
    return true;
  } catch {
    return false;
  }
}

/** The file `name` runs as: itself when it names a path, else the first executable on PATH. */
export function resolveExecutable(
  name: string,
  pathDirs: string[] = [...LAUNCHER_PATH, ...(process.env.PATH ?? '').split(delimiter)],
): string | null {
  if (name.includes('/')) return executable(name) ? name : null;
  for (const d of pathDirs) if (d && isAbsolute(d) && executable(join(d, name))) return join(d, name);
  return null;
}

export function checkPrerequisites(p: Prerequisites): Health {
  if (p.sandbox === 'bwrap') {
    const bwrap = p.bwrap ?? 'bwrap';
    if (!resolveExecutable(bwrap)) {
      return {
        ok: false,
        errorClass: 'SANDBOX_ERROR',
        reason: `the sandbox binary ${bwrap} is missing or not executable (Debian/Ubuntu: apt-get install bubblewrap)`,
      };
    }
  }
  if (p.python && !executable(p.python)) {
    return {
      ok: false,
      errorClass: 'WORKER_ERROR',
      reason: `the interpreter ${p.python} is missing or not executable (reinstall it, or restart the worker with --python PATH)`,
    };
  }
  const min = p.minFreeMiB ?? MIN_FREE_DISK_MIB;
  try {
    accessSync(p.dataDir, constants.W_OK);
    const s = statfsSync(p.dataDir);
    const freeMiB = Math.floor((Number(s.bavail) * Number(s.bsize)) / 2 ** 20);
    if (freeMiB < min)
      return {
        ok: false,
        errorClass: 'WORKER_ERROR',
        reason: `no space for the run folder: ${freeMiB} MiB free in ${p.dataDir}, at least ${min} MiB needed`,
      };
  } catch (err) {
    return {
      ok: false,
      errorClass: 'WORKER_ERROR',
      reason: `the data folder ${p.dataDir} cannot be written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    };
  }
  const real = (p.accelerators ?? []).filter((a) => !a.simulated && (a.vendor === 'nvidia' || a.vendor === 'amd'));
  if (real.length && process.platform === 'linux' && gpuDeviceNodes(p.devDir).length === 0) {
    return {
      ok: false,
      errorClass: 'WORKER_ERROR',
      reason: `the GPU device nodes are gone (${real.map((a) => a.name).join(', ')} advertised; none under ${p.devDir ?? '/dev'}): the driver crashed or was unloaded`,
    };
  }
  return { ok: true };
}

/**
 * A run that exited 126 or 127 (the shell's and the launchers' "cannot execute" / "not found"),
 * or whose first words on stderr are a launcher's own (bwrap, prlimit, setpriv: the program never
 * started), failed because of the worker when its prerequisites fail now: an infrastructure
 * error. Otherwise it is the program's own failure (a command it names that does not exist).
 */
export function launcherFailure(r: { code: number | null; stderrHead: string }, now: Health): Health {
  if (now.ok) return now;
  const launcher = r.code === 126 || r.code === 127 || /^(bwrap|prlimit|setpriv): /.test(r.stderrHead);
  return launcher ? now : { ok: true };
}
