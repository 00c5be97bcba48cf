import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecFn, ExecResult } from './probe/types.js';
import {
  buildSandboxedCommand,
  detectMemoryLimit,
  detectSandbox,
  gpuDeviceNodes,
  ownCgroupV1Memory,
  prepareMemoryLimit,
  resolveSandbox,
  type MemoryLimitSupport,
  type SandboxSpec,
} from './sandbox.js';

const ok: ExecResult = { code: 0, stdout: 'bubblewrap 0.8.0\n', stderr: '', error: null };

describe('detectSandbox / resolveSandbox (fake exec)', () => {
  it('missing bwrap: auto falls back with a warning, bwrap mode refuses', async () => {
    const exec: ExecFn = async () => ({ code: null, stdout: '', stderr: '', error: 'not found' });
    const d = await detectSandbox({ exec });
    expect(d).toMatchObject({ available: false, version: null, reason: expect.stringMatching(/not installed/) });
    const auto = resolveSandbox('auto', d);
    expect(auto).toMatchObject({ ok: true, sandbox: 'none', warning: expect.stringMatching(/^WARNING: no sandbox \(bwrap is not installed/) });
    expect(resolveSandbox('bwrap', d)).toMatchObject({ ok: false, error: expect.stringMatching(/--sandbox bwrap requested but unavailable/) });
    expect(resolveSandbox('none', d)).toMatchObject({ ok: true, sandbox: 'none' });
  });

  it('bwrap that cannot create namespaces is unavailable, with its own message', async () => {
    const exec: ExecFn = async (_f, args) =>
      args[0] === '--version' ? ok : { code: 1, stdout: '', stderr: 'bwrap: No permissions to creating new namespace\n', error: null };
    const d = await detectSandbox({ exec });
    expect(d).toMatchObject({ available: false, version: 'bubblewrap 0.8.0', reason: 'bwrap trial run: exit 1: bwrap: No permissions to creating new namespace' });
  });

  it('a working bwrap is used by auto', async () => {
    const exec: ExecFn = async () => ok;
    const d = await detectSandbox({ exec });
    expect(resolveSandbox('auto', d)).toEqual({ ok: true, sandbox: 'bwrap', warning: null });
  });
});

describe('buildSandboxedCommand', () => {
  const spec: SandboxSpec = { sandbox: 'bwrap', command: ['python3', 'train.py'], workDir: '/data/attempt-1' };
  it('read-only root, writable work dir after the private /tmp, no network, own PID namespace', () => {
    const c = buildSandboxedCommand(spec);
    expect(c.file).toBe('bwrap');
    const a = c.args.join(' ');
    expect(a).toContain('--ro-bind / /');
    expect(a.indexOf('--tmpfs /tmp')).toBeLessThan(a.indexOf('--bind /data/attempt-1 /data/attempt-1'));
    expect(c.args).toEqual(expect.arrayContaining(['--unshare-net', '--unshare-pid', '--die-with-parent', '--new-session']));
    expect(c.args.slice(-3)).toEqual(['--', 'python3', 'train.py']);
    expect(c.applied).toEqual({ sandbox: 'bwrap', network: 'isolated', filesystem: 'read-only except work dir', memory: 'no memory limit' });
  });

  it('network when allowed, GPU devices, memory prefix; plain process for none', () => {
    const memory = prepareMemoryLimit({ limitMiB: 512, strategy: 'auto', support: { cgroupV1: null, prlimit: true, notes: [] }, name: 'a1' });
    const c = buildSandboxedCommand({ ...spec, allowNetwork: true, devices: ['/dev/nvidia0'], memory });
    expect(c.args).not.toContain('--unshare-net');
    expect(c.args.join(' ')).toContain('--dev-bind /dev/nvidia0 /dev/nvidia0');
    expect([c.file, ...c.args.slice(0, 3)]).toEqual(['prlimit', `--data=${512 * 1024 * 1024}`, '--', 'bwrap']);
    expect(c.applied).toMatchObject({ network: 'host', memory: 'prlimit --data 512 MiB (per process)' });
    const plain = buildSandboxedCommand({ ...spec, sandbox: 'none' });
    expect([plain.file, ...plain.args]).toEqual(['python3', 'train.py']);
    expect(plain.applied).toMatchObject({ sandbox: 'none', network: 'host', filesystem: 'host' });
  });

  it('gpuDeviceNodes lists only GPU nodes', () => {
    const dev = mkdtempSync(join(tmpdir(), 'chatgpu-dev-'));
    for (const n of ['nvidia0', 'nvidiactl', 'nvidia-uvm', 'kfd', 'null', 'sda']) writeFileSync(join(dev, n), '');
    mkdirSync(join(dev, 'dri'));
    expect(gpuDeviceNodes(dev).map((p) => p.slice(dev.length + 1))).toEqual(['dri', 'kfd', 'nvidia-uvm', 'nvidia0', 'nvidiactl']);
    rmSync(dev, { recursive: true });
    expect(gpuDeviceNodes('/nonexistent')).toEqual([]);
  });
});

describe('memory limits', () => {
  it('finds our own cgroup v1 memory directory from /proc/self/cgroup and mountinfo', () => {
    const cg = '9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n';
    const mi = '40 30 0:35 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n';
    expect(ownCgroupV1Memory(cg, mi)).toBe('/sys/fs/cgroup/memory/process_api/abc');
    // a container whose mount root is already its cgroup
    expect(ownCgroupV1Memory(cg, '40 30 0:35 /process_api/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n')).toBe('/sys/fs/cgroup/memory');
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

if (!detection.available) console.warn(`bwrap sandbox real runs SKIPPED: ${detection.reason ?? 'bwrap unavailable'} (npm test installs bubblewrap)`);

describe.skipIf(!detection.available)('bwrap sandbox, real runs', () => {
  let root: string;
  let work: string;
  let outside: string;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatgpu-sbx-'));
    work = join(root, 'attempt');
    outside = join(root, 'outside');
    mkdirSync(work);
    mkdirSync(outside);
    server = createServer((s) => s.end('hello\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(root, { recursive: true, force: true });
  });

  /** Runs `sh -c script` sandboxed; async, because the test's TCP server must keep answering. */
  function run(script: string, opts: Partial<SandboxSpec> = {}, env: NodeJS.ProcessEnv = {}) {
    const c = buildSandboxedCommand({ sandbox: 'bwrap', command: ['sh', '-c', script], workDir: work, ...opts });
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const p = spawn(c.file, c.args, { cwd: work, env: { PATH: process.env.PATH, ...env } });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d) => (stdout += d));
      p.stderr.on('data', (d) => (stderr += d));
      p.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  const connect = (p: number) =>
    `"${process.execPath}" -e "require('net').connect(${p},'127.0.0.1').on('data',()=>process.exit(0)).on('error',e=>{console.error(e.code);process.exit(3)})"`;

  it('reports the bwrap version', () => {
    expect(detection.version).toMatch(/^bubblewrap \d/);
  });

  it('can write inside its dir, not outside it, and has a private /tmp', async () => {
    const r = await run(
      `echo in > ok.txt && echo $PWD; echo out > "${outside}/x.txt" || echo DENIED; echo t > /tmp/chatgpu-private && echo TMPOK`,
      {},
    );
    expect(r.stdout).toContain(work);
    expect(r.stdout).toContain('DENIED');
    expect(r.stdout).toContain('TMPOK');
    expect(readFileSync(join(work, 'ok.txt'), 'utf8')).toBe('in\n');
    expect(existsSync(join(outside, 'x.txt'))).toBe(false);
    expect(existsSync('/tmp/chatgpu-private')).toBe(false);
  });

  it('cannot open a TCP connection to 127.0.0.1, unless the task allows network', async () => {
    const denied = await run(connect(port));
    expect(denied.code).toBe(3);
    expect(denied.stderr).toMatch(/ECONNREFUSED|ENETUNREACH/);
    const allowed = await run(connect(port), { allowNetwork: true });
    expect(allowed.code).toBe(0);
  });

  it('passes the environment through', async () => {
    const r = await run('echo "$CHATGPU_TASK_ID"', {}, { CHATGPU_TASK_ID: 'task-42' });
    expect(r.stdout.trim()).toBe('task-42');
  });

  it('killing bwrap kills every process of the task', async () => {
    const c = buildSandboxedCommand({
      sandbox: 'bwrap',
      // a background loop in its own session would survive a plain process-group kill
      command: ['sh', '-c', '(setsid sh -c "while true; do echo x >> tick; sleep 0.05; done" &) ; sleep 30'],
      workDir: work,
    });
    const p = spawn(c.file, c.args, { cwd: work, stdio: 'ignore' });
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
