/**
 * Sandboxing for task runs: a task sees only what it needs, by construction (DESIGN.md §6, invariant 11).
 *
 * With bubblewrap (`bwrap`, Debian package bubblewrap) nothing of the host is visible unless it is
 * bound in. The command line, when the worker runs as root (`[…]` only when it applies):
 *
 *   [prlimit --data=N --]  prlimit --nproc=P --  bwrap
 *     --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin
 *     --symlink usr/sbin /sbin --ro-bind-try /etc/ld.so.cache … (a few /etc files, RUNTIME_ETC)
 *     --ro-bind PASSWD /etc/passwd --ro-bind GROUP /etc/group
 *     --dev /dev --size N --perms 1777 --tmpfs /dev/shm --proc /proc
 *     --perms 0555 --size 4096 --tmpfs /proc/1 --remount-ro /proc/1   (bwrap's own PID 1, see below)
 *     --size N --perms 1777 --tmpfs /tmp
 *     [--ro-bind PREFIX PREFIX]…            interpreter prefix outside /usr (pyenv, conda, venv)
 *     [--bind DIR DIR]…                     setup phase only: the environment being built (setupEnv.ts)
 *     --ro-bind HELPERS /opt/chatgpu/python  the worker's Python helpers (PYTHONPATH)
 *     --bind ATTEMPT_DIR /task --chdir /task
 *     [--dev-bind GPU GPU… --ro-bind /sys /sys]   accelerator tasks only
 *     --unshare-ipc --unshare-pid --unshare-uts --unshare-cgroup-try --unshare-net (unless allowed)
 *     --hostname chatgpu-task --die-with-parent --new-session
 *     --cap-drop ALL --seccomp 3 --cap-add CAP_SETUID --cap-add CAP_SETGID --cap-add CAP_SETPCAP
 *     --clearenv --setenv K V…
 *     -- /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all -- CMD…
 *
 * and, when the worker is an ordinary user, `--unshare-all [--share-net] --cap-drop ALL --seccomp 3` and CMD
 * directly (bwrap then builds a user namespace itself; the task keeps the owner's uid, but sees none of
 * the owner's files).
 *
 * Why each part:
 * - Only /usr, a few /etc files, the interpreter's prefix, the helpers and the attempt directory are
 *   bound: the owner's home, /root, other attempts, the blob cache, /run and every host Unix socket
 *   (they are files; `--unshare-net` does not hide them) simply do not exist inside. Abstract Unix
 *   sockets have no file: the network namespace hides them, so a task allowed the network reaches them.
 * - Every missing parent of a bind's destination is made first with `--perms 0755 --dir` (bwrap would
 *   make it 0700, and the task's uid could not enter /etc, /opt or /root/.pyenv/versions).
 * - /etc/passwd and /etc/group are two-line files the runner writes (`writeIdentityFiles`), so
 *   `getpass.getuser()` and `pwd` work without showing the host's accounts.
 * - The attempt directory is mounted at the fixed path /task (TASK_DIR): the task's paths do not
 *   reveal where the worker keeps its data, and no interpreter prefix can overlay it.
 * - The helpers are bound at /opt/chatgpu/python (HELPERS_DIR): a worker installed under /tmp would
 *   otherwise lose them behind the private /tmp, and metrics would silently vanish.
 * - `--perms 1777 --tmpfs /tmp` (and /dev/shm): private and writable by the unprivileged uid, each
 *   `--size` bounded (DEFAULT_TMP_SIZE_MIB): tmpfs pages are RAM the per-process limit does not count.
 * - Root worker: bwrap runs privileged without a user namespace (`--unshare-all` would add one that maps
 *   only uid 0), keeps CAP_SETUID/SETGID/SETPCAP for one step, and `setpriv` becomes host uid 65534
 *   with no capabilities at all (all five sets empty) before the task starts. The task is then a real
 *   unprivileged host user: not host root mapped to 65534 (which `--unshare-user --uid 65534` gives
 *   and which keeps root's ownership of every root-owned file it can reach, and is exempt from
 *   RLIMIT_NPROC). bwrap sets no_new_privs, so no setuid binary gives privileges back.
 * - `--unshare-pid` + `--die-with-parent`: killing bwrap kills its PID namespace, so cancel and lease
 *   loss reach every process of the task, even ones in their own session (`--new-session`, which also
 *   stops a task from injecting keystrokes into the worker's terminal via TIOCSTI). Inside, /proc shows
 *   only the task's processes: never the worker's command line or environment.
 * - `--clearenv` + `--setenv`: the task's environment is exactly what the runner built from scratch;
 *   bwrap itself is spawned with only PATH, since its own /proc/1/environ is visible inside.
 * - `--hostname`, `--unshare-uts`/`-ipc`/`-cgroup`: the host's name, SysV IPC and cgroup paths stay out.
 * - GPU device nodes and /sys (read-only; CUDA's NVML and ROCm's topology read it) only for tasks whose
 *   workload needs the accelerator.
 * - `--seccomp 3`: a system call filter (seccomp.ts has the list and why) refuses what an unprivileged
 *   task never needs and what widens the kernel's attack surface: new namespaces (unshare, setns,
 *   clone with namespace flags, clone3 → ENOSYS so libc falls back to clone), mounts, bpf,
 *   userfaultfd, perf_event_open, io_uring, keyrings, kexec and modules, swap, reboot, acct, quotactl,
 *   syslog, setting the clock, ptrace, process_vm_writev, pidfd_getfd, file handles, personalities
 *   other than the defaults, and the TIOCSTI/TIOCLINUX ioctls (every other ioctl and mmap pass: CUDA
 *   and ROCm drive the GPU through them); a call through another ABI (i386, x32, AArch32) kills the
 *   process. The compiled program (`SandboxedCommand.seccomp`) reaches bwrap through a pipe on fd 3
 *   (`spawnSandboxed`); bwrap reads and closes it and loads it just before it execs the command, so
 *   setpriv and the task run under it. There is no worker option to leave it out: a kernel that
 *   refuses it (no CONFIG_SECCOMP_FILTER) makes bwrap "unavailable" with that reason, and the worker
 *   then refuses to start unless its owner passes `--sandbox none` (`resolveSandbox`). On a
 *   CPU the generator does not know (not x86_64/aarch64) bwrap runs without a filter and
 *   `resolveSandbox` warns.
 * - `/proc/1` is an empty read-only tmpfs: bwrap's own PID 1 (the sandbox's init, which reaps the
 *   task) is not under the filter, and for an ordinary-user worker it has the task's uid, so through
 *   /proc/1/mem the task could write into it and make any call unfiltered (ptrace and
 *   process_vm_writev, the other ways in, are refused by the filter).
 *
 * Limits: `prlimit --data` (RLIMIT_DATA, per process, counts heap and private mappings, so an
 * over-allocating Python gets MemoryError). NOT `--as`: address-space limits break `import torch`
 * below ~2 GB and break Node (STACK.md). cgroup v1 memory (limits the whole tree) is implemented too,
 * but `auto` does not pick it: it means writing into the host's cgroup hierarchy, which on these
 * machines belongs to the container manager, and a SIGKILLed worker would leave cgroups behind.
 * Processes: `prlimit --nproc` (RLIMIT_NPROC, threads included) when the task runs as an unprivileged
 * uid; the kernel counts every process of that uid on the host, so each slot runs as its own uid
 * (`taskUserForSlot`) and concurrent attempts do not share the budget. For an ordinary-user worker it
 * is not set: it would count all of the owner's own processes too.
 */
import { spawn, type ChildProcess, type StdioNull, type StdioPipe } from 'node:child_process';
import {
  accessSync,
  chownSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { describeFailure, execCommand } from './probe/execCommand.js';
import type { ExecFn, ExecResult } from './probe/types.js';
import { hostSeccompFilter, type SeccompFilter } from './seccomp.js';

/** `--sandbox`: see `resolveSandbox`. */
export type SandboxMode = 'auto' | 'bwrap' | 'none' | 'own-jobs';
export const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'bwrap', 'none', 'own-jobs'];

/** Where the attempt directory is mounted inside the sandbox; the task's working directory. */
export const TASK_DIR = '/task';
/** Where the worker's Python helpers (worker/python) are mounted inside the sandbox. */
export const HELPERS_DIR = '/opt/chatgpu/python';
/** The unprivileged host user a root worker runs tasks as ("nobody" on Debian). */
export const TASK_USER = { uid: 65534, gid: 65534 } as const;
/** RLIMIT_NPROC for tasks run as TASK_USER. It counts threads: PyTorch starts one per core per pool,
 *  DataLoader workers start their own; 4096 leaves room for that and still stops a fork bomb. */
export const DEFAULT_PIDS_LIMIT = 4096;
/** Size of the private /tmp and /dev/shm each (MiB): room for a DataLoader's shared memory and
 *  scratch files, not for filling the machine's RAM through a tmpfs. */
export const DEFAULT_TMP_SIZE_MIB = 2048;

/** The user tasks run as: TASK_USER when the worker is root, else the worker's own (null). */
export function defaultTaskUser(): { uid: number; gid: number } | null {
  return process.getuid?.() === 0 ? { ...TASK_USER } : null;
}

/**
 * Concurrent attempts of a root worker run as different uids, one per slot, so each has its own
 * RLIMIT_NPROC budget (the kernel counts processes per uid): a fork bomb in one attempt cannot
 * starve the others, and one attempt cannot signal or ptrace another's processes. Slot 0 is
 * TASK_USER ("nobody"); the others take uids from SLOT_UID_BASE, far above every range Debian and
 * systemd assign (no account owns them; the sandbox's own /etc/passwd names them "task").
 */
export const SLOT_UID_BASE = 2_000_000_000;

export function taskUserForSlot(slot: number): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  return slot === 0 ? { ...TASK_USER } : { uid: SLOT_UID_BASE + slot, gid: TASK_USER.gid };
}

export interface SandboxDetection {
  available: boolean;
  /** "bubblewrap 0.8.0" */
  version: string | null;
  /** Why bwrap cannot be used (not installed, user namespaces disabled, the kernel refused the
   *  seccomp filter, …); null when available. */
  reason: string | null;
  bwrap: string;
  /** The system call filter tasks get ("seccomp: 54 system calls refused (x86_64)"); null on an
   *  architecture without one (seccomp.ts), which `resolveSandbox` warns about. */
  seccomp: string | null;
}

/**
 * Is bwrap installed and able to build the sandbox here? Never throws. The trial runs build the very
 * command line the tasks get (same namespaces, binds, capability drop and uid switch; only the
 * prlimit prefixes are left out, they cannot fail), so a kernel or container that refuses one of them
 * is found at start-up rather than at the first task.
 */
export async function detectSandbox(
  opts: {
    exec?: ExecFn;
    /** Runs a trial command the way the runner runs a task (`execSandboxed`: the filter on fd 3).
     *  Tests pass a fake; `exec` never runs a trial, it cannot deliver the filter. */
    runSandboxed?: (cmd: SandboxedCommand, timeoutMs: number) => Promise<ExecResult>;
    timeoutMs?: number;
    bwrap?: string;
    runAs?: { uid: number; gid: number } | null;
  } = {},
): Promise<SandboxDetection> {
  const exec = opts.exec ?? execCommand;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const bwrap = opts.bwrap ?? 'bwrap';
  const runAs = opts.runAs === undefined ? defaultTaskUser() : opts.runAs;
  const seccomp = hostSeccompFilter()?.description ?? null;
  const no = (version: string | null, reason: string): SandboxDetection => ({ available: false, version, reason, bwrap, seccomp });
  // Through the runner's own delivery, always: a trial started like any other command has no fd 3,
  // bwrap says "Can't read seccomp data: Bad file descriptor", and the sandbox was reported missing
  // while every task ran in it.
  const runTrial = (c: SandboxedCommand) => (opts.runSandboxed ?? execSandboxed)(c, timeoutMs);

  const v = await exec(bwrap, ['--version'], { timeoutMs });
  if (v.error === 'not found') return no(null, bwrap === 'bwrap' ? 'bwrap is not installed' : `${bwrap} not found`);
  if (v.error || v.code !== 0) return no(null, describeFailure('bwrap --version', v));
  const version = v.stdout.trim().split('\n')[0] || null;

  // The basic trial tells "bwrap cannot make a mount namespace at all" apart from a missing feature.
  const basic = await exec(
    bwrap,
    [
      '--ro-bind',
      '/usr',
      '/usr',
      '--symlink',
      'usr/bin',
      '/bin',
      '--symlink',
      'usr/lib',
      '/lib',
      '--symlink',
      'usr/lib64',
      '/lib64',
      '--',
      '/usr/bin/true',
    ],
    { timeoutMs, env: { PATH: '/usr/bin:/bin' } },
  );
  if (basic.error || basic.code !== 0) return no(version, describeFailure('bwrap trial run', basic));

  const dir = mkdtempSync(join(tmpdir(), 'chatgpu-sandbox-trial-'));
  try {
    const work = join(dir, 'task');
    mkdirSync(work);
    const identity = writeIdentityFiles(join(dir, 'etc'), runAs ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 });
    if (runAs) chownSync(work, runAs.uid, runAs.gid);
    const trialSpec: SandboxSpec = {
      sandbox: 'bwrap',
      // The task's uid must be able to write its directory and the private /tmp.
      command: ['/bin/sh', '-c', 'echo ok > ok && echo ok > /tmp/ok'],
      workDir: work,
      env: { PATH: '/usr/bin:/bin' },
      runAs,
      identityFiles: identity,
      bwrap,
    };
    const trial = buildSandboxedCommand(trialSpec);
    const full = await runTrial(trial);
    if (full.error || full.code !== 0) {
      const what = `bwrap trial run with namespaces${runAs ? `, capability drop and uid ${runAs.uid}` : ''}`;
      // Without the filter too? Then the sandbox itself fails; else the kernel refused the filter
      // (no CONFIG_SECCOMP_FILTER): the sandbox is not offered without it (no way to turn it off).
      if (trial.seccomp) {
        const plain = await runTrial(buildSandboxedCommand({ ...trialSpec, seccomp: null }));
        if (!plain.error && plain.code === 0)
          return no(
            version,
            describeFailure(`${what}: the kernel refused the sandbox's seccomp filter (the same run without it works)`, full),
          );
      }
      return no(version, describeFailure(what, full));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { available: true, version, reason: null, bwrap, seccomp };
}

export type SandboxChoice =
  | {
      ok: true;
      sandbox: 'bwrap' | 'none';
      /** No sandbox, so only the worker owner's own tasks are claimed (`--sandbox own-jobs`): the
       *  capability `ownJobsOnly` the claim reads. */
      ownJobsOnly: boolean;
      warning: string | null;
    }
  | { ok: false; error: string };

/** What to install for a sandbox on this platform (the sentence's second half). */
function installHint(platform: NodeJS.Platform): string {
  return platform === 'linux'
    ? 'install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`)'
    : `use a Linux machine with bubblewrap (there is no sandbox for ${platform === 'darwin' ? 'macOS' : platform})`;
}

/**
 * The one decision about isolation, made at start-up from `detectSandbox`; the worker advertises
 * exactly this (`sandbox`, `ownJobsOnly`) and its runs use exactly this.
 * - `auto` (default) and `bwrap`: bwrap, or refuse to start — a contributor never runs another
 *   user's task without isolation unless the owner says so.
 * - `none`: no sandbox, chosen explicitly: tasks of anyone run as plain processes (warned, shown
 *   on the Workers page, in `status` and in each attempt's first log line).
 * - `own-jobs`: bwrap when it works; otherwise no sandbox, and the worker takes only its owner's
 *   own tasks (`npm start`'s local worker, whose owner is the person at the machine).
 */
export function resolveSandbox(
  mode: SandboxMode,
  detection: SandboxDetection,
  platform: NodeJS.Platform = process.platform,
): SandboxChoice {
  if (mode === 'none') {
    return {
      ok: true,
      sandbox: 'none',
      ownJobsOnly: false,
      warning:
        "WARNING: --sandbox none: tasks of other users run as plain processes with this user's full access to files and network (no isolation; shown as such on the Workers page).",
    };
  }
  if (detection.available) {
    return {
      ok: true,
      sandbox: 'bwrap',
      ownJobsOnly: false,
      warning: detection.seccomp
        ? null
        : `WARNING: no system call filter for this architecture (${process.arch}; built for x86_64 and aarch64 only): ` +
          "tasks run in bubblewrap's namespaces but can reach every system call of the kernel (namespaces, bpf, io_uring, keyrings, ptrace).",
    };
  }
  const why = platform === 'linux' ? detection.reason : `no sandbox on ${platform === 'darwin' ? 'macOS' : platform}`;
  if (mode === 'own-jobs') {
    return {
      ok: true,
      sandbox: 'none',
      ownJobsOnly: true,
      warning: `No sandbox (${why}): this worker runs only its owner's own jobs, as plain processes with this user's access; to isolate them and take other users' jobs, ${installHint(platform)}.`,
    };
  }
  if (mode === 'bwrap') return { ok: false, error: `--sandbox bwrap requested but unavailable: ${why}.` };
  return {
    ok: false,
    error: `This worker will not run other people's tasks without a sandbox (${why}): ${installHint(platform)}, or start it with --sandbox none to run them without isolation at your own risk.`,
  };
}

/** The first log line of an attempt that runs without a sandbox (caps: the worker's, see `resolveSandbox`). */
export function noSandboxNotice(caps: { ownJobsOnly?: boolean }): string {
  return caps.ownJobsOnly
    ? "NO SANDBOX: this worker has none, so it runs only its owner's own jobs, as plain processes with its user's access to files and network (install bubblewrap to isolate them)."
    : "NO SANDBOX (--sandbox none, its owner's choice): this task runs as a plain process with the worker's user's access to files and network.";
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

/**
 * The groups the task's uid needs to open the given device nodes: ROCm's /dev/kfd and /dev/dri/renderD*
 * are usually 0660 for group render or video, NVIDIA's nodes 0666. Never group 0, and only for nodes
 * the world cannot already open.
 */
export function deviceGroups(devices: string[]): number[] {
  const gids = new Set<number>();
  const visit = (p: string, depth: number) => {
    let st;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      if (depth < 2) for (const n of readdirSync(p)) visit(join(p, n), depth + 1);
      return;
    }
    if ((st.mode & 0o006) !== 0o006 && (st.mode & 0o060) !== 0 && st.gid !== 0) gids.add(st.gid);
  };
  for (const d of devices) visit(d, 0);
  return [...gids].sort((a, b) => a - b);
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
  /** Did the kernel kill something for this limit? Only a cgroup can tell; read before `cleanup`. */
  oomKilled?: () => boolean;
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
          oomKilled: () => {
            try {
              // "oom_kill N" (kernel ≥ 4.13) counts the OOM kills in this cgroup.
              const m = /^oom_kill (\d+)$/m.exec(readFileSync(join(dir, 'memory.oom_control'), 'utf8'));
              return Number(m?.[1] ?? 0) > 0;
            } catch {
              return false;
            }
          },
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
// What the task sees

/**
 * /etc files a runtime needs: the dynamic loader's cache, Debian's alternatives (python3, libblas…),
 * certificates, the time zone, NSS configuration (so `pwd` reads our /etc/passwd) and matplotlib's
 * system config. Everything else in /etc (shadow, ssh host keys, the owner's config) stays out.
 */
const RUNTIME_ETC = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/matplotlibrc',
];
/** Name resolution, only for tasks allowed the network. */
const NETWORK_ETC = ['/etc/resolv.conf', '/etc/hosts', '/etc/host.conf', '/etc/gai.conf'];

/**
 * Writes the sandbox's /etc/passwd and /etc/group (one user, one group: the task's) into `dir`.
 * The home directory named there is the one the runner gives the task.
 */
export function writeIdentityFiles(dir: string, user: { uid: number; gid: number }, home = TASK_DIR): { passwd: string; group: string } {
  mkdirSync(dir, { recursive: true });
  const passwd = join(dir, 'passwd');
  const group = join(dir, 'group');
  writeFileSync(passwd, `task:x:${user.uid}:${user.gid}:ChatGPU task:${home}:/bin/sh\n`);
  writeFileSync(group, `task:x:${user.gid}:\n`);
  return { passwd, group };
}

/**
 * Host directories to bind read-only so `python` works inside: the prefix of the interpreter (and of
 * the one a venv is made from) when it lives outside /usr, e.g. a pyenv version or a conda env.
 * A prefix that would expose more than an interpreter — `/`, a home directory or any directory
 * holding one of `protect` (the worker's data folder, the owner's home) — is left out and reported.
 */
export function interpreterBinds(python: string | null, protect: string[] = []): { binds: string[]; refused: string[] } {
  const binds: string[] = [];
  const refused: string[] = [];
  if (!python || !isAbsolute(python)) return { binds, refused };
  const prefixes = new Set<string>();
  const addPrefixOf = (exe: string) => {
    const bin = dirname(exe);
    if (basename(bin) === 'bin') prefixes.add(dirname(bin));
  };
  addPrefixOf(python);
  try {
    addPrefixOf(realpathSync(python));
  } catch {
    /* a dangling interpreter: the run will say so */
  }
  for (const p of [...prefixes]) {
    // A venv's pyvenv.cfg names the interpreter it was made from ("home = /opt/py/bin").
    try {
      const home = /^home\s*=\s*(.+)$/m.exec(readFileSync(join(p, 'pyvenv.cfg'), 'utf8'))?.[1]?.trim();
      if (home && isAbsolute(home)) prefixes.add(dirname(home));
    } catch {
      /* not a venv */
    }
  }
  const within = (child: string, parent: string) => {
    const r = relative(parent, child);
    return r === '' || (!r.startsWith('..') && !isAbsolute(r));
  };
  for (const p of prefixes) {
    if (within(p, '/usr')) continue; // already bound
    if (p === '/' || protect.some((x) => within(x, p)) || /^\/(home|Users)\/[^/]+$/.test(p) || p === '/root') refused.push(p);
    else if (within(p, TASK_DIR) || within(p, HELPERS_DIR)) refused.push(p);
    else binds.push(p);
  }
  return { binds: binds.sort(), refused: refused.sort() };
}

/** The task's view of its directory and of the helpers: fixed paths in the sandbox, host paths without. */
export function sandboxPaths(sandbox: 'bwrap' | 'none', workDir: string, helpersDir: string): { workDir: string; helpersDir: string } {
  return sandbox === 'bwrap' ? { workDir: TASK_DIR, helpersDir: HELPERS_DIR } : { workDir, helpersDir };
}

// ---------------------------------------------------------------------------------------------
// The command line

export interface SandboxSpec {
  sandbox: 'bwrap' | 'none';
  /** argv of the task, e.g. ['python', 'train.py'] */
  command: string[];
  /** the attempt directory (host path): the only writable place besides the private /tmp and /dev/shm */
  workDir: string;
  /** The task's whole environment, built by the caller from scratch (in-sandbox paths; see `sandboxPaths`). */
  env: Record<string, string>;
  /** host directory of the worker's Python helpers, bound read-only at HELPERS_DIR */
  helpersDir?: string | null;
  /** more host directories bound read-only at the same path (see `interpreterBinds`) */
  readOnly?: string[];
  /** host directories bound writable at the same path: only the environment a setup phase builds */
  writable?: string[];
  allowNetwork?: boolean;
  /** device nodes to expose, e.g. gpuDeviceNodes() for accelerator tasks */
  devices?: string[];
  memory?: MemoryLimitPlan | null;
  /** RLIMIT_NPROC; applied only with `runAs` (see the file comment) */
  pidsLimit?: number | null;
  /** Size of each of the private /tmp and /dev/shm (tmpfs: memory the per-process limit does not
   *  count); default DEFAULT_TMP_SIZE_MIB, null: unbounded. */
  tmpSizeMiB?: number | null;
  /** The unprivileged host user to run the task as (the worker is root); null: the worker's own uid.
   *  `groups`: its only supplementary groups (see `deviceGroups`); none when absent. */
  runAs?: { uid: number; gid: number; groups?: number[] } | null;
  /** from `writeIdentityFiles`: bound at /etc/passwd and /etc/group */
  identityFiles?: { passwd: string; group: string } | null;
  bwrap?: string;
  /** The system call filter (seccomp.ts). Default: this machine's (`hostSeccompFilter`). There is no
   *  worker option to leave it out: null only where the detection trial and tests compare a run
   *  without it. */
  seccomp?: SeccompFilter | null;
}

export interface AppliedSandbox {
  sandbox: 'bwrap' | 'none';
  network: 'isolated' | 'host';
  filesystem: 'runtime, helpers and attempt dir only' | 'host';
  memory: string;
  /** "≤ 4096 processes (uid 65534)" | "no limit (…)" */
  pids: string;
  /** "uid 65534" | "worker's uid 1000" */
  user: string;
  /** "seccomp: 54 system calls refused (x86_64)" | "no system call filter (…)" */
  syscalls: string;
}

export interface SandboxedCommand {
  file: string;
  args: string[];
  /** spawn with exactly this environment (bwrap gets only PATH; the task's env travels as --setenv) */
  env: Record<string, string>;
  /** spawn with this working directory (host path) */
  cwd: string;
  /** The compiled filter bwrap reads from fd 3 (`--seccomp 3`); spawn with `spawnSandboxed`, which
   *  passes it through a pipe. Null: no filter (no sandbox, or an architecture without one). */
  seccomp: Buffer | null;
  applied: AppliedSandbox;
}

/** The descriptor bwrap reads the seccomp program from: the first one after stdin, stdout and stderr. */
export const SECCOMP_FD = 3;

/**
 * Builds the argv; start it with `spawnSandboxed(result, …)` (it gives bwrap the filter on fd 3), or
 * spawn `file args` with `{ cwd, env }` and the filter on fd 3 yourself.
 */
export function buildSandboxedCommand(spec: SandboxSpec): SandboxedCommand {
  if (spec.command.length === 0) throw new Error('empty command');
  const memory = spec.memory ?? null;
  // Without bwrap there is no uid switch, and RLIMIT_NPROC on the worker's uid would count its own processes.
  const runAs = spec.sandbox === 'bwrap' ? (spec.runAs ?? null) : null;
  const pidsLimit = runAs && spec.pidsLimit ? Math.floor(spec.pidsLimit) : null;
  const prefix = [...(memory?.prefix ?? []), ...(pidsLimit ? ['prlimit', `--nproc=${pidsLimit}`, '--'] : [])];
  const ownUid = process.getuid?.() ?? -1;
  const applied = {
    memory: memory?.description ?? 'no memory limit',
    pids: pidsLimit
      ? `≤ ${pidsLimit} processes (uid ${runAs!.uid})`
      : runAs
        ? 'no process limit'
        : "no process limit (RLIMIT_NPROC would count the owner's own processes)",
    user: runAs ? `uid ${runAs.uid}` : `worker's uid ${ownUid}`,
  };
  if (spec.sandbox === 'none') {
    const argv = [...prefix, ...spec.command];
    return {
      file: argv[0]!,
      args: argv.slice(1),
      env: { ...spec.env },
      cwd: spec.workDir,
      seccomp: null,
      applied: {
        sandbox: 'none',
        network: 'host',
        filesystem: 'host',
        ...applied,
        pids: 'no process limit',
        syscalls: 'no system call filter (no sandbox)',
      },
    };
  }
  const bw: string[] = [
    '--ro-bind',
    '/usr',
    '/usr',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/sbin',
    '/sbin',
  ];
  // bwrap creates the missing parents of a bind's destination with mode 0700, which the task's
  // uid could not enter (/etc, /opt, a pyenv prefix's /root/.pyenv/versions): create them 0755 first.
  // tmpfs is memory that RLIMIT_DATA does not count: each private /tmp and /dev/shm is bounded.
  const tmpMiB = spec.tmpSizeMiB === undefined ? DEFAULT_TMP_SIZE_MIB : spec.tmpSizeMiB;
  const tmpSize = tmpMiB ? ['--size', String(Math.floor(tmpMiB) * 1024 * 1024)] : [];
  const made = new Set<string>(['/']);
  const bind = (flag: string, src: string, dest: string) => {
    const parents: string[] = [];
    for (let d = dirname(dest); !made.has(d); d = dirname(d)) parents.unshift(d);
    for (const d of parents) {
      bw.push('--perms', '0755', '--dir', d);
      made.add(d);
    }
    bw.push(flag, src, dest);
  };
  for (const f of [...RUNTIME_ETC, ...(spec.allowNetwork ? NETWORK_ETC : [])]) bind('--ro-bind-try', f, f);
  if (spec.identityFiles) {
    bind('--ro-bind', spec.identityFiles.passwd, '/etc/passwd');
    bind('--ro-bind', spec.identityFiles.group, '/etc/group');
  }
  bw.push(
    '--dev',
    '/dev',
    ...tmpSize,
    '--perms',
    '1777',
    '--tmpfs',
    '/dev/shm',
    '--proc',
    '/proc',
    // bwrap's own PID 1 (the sandbox's init) runs without the seccomp filter and, for an ordinary-user
    // worker, as the task's uid: its /proc entry (mem, fd, …) would let the task write into an
    // unfiltered process. Hidden under an empty read-only tmpfs (ptrace is refused by the filter).
    '--perms',
    '0555',
    '--size',
    '4096',
    '--tmpfs',
    '/proc/1',
    '--remount-ro',
    '/proc/1',
    // before the binds below, so an interpreter kept under /tmp is bound on top of the private /tmp
    ...tmpSize,
    '--perms',
    '1777',
    '--tmpfs',
    '/tmp',
  );
  made.add('/dev').add('/tmp').add('/proc');
  for (const p of spec.readOnly ?? []) bind('--ro-bind', p, p);
  for (const p of spec.writable ?? []) bind('--bind', p, p);
  if (spec.helpersDir) bind('--ro-bind', spec.helpersDir, HELPERS_DIR);
  bind('--bind', spec.workDir, TASK_DIR);
  bw.push('--chdir', TASK_DIR);
  for (const d of spec.devices ?? []) bind('--dev-bind', d, d);
  if ((spec.devices ?? []).length) bind('--ro-bind-try', '/sys', '/sys');
  if (runAs) {
    // No user namespace: see the file comment. Each namespace but the user one, by name.
    bw.push('--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try');
    if (!spec.allowNetwork) bw.push('--unshare-net');
  } else {
    bw.push('--unshare-all');
    if (spec.allowNetwork) bw.push('--share-net');
  }
  bw.push('--hostname', 'chatgpu-task', '--die-with-parent', '--new-session', '--cap-drop', 'ALL');
  // Loaded last, just before bwrap execs the command (setpriv, then the task, inherit it).
  const filter = spec.seccomp === undefined ? hostSeccompFilter() : spec.seccomp;
  if (filter) bw.push('--seccomp', String(SECCOMP_FD));
  // setpriv needs these three for one step: change uid/gid and empty the bounding set.
  if (runAs) bw.push('--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP');
  bw.push('--clearenv');
  for (const [k, v] of Object.entries(spec.env)) bw.push('--setenv', k, v);
  bw.push('--');
  if (runAs) {
    bw.push(
      '/usr/bin/setpriv',
      `--reuid=${runAs.uid}`,
      `--regid=${runAs.gid}`,
      runAs.groups?.length ? `--groups=${runAs.groups.join(',')}` : '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--',
    );
  }
  bw.push(...spec.command);
  const argv = [...prefix, spec.bwrap ?? 'bwrap', ...bw];
  return {
    file: argv[0]!,
    args: argv.slice(1),
    // bwrap's own process is PID 1 inside: its environ is readable there, so it gets nothing secret.
    env: { PATH: '/usr/bin:/bin' },
    cwd: spec.workDir,
    seccomp: filter?.program ?? null,
    applied: {
      sandbox: 'bwrap',
      network: spec.allowNetwork ? 'host' : 'isolated',
      filesystem: 'runtime, helpers and attempt dir only',
      ...applied,
      syscalls: filter?.description ?? `no system call filter (${spec.seccomp === null ? 'left out' : `none for ${process.arch}`})`,
    },
  };
}

/**
 * Starts a command from `buildSandboxedCommand` with `{ cwd, env }` and the given stdin/stdout/stderr;
 * when it has a filter, fd 3 is a pipe that carries it to bwrap, which reads it to the end and closes
 * it before the task starts (the task never sees fd 3). The program is a few hundred bytes, less than
 * a pipe holds, so the write never waits for bwrap; a bwrap that exits before reading it (bad
 * arguments) makes the write fail with EPIPE, which is ignored: its exit status says what went wrong.
 */
export function spawnSandboxed(
  cmd: SandboxedCommand,
  opts: { stdio?: [StdioNull | StdioPipe, StdioNull | StdioPipe, StdioNull | StdioPipe]; detached?: boolean } = {},
): ChildProcess {
  const stdio = opts.stdio ?? ['ignore', 'pipe', 'pipe'];
  const child = spawn(cmd.file, cmd.args, {
    cwd: cmd.cwd,
    env: cmd.env,
    stdio: cmd.seccomp ? [...stdio, 'pipe'] : stdio,
    ...(opts.detached ? { detached: true } : {}),
  });
  const pipe = cmd.seccomp ? child.stdio[SECCOMP_FD] : null;
  if (pipe && 'end' in pipe) {
    pipe.on('error', () => {});
    pipe.end(cmd.seccomp);
  }
  return child;
}

/** Runs a sandboxed command to its end and collects its output (the detection trial, tests). */
export function execSandboxed(cmd: SandboxedCommand, timeoutMs: number): Promise<ExecResult> {
  return new Promise<ExecResult>((resolve) => {
    let child: ChildProcess;
    try {
      child = spawnSandboxed(cmd);
    } catch (err) {
      resolve({ code: null, stdout: '', stderr: '', error: (err as Error).message });
      return;
    }
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr, error: err.code === 'ENOENT' ? 'not found' : err.message });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) resolve({ code: null, stdout, stderr, error: `timeout after ${timeoutMs} ms` });
      else if (code === null) resolve({ code: null, stdout, stderr, error: `killed by ${signal}` });
      else resolve({ code, stdout, stderr, error: null });
    });
  });
}
