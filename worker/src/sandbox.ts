/**
 * Sandboxing for task runs (issue 3, item 7).
 *
 * With bubblewrap (`bwrap`, Debian package bubblewrap) a run sees the host's filesystem read-only,
 * its own attempt directory writable, a private /tmp and /dev/shm, no network unless the task allows
 * it, and its own PID namespace. The command line is
 *
 *   [prlimit --data=N --]  bwrap --ro-bind / / --dev /dev --tmpfs /dev/shm --proc /proc --tmpfs /tmp
 *     --bind DIR DIR [--dev-bind GPU GPU]… [--unshare-net] --unshare-pid --die-with-parent
 *     --new-session --chdir DIR -- CMD…
 *
 * Why each flag:
 * - `--tmpfs /tmp` comes before `--bind DIR DIR`, so an attempt directory under /tmp stays visible.
 * - `--dev /dev` is a minimal /dev without GPUs: the runner passes the GPU nodes (`gpuDeviceNodes()`)
 *   for accelerator tasks, or CUDA/ROCm would see no device.
 * - `--unshare-pid` + `--die-with-parent`: killing bwrap kills its PID namespace, so cancel and lease
 *   loss reach every process the task started, even ones in their own session (`--new-session`,
 *   which stops a task from injecting keystrokes into the worker's terminal via TIOCSTI).
 * - The environment is passed through unchanged (the caller spawns with the env it wants). HOME is
 *   read-only inside: the runner should point HOME/XDG_CACHE_HOME into the attempt directory.
 *
 * Memory limits: `prlimit --data` (RLIMIT_DATA, per process, counts heap and private mappings, so an
 * over-allocating Python gets MemoryError). NOT `--as`: address-space limits break `import torch`
 * below ~2 GB and break Node (STACK.md). cgroup v1 memory (limits the whole tree) is implemented too,
 * but `auto` does not pick it: it means writing into the host's cgroup hierarchy, which on these
 * machines belongs to the container manager, and a SIGKILLed worker would leave cgroups behind.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeFailure, execCommand } from './probe/execCommand.js';
import type { ExecFn } from './probe/types.js';

export type SandboxMode = 'auto' | 'bwrap' | 'none';

export interface SandboxDetection {
  available: boolean;
  /** "bubblewrap 0.8.0" */
  version: string | null;
  /** Why bwrap cannot be used (not installed, user namespaces disabled, …); null when available. */
  reason: string | null;
  bwrap: string;
}

const TRIAL_BASIC = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', 'true'];
// Every isolation feature the runs use, so a kernel that refuses one (e.g. no network namespaces
// for unprivileged users) is found at start-up rather than at the first task.
const TRIAL_FULL = [
  '--ro-bind', '/', '/', '--dev', '/dev', '--tmpfs', '/dev/shm', '--proc', '/proc', '--tmpfs', '/tmp',
  '--unshare-net', '--unshare-pid', '--die-with-parent', '--new-session', '--', 'true',
];

/** Is bwrap installed and able to build the sandbox here? Never throws. */
export async function detectSandbox(opts: { exec?: ExecFn; timeoutMs?: number; bwrap?: string } = {}): Promise<SandboxDetection> {
  const exec = opts.exec ?? execCommand;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const bwrap = opts.bwrap ?? 'bwrap';
  const no = (version: string | null, reason: string): SandboxDetection => ({ available: false, version, reason, bwrap });

  const v = await exec(bwrap, ['--version'], { timeoutMs });
  if (v.error === 'not found') return no(null, 'bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)');
  if (v.error || v.code !== 0) return no(null, describeFailure('bwrap --version', v));
  const version = v.stdout.trim().split('\n')[0] || null;

  const basic = await exec(bwrap, TRIAL_BASIC, { timeoutMs });
  if (basic.error || basic.code !== 0) return no(version, describeFailure('bwrap trial run', basic));
  const full = await exec(bwrap, TRIAL_FULL, { timeoutMs });
  if (full.error || full.code !== 0) {
    return no(version, describeFailure('bwrap trial run with network/PID namespaces', full));
  }
  return { available: true, version, reason: null, bwrap };
}

export type SandboxChoice =
  | { ok: true; sandbox: 'bwrap' | 'none'; warning: string | null }
  | { ok: false; error: string };

/**
 * `--sandbox auto` uses bwrap when it works and otherwise runs tasks as plain processes, with a
 * warning the caller must show; `--sandbox bwrap` refuses to go on without it.
 */
export function resolveSandbox(mode: SandboxMode, detection: SandboxDetection): SandboxChoice {
  if (mode === 'none') {
    return { ok: true, sandbox: 'none', warning: 'sandbox disabled (--sandbox none): tasks run as plain processes with this user\'s full access' };
  }
  if (detection.available) return { ok: true, sandbox: 'bwrap', warning: null };
  if (mode === 'bwrap') return { ok: false, error: `--sandbox bwrap requested but unavailable: ${detection.reason}` };
  return {
    ok: true,
    sandbox: 'none',
    warning:
      `WARNING: no sandbox (${detection.reason}); tasks will run as plain processes with network access ` +
      'and this user\'s full filesystem access. Install bubblewrap to isolate them.',
  };
}

/** GPU device nodes present on this machine, to pass into the sandbox for accelerator tasks. */
export function gpuDeviceNodes(devDir = '/dev'): string[] {
  let names: string[];
  try {
    names = readdirSync(devDir);
  } catch {
    return [];
  }
  return names
    .filter((n) => /^nvidia(\d+|ctl|-uvm|-uvm-tools|-modeset|-caps)$/.test(n) || n === 'kfd' || n === 'dri')
    .sort()
    .map((n) => join(devDir, n));
}

// ---------------------------------------------------------------------------------------------
// Memory limits

export type MemoryLimitStrategy = 'auto' | 'cgroup-v1' | 'prlimit' | 'none';

export interface MemoryLimitSupport {
  /** Our own memory cgroup (v1) when it exists and is writable; children are created inside it. */
  cgroupV1: string | null;
  prlimit: boolean;
  notes: string[];
}

/** What this machine allows. Never throws. */
export async function detectMemoryLimit(
  opts: { exec?: ExecFn; timeoutMs?: number; procSelfCgroup?: string; mountinfo?: string } = {},
): Promise<MemoryLimitSupport> {
  const exec = opts.exec ?? execCommand;
  const notes: string[] = [];
  const pr = await exec('prlimit', ['--data=1073741824', '--', 'true'], { timeoutMs: opts.timeoutMs ?? 10_000 });
  const prlimit = !pr.error && pr.code === 0;
  if (!prlimit) notes.push(describeFailure('prlimit', pr));
  let cgroupV1: string | null = null;
  try {
    cgroupV1 = ownCgroupV1Memory(
      opts.procSelfCgroup ?? readFileSync('/proc/self/cgroup', 'utf8'),
      opts.mountinfo ?? readFileSync('/proc/self/mountinfo', 'utf8'),
    );
    if (cgroupV1) accessSync(cgroupV1, constants.W_OK);
  } catch (err) {
    if (cgroupV1) notes.push(`cgroup v1 memory ${cgroupV1} not writable: ${(err as Error).message}`);
    cgroupV1 = null;
  }
  if (!cgroupV1) notes.push('no writable cgroup v1 memory controller');
  return { cgroupV1, prlimit, notes };
}

/**
 * The directory of this process's cgroup v1 memory controller: "4:memory:/a/b" in /proc/self/cgroup,
 * joined to where the memory hierarchy is mounted (from mountinfo). Null on cgroup v2-only systems.
 */
export function ownCgroupV1Memory(procSelfCgroup: string, mountinfo: string): string | null {
  const line = procSelfCgroup.split('\n').find((l) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l));
  if (!line) return null;
  const rel = line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1).trim();
  for (const m of mountinfo.split('\n')) {
    // "36 25 0:32 / /sys/fs/cgroup/memory rw,… - cgroup cgroup rw,memory"
    const [left, right] = m.split(' - ');
    if (!left || !right) continue;
    const [fsType, , superOpts] = right.split(' ');
    if (fsType !== 'cgroup' || !(superOpts ?? '').split(',').includes('memory')) continue;
    const fields = left.split(' ');
    const root = fields[3] ?? '/';
    const mountPoint = fields[4];
    if (!mountPoint) continue;
    // Inside a container the mount's root may already be our cgroup ("/a/b").
    const inner = rel.startsWith(root) ? rel.slice(root === '/' ? 0 : root.length) : rel;
    return join(mountPoint, inner);
  }
  return null;
}

export interface MemoryLimitPlan {
  kind: 'cgroup-v1' | 'prlimit-data' | 'none';
  limitMiB: number | null;
  /** argv to put before the (sandboxed) command */
  prefix: string[];
  /** for the attempt's record and logs, e.g. "prlimit --data 2048 MiB (per process)" */
  description: string;
  /** Removes what `prepareMemoryLimit` created (the cgroup); call after the run has exited. */
  cleanup: () => void;
}

/**
 * Chooses and prepares a memory limit. `auto`: prlimit --data when it works, else none (cgroup v1
 * only when asked, see the file comment). A strategy that fails here falls back to the next one and
 * says so in `description`; it never throws.
 */
export function prepareMemoryLimit(opts: {
  limitMiB: number | null;
  strategy: MemoryLimitStrategy;
  support: MemoryLimitSupport;
  /** unique per attempt: names the cgroup */
  name: string;
}): MemoryLimitPlan {
  const { limitMiB, strategy, support } = opts;
  const none = (why: string): MemoryLimitPlan => ({ kind: 'none', limitMiB: null, prefix: [], description: why, cleanup: () => {} });
  if (limitMiB === null || strategy === 'none') return none('no memory limit');
  if (!Number.isFinite(limitMiB) || limitMiB <= 0) return none(`no memory limit (invalid limit ${limitMiB} MiB)`);
  const bytes = Math.floor(limitMiB) * 1024 * 1024;
  const fallbacks: string[] = [];

  if (strategy === 'cgroup-v1') {
    if (support.cgroupV1) {
      const dir = join(support.cgroupV1, `chatgpu-${opts.name.replace(/[^\w.-]/g, '_')}`);
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'memory.limit_in_bytes'), String(bytes));
        // Also cap memory+swap where swap accounting exists, or the limit just pushes pages to swap.
        const memsw = join(dir, 'memory.memsw.limit_in_bytes');
        if (existsSync(memsw)) {
          try {
            writeFileSync(memsw, String(bytes));
          } catch {
            /* swap accounting present but refused: the RAM limit still holds */
          }
        }
        return {
          kind: 'cgroup-v1',
          limitMiB: Math.floor(limitMiB),
          // The shell joins the cgroup, then becomes the command: everything it starts stays inside.
          prefix: ['sh', '-c', 'echo $$ > "$1" || exit 125; shift; exec "$@"', 'chatgpu-cgroup', join(dir, 'cgroup.procs')],
          description: `cgroup v1 memory ${Math.floor(limitMiB)} MiB (whole process tree, ${dir})`,
          cleanup: () => {
            try {
              rmdirSync(dir);
            } catch {
              /* still has processes or already gone */
            }
          },
        };
      } catch (err) {
        fallbacks.push(`cgroup v1 failed: ${(err as Error).message}`);
      }
    } else fallbacks.push('cgroup v1 unavailable');
  }
  if (support.prlimit) {
    const note = fallbacks.length ? `; ${fallbacks.join('; ')}` : '';
    return {
      kind: 'prlimit-data',
      limitMiB: Math.floor(limitMiB),
      prefix: ['prlimit', `--data=${bytes}`, '--'],
      description: `prlimit --data ${Math.floor(limitMiB)} MiB (per process)${note}`,
      cleanup: () => {},
    };
  }
  return none(`no memory limit: ${[...fallbacks, ...support.notes].join('; ') || 'not supported here'}`);
}

// ---------------------------------------------------------------------------------------------
// The command line

export interface SandboxSpec {
  sandbox: 'bwrap' | 'none';
  /** argv of the task, e.g. ['python', 'train.py'] */
  command: string[];
  /** the attempt directory: the only writable place (besides private /tmp and /dev/shm) */
  workDir: string;
  allowNetwork?: boolean;
  /** more writable binds (e.g. a shared download cache the owner allows) */
  readWrite?: string[];
  /** device nodes to expose, e.g. gpuDeviceNodes() for accelerator tasks */
  devices?: string[];
  memory?: MemoryLimitPlan | null;
  bwrap?: string;
}

export interface AppliedSandbox {
  sandbox: 'bwrap' | 'none';
  network: 'isolated' | 'host';
  filesystem: 'read-only except work dir' | 'host';
  memory: string;
}

export interface SandboxedCommand {
  file: string;
  args: string[];
  applied: AppliedSandbox;
}

/** Builds the argv; spawn it with `cwd: workDir` and the env the task should see. */
export function buildSandboxedCommand(spec: SandboxSpec): SandboxedCommand {
  if (spec.command.length === 0) throw new Error('empty command');
  const memory = spec.memory ?? null;
  const prefix = memory?.prefix ?? [];
  const memoryText = memory?.description ?? 'no memory limit';
  if (spec.sandbox === 'none') {
    const argv = [...prefix, ...spec.command];
    return {
      file: argv[0]!,
      args: argv.slice(1),
      applied: { sandbox: 'none', network: 'host', filesystem: 'host', memory: memoryText },
    };
  }
  const bw: string[] = [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--tmpfs', '/dev/shm',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    '--bind', spec.workDir, spec.workDir,
  ];
  for (const p of spec.readWrite ?? []) bw.push('--bind', p, p);
  for (const d of spec.devices ?? []) bw.push('--dev-bind', d, d);
  if (!spec.allowNetwork) bw.push('--unshare-net');
  bw.push('--unshare-pid', '--die-with-parent', '--new-session', '--chdir', spec.workDir, '--', ...spec.command);
  const bwrap = spec.bwrap ?? 'bwrap';
  const argv = [...prefix, bwrap, ...bw];
  return {
    file: argv[0]!,
    args: argv.slice(1),
    applied: {
      sandbox: 'bwrap',
      network: spec.allowNetwork ? 'host' : 'isolated',
      filesystem: 'read-only except work dir',
      memory: memoryText,
    },
  };
}
