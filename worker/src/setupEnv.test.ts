/**
 * The setup phase with real processes: wheels built here, a PEP 503 "simple" index served by
 * `python3 -m http.server` on 127.0.0.1, real pip in a real bwrap sandbox, Debian's /usr/bin/python3
 * (with its torch and numpy) as the base interpreter. No internet.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from './client.js';
import { AppendLogsDoc, CompleteAttemptDoc } from './documents.js';
import type { Capabilities } from './probe/types.js';
import { Run, type Assignment } from './runner.js';
import { buildSandboxedCommand, defaultTaskUser, execSandboxed, interpreterBinds, writeIdentityFiles } from './sandbox.js';
import { startPipIndex, type PipIndex } from '../test/pipIndex.js';
import { EnvCache, parseRequirementLines, type SetupRequest, type SetupResult, failureText } from './setupEnv.js';

const PY = '/usr/bin/python3';
const runAs = defaultTaskUser();
let root: string;
let pipIndex: PipIndex;
let port: number;
/** the index's access log: one line per request (http.server writes them to stderr) */
let requests: string[];
let identityFiles: { passwd: string; group: string };
const hanging: { server: Server; sockets: Set<Socket>; port: number }[] = [];
const log = { info: (m: string) => logged.push(m), warn: (m: string) => logged.push(m) };
const logged: string[] = [];

/** A server that accepts connections and never answers: pip waits on it. */
async function hangingIndex(): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((c) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const p = (server.address() as { port: number }).port;
  hanging.push({ server, sockets, port: p });
  return `http://127.0.0.1:${p}/simple`;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'chatgpu-setupenv-'));
  pipIndex = await startPipIndex(join(root, 'index'), [
    { name: 'chatgpu-testpkg', version: '0.1', module: 'chatgpu_testpkg', value: 'one' },
    { name: 'chatgpu-second', version: '1.0', module: 'chatgpu_second', value: 'two' },
    { name: 'chatgpu-third', version: '2.0', module: 'chatgpu_third', value: 'three' },
  ]);
  port = pipIndex.port;
  requests = pipIndex.requests;
  identityFiles = writeIdentityFiles(join(root, 'etc'), runAs ?? { uid: process.getuid!(), gid: process.getgid!() });
});

afterAll(async () => {
  await pipIndex?.close();
  for (const h of hanging) {
    for (const s of h.sockets) s.destroy();
    await new Promise<void>((r) => h.server.close(() => r()));
  }
  rmSync(root, { recursive: true, force: true });
});

function cache(name: string, o: Partial<ConstructorParameters<typeof EnvCache>[0]> = {}) {
  return new EnvCache({ dataDir: join(root, name), maxBytes: 10 * 2 ** 30, indexUrl: `http://127.0.0.1:${port}/simple`, log, ...o });
}

function request(pip: string[], lines: string[], o: Partial<SetupRequest> = {}): SetupRequest {
  return {
    python: PY,
    pip,
    attemptId: `att-${Math.random().toString(36).slice(2, 8)}`,
    sandbox: { sandbox: 'bwrap', runAs, identityFiles, memory: null, pidsLimit: 4096 },
    log: (l) => lines.push(l),
    signal: new AbortController().signal,
    ...o,
  };
}

/** Runs `code` with the env's python in the tasks' sandbox (no network, env read-only). */
async function runInSandbox(envPython: string, code: string): Promise<{ code: number | null; out: string }> {
  const work = mkdtempSync(join(root, 'task-'));
  chmodSync(work, 0o755); // as the runner's attempt directories: bwrap enters it before dropping to the task's uid
  spawnSync('chown', ['-R', `${runAs?.uid ?? process.getuid!()}:${runAs?.gid ?? process.getgid!()}`, work]);
  const cmd = buildSandboxedCommand({
    sandbox: 'bwrap',
    command: [envPython, '-c', code],
    workDir: work,
    env: { PATH: `${join(envPython, '..')}:/usr/bin:/bin`, HOME: '/tmp', LANG: 'C.UTF-8' },
    readOnly: interpreterBinds(envPython).binds,
    runAs,
    identityFiles,
  });
  const r = await execSandboxed(cmd, 120_000);
  return { code: r.code, out: `${r.stdout}${r.stderr}` };
}

const ok = (r: SetupResult) => {
  if (!r.ok) throw new Error(`setup failed: ${r.message}`);
  return r.env;
};

describe('parseRequirementLines', () => {
  it('keeps requirement lines, sorted and unique; refuses options, URLs and paths', () => {
    expect(
      parseRequirementLines([
        'tqdm==4.66.1',
        'requests>=2',
        '  tqdm==4.66.1  # progress',
        '',
        'Foo[bar,baz] >=1.0, <2 ; python_version >= "3.8"',
      ]),
    ).toEqual({
      lines: ['Foo[bar,baz] >=1.0, <2 ; python_version >= "3.8"', 'requests>=2', 'tqdm==4.66.1'],
    });
    for (const bad of [
      '--index-url http://evil.example/simple',
      '-e git+https://x/y',
      '-r other.txt',
      'pkg @ https://evil.example/p.whl',
      './local/pkg',
      '/abs/pkg.whl',
      'pkg==1\n--extra-index-url x',
    ]) {
      expect(parseRequirementLines([bad]), bad).toMatchObject({ error: expect.any(String) });
    }
    expect(parseRequirementLines(['# only a comment'])).toEqual({ error: 'no requirement lines' });
  });
});

describe('EnvCache (real pip, real sandbox, local index)', () => {
  it('creates an env whose package imports in the sandbox with the system torch; the run has no network, the setup had it', async () => {
    const c = cache('create');
    const lines: string[] = [];
    const before = requests.length;
    const env = ok(await c.setup(request(['chatgpu-testpkg==0.1'], lines)));
    console.log(lines.filter((l) => l.startsWith('worker:')).join('\n'));
    expect(lines.some((l) => /^worker: environment [0-9a-f]{8} created in \d+\.\ds \(\d+(\.\d)? [KM]B\)$/.test(l))).toBe(true);
    // pip's own output, streamed; it downloaded the wheel from 127.0.0.1: the setup had the network
    expect(lines).toContain('setup: Successfully installed chatgpu-testpkg-0.1');
    expect(requests.slice(before).some((l) => l.includes('GET /simple/chatgpu-testpkg/chatgpu_testpkg-0.1-py3-none-any.whl'))).toBe(true);
    expect(JSON.parse(readFileSync(`${env.dir}.json`, 'utf8'))).toMatchObject({
      lines: ['chatgpu-testpkg==0.1'],
      index: `http://127.0.0.1:${port}/simple`,
    });

    const r = await runInSandbox(
      env.python,
      [
        'import chatgpu_testpkg, torch, numpy, socket, sys',
        'print("VALUE", chatgpu_testpkg.VALUE)',
        'print("TORCH", torch.__file__)',
        'print("PREFIX", sys.prefix)',
        'try:',
        `    socket.create_connection(("127.0.0.1", ${port}), timeout=5); print("NETWORK reached")`,
        'except OSError as e:',
        '    print("NETWORK", type(e).__name__)',
        'try:',
        '    open(chatgpu_testpkg.__file__, "a")',
        '    print("ENV writable")',
        'except OSError as e:',
        '    print("ENV", type(e).__name__)',
      ].join('\n'),
    );
    expect(r.out).toContain('VALUE one');
    expect(r.out).toContain('TORCH /usr/lib/python3/dist-packages/torch/__init__.py');
    expect(r.out).toContain(`PREFIX ${env.dir}`);
    expect(r.out).toContain('NETWORK ConnectionRefusedError');
    expect(r.out).toMatch(/ENV (OSError|PermissionError)/);
    env.release();
  });

  it('a second setup with the same lines reuses the env without running pip', async () => {
    const c = cache('reuse');
    const first = ok(await c.setup(request(['chatgpu-testpkg==0.1'], [])));
    first.release();
    const lines: string[] = [];
    const before = requests.length;
    // order, duplicates and comments do not make another env
    const again = ok(await c.setup(request(['chatgpu-testpkg==0.1  # same', 'chatgpu-testpkg==0.1'], lines)));
    console.log(lines.join('\n'));
    expect(again.dir).toBe(first.dir);
    expect(lines).toEqual([
      expect.stringMatching(/^worker: reusing environment [0-9a-f]{8} \(created \d{4}-\d\d-\d\dT[\d:.]+Z\) in \d+\.\ds$/),
    ]);
    expect(requests.slice(before)).toEqual([]);
    again.release();
  });

  it('two attempts needing the same new env at once: one builds it, the other waits and reuses it', async () => {
    const c = cache('concurrent');
    const a: string[] = [];
    const b: string[] = [];
    const before = requests.length;
    const [ra, rb] = await Promise.all([c.setup(request(['chatgpu-second==1.0'], a)), c.setup(request(['chatgpu-second==1.0'], b))]);
    const [ea, eb] = [ok(ra), ok(rb)];
    expect(ea.dir).toBe(eb.dir);
    const built = [a, b].filter((l) => l.some((x) => /created in/.test(x)));
    const waited = [a, b].filter((l) => l.some((x) => /^worker: waiting for environment/.test(x)));
    expect(built).toHaveLength(1);
    expect(waited).toHaveLength(1);
    expect(waited[0]!.some((x) => /^worker: reusing environment/.test(x))).toBe(true);
    expect(requests.slice(before).filter((l) => l.includes('.whl'))).toHaveLength(1);
    ea.release();
    eb.release();
  });

  it("a requirement that would upgrade a base package (numpy>=99) fails with pip's message; nothing is left", async () => {
    const c = cache('upgrade');
    const lines: string[] = [];
    const r = await c.setup(request(['numpy>=99'], lines));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    console.log(r.message);
    expect(r.aborted).toBe(false);
    expect(r.message).toMatch(/^pip install failed \(exit code 1\): /);
    expect(r.message).toMatch(/Cannot install numpy>=99|ResolutionImpossible|conflict/);
    expect(lines.some((l) => /numpy==1\.\d+/.test(l) || /constraint/.test(l))).toBe(true);
    await c.evict();
    expect(readdirSync(c.root)).toEqual([]);
  });

  it("an unknown package fails with pip's message", async () => {
    const c = cache('unknown');
    const r = await c.setup(request(['chatgpu-no-such-package==1.0'], []));
    expect(r).toMatchObject({
      ok: false,
      aborted: false,
      message: expect.stringMatching(/No matching distribution found for chatgpu-no-such-package==1\.0/),
    });
  });

  it('refuses bad lines and an unusable interpreter without running pip', async () => {
    const c = cache('refuse');
    const before = requests.length;
    expect(await c.setup(request(['--index-url http://evil.example/simple'], []))).toMatchObject({
      ok: false,
      message: expect.stringMatching(/not a requirement this worker installs/),
    });
    expect(await c.setup(request(['chatgpu-testpkg==0.1'], [], { python: '/nonexistent/python3' }))).toMatchObject({
      ok: false,
      message: 'cannot inspect /nonexistent/python3: /nonexistent/python3: not found',
    });
    expect(requests.slice(before)).toEqual([]);
  });

  it('a setup past its time limit fails and leaves nothing', async () => {
    const c = cache('timeout', { indexUrl: await hangingIndex(), timeoutMs: 4000 });
    const lines: string[] = [];
    const r = await c.setup(request(['chatgpu-testpkg==0.1'], lines));
    expect(r).toMatchObject({ ok: false, aborted: false, message: expect.stringMatching(/^setup timed out after 4s during pip install/) });
    await c.evict();
    expect(readdirSync(c.root)).toEqual([]);
  });

  it('a setup stopped (cancel, lease lost) ends at once and leaves nothing; a waiting attempt builds it itself', async () => {
    const c = cache('abort', { indexUrl: await hangingIndex() });
    const stop = new AbortController();
    const lines: string[] = [];
    const waiting: string[] = [];
    const first = c.setup(request(['chatgpu-testpkg==0.1'], lines, { signal: stop.signal }));
    for (let i = 0; !lines.some((l) => l.startsWith('setup: ')); i++) {
      if (i > 300) throw new Error(`pip never started: ${lines.join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const secondStop = new AbortController();
    const second = c.setup(request(['chatgpu-testpkg==0.1'], waiting, { signal: secondStop.signal }));
    for (let i = 0; !waiting.some((l) => l.startsWith('worker: waiting for environment')); i++) {
      if (i > 300) throw new Error(`never waited: ${waiting.join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    stop.abort();
    expect(await first).toEqual({ ok: false, aborted: true, message: 'setup stopped' });
    // the waiting attempt takes over the build (the hanging index keeps it busy), then is stopped too
    for (let i = 0; waiting.filter((l) => l.startsWith('worker: creating environment')).length === 0; i++) {
      if (i > 300) throw new Error(`never took over: ${waiting.join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    secondStop.abort();
    expect(await second).toMatchObject({ ok: false, aborted: true });
    await c.evict();
    expect(readdirSync(c.root)).toEqual([]);
  });

  it('evicts the least recently used envs not in use over the limit, and leftovers of interrupted builds', async () => {
    const big = cache('evict');
    const a = ok(await big.setup(request(['chatgpu-testpkg==0.1'], [])));
    a.release();
    const b = ok(await big.setup(request(['chatgpu-second==1.0'], [])));
    b.release();
    const again = ok(await big.setup(request(['chatgpu-testpkg==0.1'], []))); // A is now the most recently used
    again.release();
    const size = (h: string) => (JSON.parse(readFileSync(join(big.root, `${h}.json`), 'utf8')) as { sizeBytes: number }).sizeBytes;
    const limit = Math.ceil(Math.max(size(a.hash), size(b.hash)) * 1.5);
    // a half-built env: its directory without a record is never used, and is removed
    mkdirSync(join(big.root, 'f'.repeat(16), 'bin'), { recursive: true });
    writeFileSync(join(big.root, 'f'.repeat(16), 'bin', 'python'), '');

    const small = cache('evict', { maxBytes: limit });
    await small.evict();
    expect(existsSync(b.dir)).toBe(false);
    expect(existsSync(`${b.dir}.json`)).toBe(false);
    expect(existsSync(a.dir)).toBe(true);
    expect(existsSync(join(big.root, 'f'.repeat(16)))).toBe(false);
    expect(logged.some((m) => m.startsWith(`evicted environment ${b.hash.slice(0, 8)}`))).toBe(true);

    // an env in use is kept whatever the limit; released, it goes
    const tiny = cache('evict', { maxBytes: 1 });
    const inUse = ok(await tiny.setup(request(['chatgpu-testpkg==0.1'], [])));
    await tiny.evict();
    expect(existsSync(inUse.dir)).toBe(true);
    inUse.release();
    await tiny.evict();
    expect(existsSync(inUse.dir)).toBe(false);
    expect(readdirSync(tiny.root)).toEqual([]);
  });
});

describe('Run with a setup phase (real runner, stand-in API)', () => {
  const caps = (enabled: boolean): Capabilities => ({
    os: 'linux',
    arch: 'x64',
    hostname: 'h',
    cpu: { model: 'cpu', cores: 1 },
    memoryMiB: 1024,
    diskFreeMiB: 1024,
    accelerators: [],
    pythons: [],
    python: PY,
    toolchains: { nvcc: null, hipcc: null },
    workloads: ['shell', 'python', 'torch-cpu'],
    sandbox: 'bwrap',
    install: { enabled, index: null },
    probeErrors: [],
  });

  async function runTask(
    name: string,
    requirements: Record<string, unknown>,
    command: string,
    o: { envs?: EnvCache | null; enabled?: boolean } = {},
  ) {
    const logs: { stream: string; text: string }[] = [];
    let result: { errorClass: string | null; errorMessage: string | null; exitCode: number | null } | undefined;
    const client = {
      request: async (doc: unknown, vars: { lines?: { stream: string; text: string }[]; result?: typeof result }) => {
        if (doc === AppendLogsDoc) {
          logs.push(...vars.lines!);
          return { appendLogs: { __typename: 'AppendResult' } };
        }
        if (doc === CompleteAttemptDoc) {
          result = vars.result;
          return { completeAttempt: { __typename: 'Attempt', status: result!.errorClass ? 'FAILED' : 'SUCCEEDED' } };
        }
        return { reportMetrics: { __typename: 'MetricsResult' } };
      },
    } as unknown as ApiClient;
    const dataDir = join(root, name);
    const assignment = {
      attemptId: `${name}-attempt`,
      fencingToken: '1',
      number: 1,
      task: { id: 't', jobId: 'j', name, command, files: [], inputs: [], requirements, environment: {} },
    } as unknown as Assignment;
    const envs =
      o.envs === undefined ? new EnvCache({ dataDir, maxBytes: 2 ** 30, indexUrl: `http://127.0.0.1:${port}/simple`, log }) : o.envs;
    const run = new Run(assignment, {
      client,
      dataDir,
      caps: caps(o.enabled ?? true),
      sandbox: 'bwrap',
      memoryLimit: () => null,
      log,
      envs,
    });
    await run.done;
    return { logs, result: result! };
  }

  it("installs, then runs with the env's python on PATH and without network; DEPENDENCY when pip fails", async () => {
    const ok = await runTask(
      'run-ok',
      { workload: 'python', setup: { pip: ['chatgpu-third==2.0'] } },
      [
        "python -c \"import chatgpu_third, sys, torch; print(chatgpu_third.VALUE, sys.prefix == __import__('os').environ['VIRTUAL_ENV'], torch.__file__)\"",
        `python -c "import socket; socket.create_connection(('127.0.0.1', ${port}), timeout=5)" 2>&1 | tail -1`,
      ].join(' && '),
    );
    console.log(ok.logs.map((l) => l.text).join('\n'));
    expect(ok.result).toMatchObject({ errorClass: null, exitCode: 0 });
    expect(ok.logs.some((l) => l.stream === 'system' && /^worker: environment [0-9a-f]{8} created in/.test(l.text))).toBe(true);
    expect(ok.logs.some((l) => l.stream === 'system' && l.text === 'setup: Successfully installed chatgpu-third-2.0')).toBe(true);
    expect(ok.logs.find((l) => l.stream === 'stdout')?.text).toBe('three True /usr/lib/python3/dist-packages/torch/__init__.py');
    expect(ok.logs.some((l) => l.stream === 'stdout' && /ConnectionRefusedError/.test(l.text))).toBe(true);
    expect(ok.logs.findIndex((l) => /created in/.test(l.text))).toBeLessThan(ok.logs.findIndex((l) => /^worker: running/.test(l.text)));

    const bad = await runTask('run-bad', { workload: 'python', setup: { pip: ['numpy>=99'] } }, 'python -c "print(1)"');
    expect(bad.result).toMatchObject({
      errorClass: 'DEPENDENCY',
      exitCode: null,
      errorMessage: expect.stringMatching(/^pip install failed \(exit code 1\): [^]*numpy/),
    });
    expect(bad.logs.some((l) => /^worker: running/.test(l.text))).toBe(false);
  });

  it('a worker that installs nothing fails such a task with DEPENDENCY and says why', async () => {
    const off = await runTask('run-off', { workload: 'python', setup: { pip: ['chatgpu-third==2.0'] } }, 'python -c "print(1)"', {
      envs: null,
    });
    expect(off.result).toMatchObject({
      errorClass: 'DEPENDENCY',
      errorMessage: 'this worker installs no packages (started with --no-install); the task needs chatgpu-third==2.0',
    });
    const noVenv = await runTask('run-novenv', { workload: 'python', setup: { pip: ['chatgpu-third==2.0'] } }, 'python -c "print(1)"', {
      enabled: false,
    });
    expect(noVenv.result).toMatchObject({
      errorClass: 'DEPENDENCY',
      errorMessage: expect.stringMatching(/its Python cannot make a virtualenv with pip/),
    });
  });
});

describe("failureText: what a failed setup step says in the task's error", () => {
  it("keeps pip's ERROR lines, not its retry warnings, and says when the index was unreachable", () => {
    // pip on a worker without a route to its index (as seen running pytorch/examples' time_sequence_prediction here).
    const retry = (n: number) =>
      `WARNING: Retrying (Retry(total=${n}, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno -2] Name or service not known')': /simple/matplotlib/`;
    const lines = [4, 3, 2, 1, 0]
      .map(retry)
      .concat([
        'ERROR: Could not find a version that satisfies the requirement matplotlib (from versions: none)',
        'ERROR: No matching distribution found for matplotlib',
      ]);
    expect(failureText(lines)).toBe(
      'ERROR: Could not find a version that satisfies the requirement matplotlib (from versions: none)\nERROR: No matching distribution found for matplotlib\n(the package index could not be reached from this worker)',
    );
  });

  it('without ERROR lines: the last eight lines, at most 2,000 characters', () => {
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i}`);
    expect(failureText(lines)).toBe(lines.slice(-8).join('\n'));
    const long = failureText(['x'.repeat(3000)]);
    expect(long).toHaveLength(2001);
    expect(long.startsWith('…')).toBe(true);
  });
});
