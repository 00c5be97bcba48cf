import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecFn, ExecResult } from './probe/types.js';
import {
  buildSandboxedCommand,
  detectMemoryLimit,
  detectSandbox,
  defaultTaskUser,
  execSandboxed,
  deviceGroups,
  gpuDeviceNodes,
  HELPERS_DIR,
  interpreterBinds,
  ownCgroupV1Memory,
  prepareMemoryLimit,
  resolveSandbox,
  type MemoryLimitSupport,
  TASK_DIR,
  writeIdentityFiles,
  type SandboxSpec,
  spawnSandboxed,
  noSandboxNotice,
  type SandboxedCommand,
} from './sandbox.js';
import { execCommand } from './probe/execCommand.js';
import { hostSeccompFilter } from './seccomp.js';

const ok: ExecResult = { code: 0, stdout: 'bubblewrap 0.8.0\n', stderr: '', error: null };

/**
 * A fake machine: `exec` answers every command; the trials reach it through `runSandboxed`, which
 * (like the real execSandboxed) gets the compiled filter whenever the command line asks for one.
 */
function fakeMachine(exec: ExecFn) {
  const trials: SandboxedCommand[] = [];
  const runSandboxed = async (c: SandboxedCommand, timeoutMs: number) => {
    trials.push(c);
    return exec(c.file, c.args, { timeoutMs, env: c.env });
  };
  return { exec, runSandboxed, trials };
}

describe('detectSandbox / resolveSandbox (fake exec)', () => {
  it('missing bwrap: auto and bwrap refuse to start with one sentence; none and own-jobs run without, and say how', async () => {
    const d = await detectSandbox(fakeMachine(async () => ({ code: null, stdout: '', stderr: '', error: 'not found' })));
    expect(d).toMatchObject({ available: false, version: null, reason: 'bwrap is not installed' });
    expect(resolveSandbox('auto', d, 'linux')).toEqual({
      ok: false,
      error:
        "This worker will not run other people's tasks without a sandbox (bwrap is not installed): install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`), or start it with --sandbox none to run them without isolation at your own risk.",
    });
    expect(resolveSandbox('bwrap', d, 'linux')).toEqual({
      ok: false,
      error: '--sandbox bwrap requested but unavailable: bwrap is not installed.',
    });
    expect(resolveSandbox('none', d, 'linux')).toMatchObject({
      ok: true,
      sandbox: 'none',
      ownJobsOnly: false,
      warning: expect.stringMatching(/^WARNING: --sandbox none: tasks of other users run as plain processes/),
    });
    expect(resolveSandbox('own-jobs', d, 'linux')).toMatchObject({
      ok: true,
      sandbox: 'none',
      ownJobsOnly: true,
      warning: expect.stringMatching(
        /^No sandbox \(bwrap is not installed\): this worker runs only its owner's own jobs.*install bubblewrap/,
      ),
    });
  });

  it('a bwrap at a path that does not exist is named in the reason', async () => {
    const d = await detectSandbox({ bwrap: '/nonexistent/bwrap' });
    expect(d).toMatchObject({ available: false, reason: '/nonexistent/bwrap not found' });
    expect(resolveSandbox('auto', d, 'linux')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/\(\/nonexistent\/bwrap not found\): install bubblewrap .* --sandbox none/),
    });
  });

  it('bwrap that cannot create namespaces is unavailable, with its own message', async () => {
    const exec: ExecFn = async (_f, args) =>
      args[0] === '--version' ? ok : { code: 1, stdout: '', stderr: 'bwrap: No permissions to creating new namespace\n', error: null };
    const d = await detectSandbox(fakeMachine(exec));
    expect(d).toMatchObject({
      available: false,
      version: 'bubblewrap 0.8.0',
      reason: 'bwrap trial run: exit 1: bwrap: No permissions to creating new namespace',
    });
  });

  it("a bwrap that cannot build the tasks' sandbox (namespaces, capability drop, uid switch) is found at start-up", async () => {
    const m = fakeMachine(async (_f, args) => {
      if (args[0] === '--version' || !args.includes('--clearenv')) return ok;
      return { code: 1, stdout: '', stderr: 'bwrap: Creating new namespace failed: Operation not permitted\n', error: null };
    });
    const d = await detectSandbox({ ...m, runAs: { uid: 65534, gid: 65534 } });
    expect(d.reason).toBe(
      'bwrap trial run with namespaces, capability drop and uid 65534: exit 1: bwrap: Creating new namespace failed: Operation not permitted',
    );
    // the trial is the tasks' own command line: the uid switch and the private /tmp included
    expect(m.trials.at(-1)!.args).toEqual(
      expect.arrayContaining(['/usr/bin/setpriv', '--unshare-pid', '--unshare-net', '--tmpfs', TASK_DIR]),
    );
  });

  it('a working bwrap is used by auto; the trial gets the filter the way the runner gives it (fd 3)', async () => {
    const m = fakeMachine(async () => ok);
    const d = await detectSandbox(m);
    expect(d.seccomp).toMatch(/^seccomp: \d+ system calls refused \((x86_64|aarch64)\)$/);
    expect(resolveSandbox('auto', d)).toEqual({ ok: true, sandbox: 'bwrap', ownJobsOnly: false, warning: null });
    expect(resolveSandbox('own-jobs', d)).toEqual({ ok: true, sandbox: 'bwrap', ownJobsOnly: false, warning: null });
    expect(m.trials).toHaveLength(1);
    expect(m.trials[0]!.args).toContain('--seccomp');
    expect(m.trials[0]!.seccomp).toEqual(hostSeccompFilter()!.program);
  });

  it('a kernel that refuses the seccomp filter: bwrap is not offered, and the reason says it was the filter', async () => {
    const m = fakeMachine(async (_f, args) => {
      if (args.includes('--seccomp'))
        return { code: 1, stdout: '', stderr: 'bwrap: prctl(PR_SET_SECCOMP): Invalid argument\n', error: null };
      return ok;
    });
    const d = await detectSandbox({ ...m, runAs: null });
    expect(d).toMatchObject({ available: false });
    expect(d.reason).toBe(
      "bwrap trial run with namespaces: the kernel refused the sandbox's seccomp filter (the same run without it works): exit 1: bwrap: prctl(PR_SET_SECCOMP): Invalid argument",
    );
    // the second trial is the same command line without the filter
    expect(m.trials.at(-1)!.args).not.toContain('--seccomp');
    expect(m.trials.at(-1)!.seccomp).toBeNull();
    expect(m.trials.at(-1)!.args).toContain('--clearenv');
    expect(resolveSandbox('bwrap', d)).toMatchObject({ ok: false, error: expect.stringMatching(/refused the sandbox's seccomp filter/) });
  });

  it('an architecture without a filter: bwrap is used, with a warning that no system call is filtered', () => {
    const d = { available: true, version: 'bubblewrap 0.8.0', reason: null, bwrap: 'bwrap', seccomp: null };
    expect(resolveSandbox('auto', d)).toMatchObject({
      ok: true,
      sandbox: 'bwrap',
      warning: expect.stringMatching(/^WARNING: no system call filter for this architecture/),
    });
  });

  it('the first log line of an unsandboxed attempt says which kind of none it is', () => {
    expect(noSandboxNotice({})).toMatch(/^NO SANDBOX \(--sandbox none, its owner's choice\)/);
    expect(noSandboxNotice({ ownJobsOnly: true })).toMatch(/^NO SANDBOX: this worker has none, so it runs only its owner's own jobs/);
  });
});

describe('buildSandboxedCommand', () => {
  const spec: SandboxSpec = {
    sandbox: 'bwrap',
    command: ['python3', 'train.py'],
    workDir: '/data/attempt-1',
    env: { HOME: '/task/.chatgpu/home' },
  };
  const pairs = (args: string[], flag: string) => args.flatMap((a, i) => (a === flag ? [`${args[i + 1]} ${args[i + 2]}`] : []));

  it('binds only the runtime, the helpers and the attempt dir (at /task); never the host root', () => {
    const c = buildSandboxedCommand({ ...spec, helpersDir: '/srv/worker/python', readOnly: ['/opt/conda'], runAs: null });
    expect(c.file).toBe('bwrap');
    expect(pairs(c.args, '--ro-bind')).toEqual(['/usr /usr', '/opt/conda /opt/conda', `/srv/worker/python ${HELPERS_DIR}`]);
    expect(pairs(c.args, '--bind')).toEqual([`/data/attempt-1 ${TASK_DIR}`]);
    expect(c.args.join(' ')).not.toMatch(/--(ro-)?bind \/ \//);
    // the private /tmp comes before the binds, so an interpreter under /tmp is bound on top of it
    expect(c.args.indexOf('/tmp')).toBeLessThan(c.args.indexOf('/opt/conda'));
    expect(c.args).toEqual(expect.arrayContaining(['--unshare-all', '--die-with-parent', '--new-session', '--clearenv']));
    expect(c.args).not.toContain('--share-net');
    expect(c.args.slice(c.args.indexOf('--chdir'), c.args.indexOf('--chdir') + 2)).toEqual(['--chdir', TASK_DIR]);
    expect(c.args.slice(-3)).toEqual(['--', 'python3', 'train.py']);
    // the task's env travels as --setenv; bwrap itself gets only PATH
    expect(pairs(c.args, '--setenv')).toEqual(['HOME /task/.chatgpu/home']);
    expect(c.env).toEqual({ PATH: '/usr/bin:/bin' });
    expect(c.applied).toMatchObject({
      sandbox: 'bwrap',
      network: 'isolated',
      filesystem: 'runtime, helpers and attempt dir only',
      memory: 'no memory limit',
    });
  });

  it("loads the seccomp filter from fd 3, and hides bwrap's unfiltered PID 1 under a read-only empty /proc/1", () => {
    const c = buildSandboxedCommand({ ...spec, runAs: null });
    const filter = hostSeccompFilter()!;
    expect(c.seccomp).toEqual(filter.program);
    expect(c.args.slice(c.args.indexOf('--seccomp'), c.args.indexOf('--seccomp') + 2)).toEqual(['--seccomp', '3']);
    expect(c.args.indexOf('--seccomp')).toBeLessThan(c.args.indexOf('--'));
    expect(c.applied.syscalls).toBe(filter.description);
    const proc = c.args.indexOf('/proc');
    expect(c.args.slice(proc - 1, proc + 9)).toEqual([
      '--proc',
      '/proc',
      '--perms',
      '0555',
      '--size',
      '4096',
      '--tmpfs',
      '/proc/1',
      '--remount-ro',
      '/proc/1',
    ]);
    const without = buildSandboxedCommand({ ...spec, runAs: null, seccomp: null });
    expect(without.args).not.toContain('--seccomp');
    expect(without.seccomp).toBeNull();
    expect(without.applied.syscalls).toBe('no system call filter (left out)');
    expect(buildSandboxedCommand({ ...spec, sandbox: 'none' })).toMatchObject({
      seccomp: null,
      applied: { syscalls: 'no system call filter (no sandbox)' },
    });
  });

  it('as root: no user namespace, setpriv to uid 65534 with every capability set emptied, pids limit', () => {
    const c = buildSandboxedCommand({ ...spec, runAs: { uid: 65534, gid: 65534 }, pidsLimit: 100 });
    expect([c.file, ...c.args.slice(0, 3)]).toEqual(['prlimit', '--nproc=100', '--', 'bwrap']);
    expect(c.args).not.toContain('--unshare-all');
    expect(c.args).not.toContain('--unshare-user');
    expect(c.args).toEqual(expect.arrayContaining(['--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-net']));
    const dash = c.args.indexOf('/usr/bin/setpriv') - 1;
    expect(c.args.slice(dash)).toEqual([
      '--',
      '/usr/bin/setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--',
      'python3',
      'train.py',
    ]);
    expect(c.applied).toMatchObject({ pids: '≤ 100 processes (uid 65534)', user: 'uid 65534' });
  });

  it('network when allowed, GPU devices and /sys only with devices, memory prefix; plain process for none', () => {
    const memory = prepareMemoryLimit({
      limitMiB: 512,
      strategy: 'auto',
      support: { cgroupV1: null, prlimit: true, notes: [] },
      name: 'a1',
    });
    const c = buildSandboxedCommand({ ...spec, runAs: null, allowNetwork: true, devices: ['/dev/nvidia0'], memory });
    expect(c.args).toContain('--share-net');
    expect(c.args.join(' ')).toContain('--dev-bind /dev/nvidia0 /dev/nvidia0');
    expect(c.args.join(' ')).toContain('--ro-bind-try /sys /sys');
    expect(c.args.join(' ')).toContain('--ro-bind-try /etc/resolv.conf /etc/resolv.conf');
    expect([c.file, ...c.args.slice(0, 3)]).toEqual(['prlimit', `--data=${512 * 1024 * 1024}`, '--', 'bwrap']);
    expect(c.applied).toMatchObject({ network: 'host', memory: 'prlimit --data 512 MiB (per process)' });
    const isolated = buildSandboxedCommand({ ...spec, runAs: null });
    expect(isolated.args.join(' ')).not.toContain('/sys');
    expect(isolated.args.join(' ')).not.toContain('resolv.conf');
    const plain = buildSandboxedCommand({ ...spec, sandbox: 'none', runAs: { uid: 65534, gid: 65534 }, pidsLimit: 100 });
    expect([plain.file, ...plain.args]).toEqual(['python3', 'train.py']);
    expect(plain.env).toEqual(spec.env);
    expect(plain.cwd).toBe('/data/attempt-1');
    expect(plain.applied).toMatchObject({ sandbox: 'none', network: 'host', filesystem: 'host', pids: 'no process limit' });
  });

  it('interpreter prefixes outside /usr are bound; a venv brings its base; a home or the data dir never', () => {
    const root = mkdtempSync(join(tmpdir(), 'chatgpu-interp-'));
    const base = join(root, 'pyenv', 'versions', '3.11.7');
    mkdirSync(join(base, 'bin'), { recursive: true });
    writeFileSync(join(base, 'bin', 'python3.11'), '');
    const venv = join(root, 'venv');
    mkdirSync(join(venv, 'bin'), { recursive: true });
    symlinkSync(join(base, 'bin', 'python3.11'), join(venv, 'bin', 'python'));
    writeFileSync(join(venv, 'pyvenv.cfg'), `home = ${join(base, 'bin')}\ninclude-system-site-packages = true\n`);
    expect(interpreterBinds(join(venv, 'bin', 'python'))).toEqual({ binds: [base, venv].sort(), refused: [] });
    expect(interpreterBinds('/usr/bin/python3')).toEqual({ binds: [], refused: [] });
    expect(interpreterBinds('/home/alice/bin/python3')).toEqual({ binds: [], refused: ['/home/alice'] });
    expect(interpreterBinds(join(venv, 'bin', 'python'), [join(venv, 'data')])).toMatchObject({ refused: [venv] });
    expect(interpreterBinds(null)).toEqual({ binds: [], refused: [] });
    rmSync(root, { recursive: true });
  });

  it('device groups: the task keeps only the groups its GPU nodes need (never group 0, none for world-open nodes)', () => {
    const dev = mkdtempSync(join(tmpdir(), 'chatgpu-devgrp-'));
    const node = (name: string, mode: number, gid: number) => {
      writeFileSync(join(dev, name), '');
      chmodSync(join(dev, name), mode);
      chownSync(join(dev, name), 0, gid);
    };
    mkdirSync(join(dev, 'dri'));
    node('kfd', 0o660, 109);
    node('dri/renderD128', 0o660, 110);
    node('dri/card0', 0o660, 0);
    node('nvidia0', 0o666, 44);
    expect(deviceGroups([join(dev, 'kfd'), join(dev, 'dri'), join(dev, 'nvidia0'), '/nonexistent'])).toEqual([109, 110]);
    rmSync(dev, { recursive: true });
    const c = buildSandboxedCommand({ ...spec, runAs: { uid: 65534, gid: 65534, groups: [109, 110] } });
    expect(c.args).toContain('--groups=109,110');
    expect(c.args).not.toContain('--clear-groups');
  });

  it('gpuDeviceNodes lists only GPU nodes', () => {
    const dev = mkdtempSync(join(tmpdir(), 'chatgpu-dev-'));
    for (const n of ['nvidia0', 'nvidiactl', 'nvidia-uvm', 'kfd', 'null', 'sda']) writeFileSync(join(dev, n), '');
    mkdirSync(join(dev, 'dri'));
    expect(gpuDeviceNodes(dev).map((p) => p.slice(dev.length + 1))).toEqual(['dri', 'kfd', 'nvidia-uvm', 'nvidia0', 'nvidiactl']);
    rmSync(dev, { recursive: true });
    expect(gpuDeviceNodes('/nonexistent')).toEqual([]);
  });

  it("macOS has no sandbox: auto refuses, own-jobs runs only the owner's jobs", () => {
    const d = { available: false, version: null, reason: 'bwrap is not installed', bwrap: 'bwrap', seccomp: null };
    expect(resolveSandbox('auto', d, 'darwin')).toMatchObject({
      ok: false,
      error: expect.stringMatching(
        /without a sandbox \(no sandbox on macOS\): use a Linux machine with bubblewrap .*, or start it with --sandbox none/,
      ),
    });
    expect(resolveSandbox('own-jobs', d, 'darwin')).toMatchObject({ ok: true, sandbox: 'none', ownJobsOnly: true });
  });
});

describe('memory limits', () => {
  it('finds our own cgroup v1 memory directory from /proc/self/cgroup and mountinfo', () => {
    const cg = '9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n';
    const mi = '40 30 0:35 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n';
    expect(ownCgroupV1Memory(cg, mi)).toBe('/sys/fs/cgroup/memory/process_api/abc');
    // a container whose mount root is already its cgroup
    expect(ownCgroupV1Memory(cg, '40 30 0:35 /process_api/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n')).toBe(
      '/sys/fs/cgroup/memory',
    );
    expect(ownCgroupV1Memory('0::/user.slice\n', mi)).toBeNull();
  });

  it('cgroup v1 when asked: creates a child cgroup with the limit, joins it through a shell, cleans up', () => {
    // A stand-in directory: the test must not write into this machine's real cgroup tree.
    const fake = mkdtempSync(join(tmpdir(), 'chatgpu-cg-'));
    const support: MemoryLimitSupport = { cgroupV1: fake, prlimit: true, notes: [] };
    const plan = prepareMemoryLimit({ limitMiB: 256, strategy: 'cgroup-v1', support, name: 'att/1' });
    const dir = join(fake, 'chatgpu-att_1');
    expect(plan.kind).toBe('cgroup-v1');
    expect(readFileSync(join(dir, 'memory.limit_in_bytes'), 'utf8')).toBe(String(256 * 1024 * 1024));
    expect(plan.prefix.slice(0, 2)).toEqual(['sh', '-c']);
    expect(plan.prefix.at(-1)).toBe(join(dir, 'cgroup.procs'));
    // the wrapper writes its pid there and then execs the command
    const r = spawnSync(plan.prefix[0]!, [...plan.prefix.slice(1), 'sh', '-c', 'echo $$'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim()).toBe(r.stdout.trim());
    rmSync(join(dir, 'cgroup.procs'));
    rmSync(join(dir, 'memory.limit_in_bytes'));
    plan.cleanup();
    expect(existsSync(dir)).toBe(false);
    rmSync(fake, { recursive: true });
  });

  it('falls back and says so', () => {
    const none = { cgroupV1: null, prlimit: false, notes: ['prlimit: not found'] };
    expect(prepareMemoryLimit({ limitMiB: 256, strategy: 'cgroup-v1', support: { ...none, prlimit: true }, name: 'x' })).toMatchObject({
      kind: 'prlimit-data',
      description: 'prlimit --data 256 MiB (per process); cgroup v1 unavailable',
    });
    expect(prepareMemoryLimit({ limitMiB: 256, strategy: 'auto', support: none, name: 'x' })).toMatchObject({
      kind: 'none',
      prefix: [],
      description: 'no memory limit: prlimit: not found',
    });
    expect(prepareMemoryLimit({ limitMiB: null, strategy: 'auto', support: none, name: 'x' }).kind).toBe('none');
  });
});

// --- real runs: bwrap is installed on these machines (Debian package bubblewrap) ---

const detection = await detectSandbox();
const runAs = defaultTaskUser();

describe('detectSandbox on this machine', () => {
  it('the trial delivers the seccomp filter like the runner, whatever exec the probe passes (no "Can\'t read seccomp data")', async () => {
    // probeCapabilities used to pass its exec, which started the trial without fd 3: bwrap failed
    // with "Can't read seccomp data: Bad file descriptor" and the worker advertised no sandbox.
    const viaProbe = await detectSandbox({ exec: execCommand });
    expect(viaProbe).toMatchObject({ available: true, reason: null, seccomp: expect.stringMatching(/^seccomp: \d+ system calls refused/) });
    expect(detection).toEqual(viaProbe);
  });
});

describe('bwrap sandbox, real runs', () => {
  let root: string;
  let work: string;
  let outside: string;
  let identity: { passwd: string; group: string };
  let server: Server;
  let port: number;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatgpu-sbx-'));
    work = join(root, 'attempt');
    outside = join(root, 'outside');
    mkdirSync(work);
    mkdirSync(outside);
    if (runAs) chownSync(work, runAs.uid, runAs.gid);
    identity = writeIdentityFiles(join(root, 'etc'), runAs ?? { uid: process.getuid!(), gid: process.getgid!() });
    server = createServer((s) => s.end('hello\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(root, { recursive: true, force: true });
  });

  const spec = (script: string, opts: Partial<SandboxSpec> = {}): SandboxSpec => ({
    sandbox: 'bwrap',
    command: ['sh', '-c', script],
    workDir: work,
    env: { PATH: '/usr/bin:/bin' },
    runAs,
    identityFiles: identity,
    pidsLimit: 4096,
    ...opts,
  });

  /** Runs `sh -c script` sandboxed; async, because the test's TCP server must keep answering. */
  function run(script: string, opts: Partial<SandboxSpec> = {}) {
    const c = buildSandboxedCommand(spec(script, opts));
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const p = spawnSandboxed(c);
      let stdout = '';
      let stderr = '';
      p.stdout!.on('data', (d) => (stdout += d));
      p.stderr!.on('data', (d) => (stderr += d));
      p.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  const connect = (p: number) =>
    `/usr/bin/python3 -S -c "
import socket, sys
try:
    socket.create_connection(('127.0.0.1', ${p}), timeout=5).recv(10); sys.exit(0)
except OSError as e:
    print(type(e).__name__, e, file=sys.stderr); sys.exit(3)"`;

  it('is available here, and reports the bwrap version', () => {
    expect(detection.reason).toBeNull();
    expect(detection.available).toBe(true);
    expect(detection.version).toMatch(/^bubblewrap \d/);
  });

  it('can write inside its dir (at /task), not outside it, and has a private /tmp', async () => {
    const r = await run(
      `echo in > ok.txt && echo $PWD; echo out > "${outside}/x.txt" || echo DENIED; echo t > /tmp/chatgpu-private && echo TMPOK`,
    );
    expect(r.stdout).toContain(TASK_DIR);
    expect(r.stdout).toContain('DENIED');
    expect(r.stdout).toContain('TMPOK');
    expect(readFileSync(join(work, 'ok.txt'), 'utf8')).toBe('in\n');
    expect(existsSync(join(outside, 'x.txt'))).toBe(false);
    expect(existsSync('/tmp/chatgpu-private')).toBe(false);
  });

  it('cannot open a TCP connection to 127.0.0.1, unless the task allows network', async () => {
    const denied = await run(connect(port));
    expect(denied.code).toBe(3);
    expect(denied.stderr).toMatch(/ConnectionRefused|Network is unreachable/);
    const allowed = await run(connect(port), { allowNetwork: true });
    expect(allowed.stderr).toBe('');
    expect(allowed.code).toBe(0);
  });

  it('passes exactly the given environment', async () => {
    const r = await run('env', { env: { CHATGPU_TASK_ID: 'task-42', PATH: '/usr/bin:/bin' } });
    expect(
      r.stdout
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('PWD='))
        .sort(),
    ).toEqual(['CHATGPU_TASK_ID=task-42', 'PATH=/usr/bin:/bin']);
  });

  it("for an ordinary-user worker: bwrap makes its own user namespace; same view, no capabilities, the user's uid", async () => {
    // As root here, become an ordinary user (65534) first, as a contributor's worker would be.
    const user = runAs ?? { uid: process.getuid!(), gid: process.getgid!() };
    const dir = mkdtempSync(join(tmpdir(), 'chatgpu-sbx-user-'));
    chmodSync(dir, 0o755);
    const w = join(dir, 'attempt');
    mkdirSync(w);
    chownSync(w, user.uid, user.gid);
    try {
      const c = buildSandboxedCommand(
        spec('id -u; echo x > mine && echo WROTE; ls /; grep -E "^Cap(Prm|Eff|Bnd)" /proc/self/status', {
          workDir: w,
          runAs: null,
          identityFiles: writeIdentityFiles(join(dir, 'etc'), user),
        }),
      );
      expect(c.args).toContain('--unshare-all');
      expect(c.args).not.toContain('/usr/bin/setpriv');
      const asUser = runAs
        ? {
            ...c,
            file: '/usr/bin/setpriv',
            args: [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', c.file, ...c.args],
          }
        : c;
      const r = await execSandboxed(asUser, 30_000);
      expect(r.stderr).toBe('');
      expect(r.stdout.split('\n')).toEqual([
        String(user.uid),
        'WROTE',
        'bin',
        'dev',
        'etc',
        'lib',
        'lib64',
        'proc',
        'sbin',
        'task',
        'tmp',
        'usr',
        'CapPrm:\t0000000000000000',
        'CapEff:\t0000000000000000',
        'CapBnd:\t0000000000000000',
        '',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an interpreter outside /usr (a venv under /tmp, behind the private /tmp) is bound at its path and runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatgpu-sbx-venv-'));
    const venv = join(dir, 'venv');
    try {
      const made = spawnSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', '--system-site-packages', venv], { encoding: 'utf8' });
      expect(made.stderr).toBe('');
      const python = join(venv, 'bin', 'python');
      const binds = interpreterBinds(python);
      expect(binds).toEqual({ binds: [venv], refused: [] });
      const r = await run(`${python} -c "import sys, torch; print(sys.prefix, torch.ones(2).sum().item())"`, { readOnly: binds.binds });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe(`${venv} 2.0`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('killing bwrap kills every process of the task', async () => {
    const c = buildSandboxedCommand(spec('(setsid sh -c "while true; do echo x >> tick; sleep 0.05; done" &) ; sleep 30'));
    // a background loop in its own session would survive a plain process-group kill
    const p = spawnSandboxed(c, { stdio: ['ignore', 'ignore', 'ignore'] });
    const tick = join(work, 'tick');
    for (let i = 0; i < 100 && !existsSync(tick); i++) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(tick)).toBe(true);
    p.kill('SIGKILL');
    await new Promise((r) => p.on('close', r));
    await new Promise((r) => setTimeout(r, 200));
    const size = statSync(tick).size;
    await new Promise((r) => setTimeout(r, 400));
    expect(statSync(tick).size).toBe(size);
  });

  it('prlimit --data: an allocation over the limit fails inside the sandbox, under it succeeds', async () => {
    const support = await detectMemoryLimit();
    expect(support.prlimit).toBe(true);
    const plan = prepareMemoryLimit({ limitMiB: 200, strategy: 'auto', support, name: 'mem' });
    expect(plan.kind).toBe('prlimit-data');
    const alloc = (mib: number) => `/usr/bin/python3 -S -c "b = bytearray(${mib} * 1024 * 1024); print('ALLOC', len(b))"`;
    const over = await run(alloc(400), { memory: plan });
    expect(over.code).not.toBe(0);
    expect(over.stderr).toContain('MemoryError');
    const under = await run(alloc(50), { memory: plan });
    expect(under.stdout).toContain('ALLOC');
  });
});
