/**
 * Hostile tasks, real bwrap: each test runs a Python task that tries to break out the way a stranger's
 * code would (DESIGN.md §6, invariant 11), and fails if any attempt succeeds. The task prints
 * "ESCAPED <what>" for every attempt that worked and "REFUSED <what>: <error>" for every one refused;
 * a test checks both that nothing escaped and that every attempt did run (so a script that crashed
 * early cannot pass by printing nothing).
 *
 * The host side stands in for a contributor's machine: an owner home with a private key, a worker
 * data folder with another attempt's kept folder and the blob cache, the worker's control socket,
 * an abstract Unix socket and a TCP "API" on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMetricLine } from './metricLine.js';
import { classifyFailure, collectOutputs, snapshotCheckpoint } from './runner.js';
import {
  buildSandboxedCommand,
  defaultTaskUser,
  detectMemoryLimit,
  HELPERS_DIR,
  prepareMemoryLimit,
  spawnSandboxed,
  TASK_DIR,
  TASK_USER,
  writeIdentityFiles,
  type SandboxSpec,
} from './sandbox.js';
import { hostSeccompFilter, SANDBOX_RULES, SYSCALL_NUMBERS, TIOCLINUX, TIOCSTI } from './seccomp.js';

const HELPERS = fileURLToPath(new URL('../python', import.meta.url));
const TOKEN = 'chatgpu-worker-token-s3cret-9f1c';
const runAs = defaultTaskUser();

let root: string;
let home: string;
let dataDir: string;
let work: string;
let otherSecret: string;
let blob: string;
let controlSock: string;
const abstractName = `chatgpu-hostile-${process.pid}`;
let identity: { passwd: string; group: string };
const servers: Server[] = [];
let apiPort: number;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'chatgpu-hostile-'));
  home = join(root, 'home', 'owner');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'OWNER-PRIVATE-KEY\n');
  dataDir = join(root, 'worker-data');
  const other = join(dataDir, 'attempts', 'other-attempt');
  mkdirSync(join(other, 'outputs'), { recursive: true });
  otherSecret = join(other, 'outputs', 'model.bin');
  writeFileSync(otherSecret, 'OTHER-ATTEMPT-SECRET\n');
  blob = join(dataDir, 'cache', 'ab', 'ab'.padEnd(64, '0'));
  mkdirSync(join(dataDir, 'cache', 'ab'), { recursive: true });
  writeFileSync(blob, 'BLOB-CACHE-SECRET\n');
  work = join(dataDir, 'attempts', 'this-attempt');
  mkdirSync(join(work, 'outputs'), { recursive: true });
  identity = writeIdentityFiles(join(dataDir, 'sandbox', 'etc'), runAs ?? { uid: process.getuid!(), gid: process.getgid!() });
  // The worker's control socket, an abstract-namespace socket (no file at all) and the "API".
  controlSock = join(dataDir, 'control.sock');
  for (const where of [controlSock, `\0${abstractName}`]) {
    const s = createServer((c) => c.end('CONTROL-SOCKET-ANSWER\n'));
    await new Promise<void>((r) => s.listen(where, r));
    servers.push(s);
  }
  const api = createServer((c) => c.end('API-ANSWER\n'));
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  servers.push(api);
  apiPort = (api.address() as { port: number }).port;
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  rmSync(root, { recursive: true, force: true });
});

/** Python run before each hostile script: `attempt(what, fn)` reports one try. */
const PRELUDE = `
import os, sys, socket
def attempt(what, fn):
    try:
        got = fn()
    except BaseException as e:
        print(f"REFUSED {what}: {type(e).__name__}: {e}", flush=True)
        return
    print(f"ESCAPED {what}: {got!r}"[:300], flush=True)
def read(p):
    with open(p, 'rb') as f:
        return f.read(200)
`;

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Writes `script` as the task's file and runs it in the sandbox the way the runner does: a fresh
 * attempt directory owned by the task's uid, Debian's Python, the helpers bound in.
 * `parent` starts bwrap from an intermediate process carrying the worker token in its
 * environment and command line, like the worker itself.
 */
/** collectOutputs over the task's directory with `declared`: what it listed, the contents it uploaded, its notes. */
async function collectFromWork(declared: string[]) {
  const notes: string[] = [];
  const uploaded: string[] = [];
  const out = await collectOutputs({
    dir: work,
    declared,
    limits: { maxFileBytes: 1 << 20, maxTotalBytes: 1 << 20 },
    note: (m) => notes.push(m),
    upload: async (file) => {
      uploaded.push(readFileSync(file, 'utf8'));
      return { sha256: 'x' };
    },
  });
  return { out, uploaded, notes };
}

async function runTask(script: string, opts: Partial<SandboxSpec> & { parent?: boolean; ordinaryUser?: boolean } = {}): Promise<Result> {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(work, 'outputs'), { recursive: true });
  writeFileSync(join(work, 'task.py'), PRELUDE + script);
  // `ordinaryUser`: the worker of a contributor who is not root (bwrap makes a user namespace; the
  // task keeps the worker's uid). These machines run the tests as root: become TASK_USER first.
  const { parent, ordinaryUser, ...spec } = opts;
  const owner = ordinaryUser && runAs ? TASK_USER : runAs;
  if (owner) for (const p of [work, join(work, 'outputs'), join(work, 'task.py')]) chownSync(p, owner.uid, owner.gid);
  if (ordinaryUser) spec.runAs = null;
  const built = buildSandboxedCommand({
    sandbox: 'bwrap',
    command: ['/usr/bin/python3', 'task.py'],
    workDir: work,
    env: {
      PATH: '/usr/bin:/bin',
      HOME: `${TASK_DIR}/.chatgpu/home`,
      PYTHONPATH: HELPERS_DIR,
      PYTHONDONTWRITEBYTECODE: '1',
      CHATGPU_OUTPUT_DIR: `${TASK_DIR}/outputs`,
    },
    helpersDir: HELPERS,
    runAs,
    identityFiles: identity,
    pidsLimit: 4096,
    ...spec,
  });
  const c =
    ordinaryUser && runAs
      ? {
          ...built,
          file: '/usr/bin/setpriv',
          args: [`--reuid=${TASK_USER.uid}`, `--regid=${TASK_USER.gid}`, '--clear-groups', '--', built.file, ...built.args],
        }
      : built;
  const child = parent
    ? spawn(
        process.execPath,
        [
          '-e',
          // the seccomp program travels as JSON ({ type: 'Buffer', data }) and goes to bwrap on fd 3
          `const c = JSON.parse(process.env.SANDBOX_CMD); const p = require('child_process').spawn(c.file, c.args, { cwd: c.cwd, env: c.env, stdio: ['inherit', 'inherit', 'inherit', 'pipe'] }); p.stdio[3].end(Buffer.from(c.seccomp.data)); p.on('close', (code, sig) => process.exit(code ?? 128))`,
          '--',
          '--token',
          TOKEN,
        ],
        { env: { PATH: process.env.PATH, CHATGPU_WORKER_TOKEN: TOKEN, SANDBOX_CMD: JSON.stringify(c) }, cwd: c.cwd },
      )
    : spawnSandboxed(c, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on('close', (c2, s) => r([c2, s])));
  return { code, signal, stdout, stderr };
}

/** Every attempt was made and refused; none escaped. */
function expectAllRefused(r: Result, attempts: number) {
  const escaped = r.stdout.split('\n').filter((l) => l.startsWith('ESCAPED'));
  expect(escaped, `${r.stdout}\n${r.stderr}`).toEqual([]);
  const refused = r.stdout.split('\n').filter((l) => l.startsWith('REFUSED'));
  expect(refused.length, `${r.stdout}\n${r.stderr}`).toBe(attempts);
  return refused;
}

describe('hostile tasks in the bwrap sandbox (real bwrap, real processes)', () => {
  it("cannot read the owner's home, /root, /home, the worker's data folder, another attempt or the blob cache", async () => {
    const targets = [
      join(home, '.ssh', 'id_ed25519'),
      home,
      '/root',
      '/home',
      dataDir,
      otherSecret,
      blob,
      join(dataDir, 'cache'),
      '/etc/shadow',
    ];
    const r = await runTask(`
for p in ${JSON.stringify(targets)}:
    attempt(f"read {p}", lambda p=p: read(p) if not os.path.isdir(p) else os.listdir(p))
# the host's accounts: /etc/passwd inside holds only the task's own line
attempt("host accounts in /etc/passwd", lambda: [l for l in open('/etc/passwd') if not l.startswith('task:')] or (_ for _ in ()).throw(LookupError('only the task user')))
import pwd
print("whoami", pwd.getpwuid(os.getuid()).pw_name)
# what exists at the top: nothing beyond the runtime, the task and the helpers
attempt("unexpected top-level entries", lambda: (lambda extra: extra if extra else (_ for _ in ()).throw(LookupError('none')))(sorted(set(os.listdir('/')) - {'usr', 'lib', 'lib64', 'bin', 'sbin', 'etc', 'dev', 'proc', 'tmp', 'task', 'opt'})))
`);
    const refused = expectAllRefused(r, targets.length + 2);
    expect(refused).toContain('REFUSED host accounts in /etc/passwd: LookupError: only the task user');
    expect(r.stdout).toContain('whoami task');
    expect(r.code).toBe(0);
  });

  it('cannot connect to a host Unix socket (file or abstract), to the API on 127.0.0.1, or to a public address', async () => {
    const r = await runTask(`
def unix(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(addr)
    return s.recv(100)
def tcp(host, port):
    return socket.create_connection((host, port), timeout=5).recv(100)
attempt("unix socket ${controlSock}", lambda: unix(${JSON.stringify(controlSock)}))
attempt("abstract unix socket", lambda: unix("\\0${abstractName}"))
attempt("API over TCP 127.0.0.1:${apiPort}", lambda: tcp("127.0.0.1", ${apiPort}))
attempt("public address 1.1.1.1:443", lambda: tcp("1.1.1.1", 443))
attempt("DNS lookup", lambda: socket.getaddrinfo("example.com", 443))
`);
    const refused = expectAllRefused(r, 5);
    expect(refused.join('\n')).toMatch(/public address 1\.1\.1\.1:443: OSError: \[Errno 101\] Network is unreachable/);
  });

  it('cannot write outside its directory, and its writes inside belong to it', async () => {
    const r = await runTask(`
def write(p):
    with open(p, 'w') as f:
        f.write('x')
    return p
for p in ['/usr/pwned', '/etc/pwned', '/pwned', '${HELPERS_DIR}/chatgpu/pwned.py', '${HELPERS_DIR}/chatgpu/metrics.py', ${JSON.stringify(join(dataDir, 'pwned'))}, ${JSON.stringify(otherSecret)}, '/proc/sys/kernel/hostname', '/dev/pwned']:
    attempt(f"write {p}", lambda p=p: write(p))
attempt("mount", lambda: os.system("mount -t tmpfs none /usr 2>/dev/null") == 0 or (_ for _ in ()).throw(PermissionError('mount failed')))
attempt("chown to root", lambda: os.chown('task.py', 0, 0))
write('inside.txt')
print('uid', os.getuid(), os.geteuid())
`);
    expectAllRefused(r, 11);
    expect(readFileSync(join(work, 'inside.txt'), 'utf8')).toBe('x');
    expect(existsSync(join(dataDir, 'pwned'))).toBe(false);
    expect(readFileSync(otherSecret, 'utf8')).toBe('OTHER-ATTEMPT-SECRET\n');
    expect(readdirSync(join(HELPERS, 'chatgpu'))).not.toContain('pwned.py');
    if (runAs) expect(r.stdout).toContain(`uid ${runAs.uid} ${runAs.uid}`);
  });

  it('cannot have the worker upload files outside its directory through symlinked outputs', async () => {
    const r = await runTask(`
os.symlink('/etc/passwd', 'outputs/passwd')
os.symlink(${JSON.stringify(otherSecret)}, 'outputs/other-model.bin')
os.symlink(${JSON.stringify(join(dataDir, 'attempts', 'other-attempt'))}, 'outputs/other-dir')
os.symlink(${JSON.stringify(join(dataDir, 'attempts', 'other-attempt', 'outputs'))}, 'linked')
os.mkdir('outputs/sub')
os.symlink('../../task.py', 'outputs/sub/relative')
attempt("hard link to a file outside", lambda: os.link('/etc/passwd', 'outputs/hard'))
open('outputs/ok.txt', 'w').write('mine')
`);
    expectAllRefused(r, 1);
    const { out, uploaded, notes } = await collectFromWork([
      'linked/model.bin',
      'linked',
      'outputs/passwd',
      '../other-attempt/outputs/model.bin',
      join(dataDir, 'cache'),
    ]);
    expect(out.map((o) => o.path)).toEqual(['outputs/ok.txt']);
    expect(uploaded).toEqual(['mine']);
    expect(notes.sort()).toEqual([
      'output ../other-attempt/outputs/model.bin skipped: path outside the attempt directory',
      `output ${join(dataDir, 'cache')} skipped: path outside the attempt directory`,
      'output linked skipped: symbolic link (not followed)',
      'output linked/model.bin skipped: symbolic link (not followed)',
      'output outputs/other-dir skipped: symbolic link (not followed)',
      'output outputs/other-model.bin skipped: symbolic link (not followed)',
      'output outputs/passwd skipped: symbolic link (not followed)',
      'output outputs/passwd skipped: symbolic link (not followed)',
      'output outputs/sub/relative skipped: symbolic link (not followed)',
    ]);
  });

  it('cannot have the worker copy files outside its directory into a checkpoint snapshot through links', async () => {
    const r = await runTask(`
os.makedirs('checkpoint/sub')
os.symlink('/etc/passwd', 'checkpoint/passwd')
os.symlink(${JSON.stringify(otherSecret)}, 'checkpoint/other-model.bin')
os.symlink(${JSON.stringify(join(dataDir, 'attempts', 'other-attempt'))}, 'checkpoint/sub/other-dir')
attempt("hard link to a file outside", lambda: os.link('/etc/passwd', 'checkpoint/hard'))
open('checkpoint/ckpt.bin', 'w').write('state')
os.chmod('checkpoint/ckpt.bin', 0o755)
`);
    expectAllRefused(r, 1);
    const to = join(dataDir, 'spool', 'hostile.checkpoint');
    const notes: string[] = [];
    await snapshotCheckpoint(work, 'checkpoint', to, { maxFileBytes: 1 << 20, maxTotalBytes: 1 << 20 }, (m) => notes.push(m));
    // Only the regular file inside, with its mode; the links are neither copied nor followed.
    const listed = readdirSync(to, { recursive: true }).map(String).sort();
    expect(listed).toEqual(['checkpoint', 'checkpoint/ckpt.bin']);
    expect(readFileSync(join(to, 'checkpoint/ckpt.bin'), 'utf8')).toBe('state');
    expect(statSync(join(to, 'checkpoint/ckpt.bin')).mode & 0o111).not.toBe(0);
    expect(notes.filter((n) => /symbolic link \(not followed\)/.test(n)).length).toBe(3);
    rmSync(to, { recursive: true, force: true });
  });

  it('declared globs (`predict*.npy`, `plots/*.png`) collect what they match inside its directory, never through a link that matches', async () => {
    const r = await runTask(`
open('predict0.npy', 'w').write('p0')
open('predict1.npy', 'w').write('p1')
open('.predict-hidden.npy', 'w').write('hidden')
os.symlink('/etc/passwd', 'predict9.npy')
os.symlink(${JSON.stringify(otherSecret)}, 'predict8.npy')
os.mkdir('plots')
open('plots/loss.png', 'w').write('png')
os.symlink(${JSON.stringify(join(dataDir, 'attempts', 'other-attempt', 'outputs'))}, 'plots2')
attempt("hard link to a file outside", lambda: os.link('/etc/passwd', 'predict7.npy'))
`);
    expectAllRefused(r, 1);
    const { out, uploaded, notes } = await collectFromWork(['predict*.npy', 'plots*/*.png', '../*/outputs/*']);
    expect(out.map((o) => o.path)).toEqual(['plots/loss.png', 'predict0.npy', 'predict1.npy']);
    expect(uploaded).toEqual(['png', 'p0', 'p1']);
    expect(notes.sort()).toEqual([
      'output ../*/outputs/* skipped: path outside the attempt directory',
      'output plots2 skipped: symbolic link (not followed)',
      'output predict8.npy skipped: symbolic link (not followed)',
      'output predict9.npy skipped: symbolic link (not followed)',
    ]);
  });

  it('outputs over the per-file or total size limit are skipped and said so', async () => {
    await runTask(`
open('outputs/a.bin', 'wb').write(b'a' * 600)
open('outputs/b.bin', 'wb').write(b'b' * 300)
open('outputs/c.bin', 'wb').write(b'c' * 2000)
`);
    const notes: string[] = [];
    const out = await collectOutputs({
      dir: work,
      declared: [],
      limits: { maxFileBytes: 1000, maxTotalBytes: 800 },
      note: (m) => notes.push(m),
      upload: async () => ({ sha256: 'x' }),
    });
    expect(out.map((o) => o.path)).toEqual(['outputs/a.bin']);
    expect(notes).toEqual([
      'output outputs/b.bin skipped: would bring the outputs over their total limit of 800 bytes',
      'output outputs/c.bin skipped: 2000 bytes, over the per-file limit of 1000',
    ]);
  });

  it('cannot read the worker token from its environment or /proc, though its parent has it in both', async () => {
    const r = await runTask(
      `
def find_token():
    hits = [k for k, v in os.environ.items() if ${JSON.stringify(TOKEN)} in v or k == 'CHATGPU_WORKER_TOKEN']
    for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
        for f in ('environ', 'cmdline'):
            try:
                if b${JSON.stringify(TOKEN)} in read(f'/proc/{pid}/{f}') + open(f'/proc/{pid}/{f}', 'rb').read():
                    hits.append(f'/proc/{pid}/{f}')
            except OSError:
                pass
    if hits:
        return hits
    raise LookupError(f"not in the environment nor in /proc ({len(os.listdir('/proc'))} entries)")
attempt("worker token", find_token)
attempt("parent process visible", lambda: [p for p in os.listdir('/proc') if p.isdigit() and int(p) > 100] or (_ for _ in ()).throw(LookupError('only the sandbox\\'s own processes')))
`,
      { parent: true },
    );
    expectAllRefused(r, 2);
    expect(r.code).toBe(0);
  });

  // RLIMIT_NPROC holds for the unprivileged uid a root worker switches to (these machines run the
  // tests as root); an ordinary-user worker sets none, see sandbox.ts.
  it('cannot fork past the pids limit', async () => {
    const r = await runTask(
      `
import time
def fork_bomb():
    n = 0
    for _ in range(400):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
    return f"{n} processes"
attempt("fork 400 processes", fork_bomb)
`,
      { pidsLimit: 64 },
    );
    const refused = expectAllRefused(r, 1);
    expect(refused[0]).toMatch(/BlockingIOError: \[Errno 11\] Resource temporarily unavailable/);
  });

  it("cannot fill the machine's memory through its private /tmp or /dev/shm (each tmpfs is bounded)", async () => {
    const r = await runTask(
      `
def fill(where):
    chunk = b"x" * (1 << 20)
    with open(where, "wb") as f:
        for _ in range(64):
            f.write(chunk)
            f.flush()
    return "64 MiB written"
attempt("write 64 MiB to /tmp", lambda: fill("/tmp/big"))
attempt("write 64 MiB to /dev/shm", lambda: fill("/dev/shm/big"))
`,
      { tmpSizeMiB: 16 },
    );
    const refused = expectAllRefused(r, 2);
    for (const line of refused) expect(line).toMatch(/OSError: \[Errno 28\] No space left on device/);
  });

  it('cannot allocate past the memory limit, and the run is classified OOM', async () => {
    const plan = prepareMemoryLimit({ limitMiB: 256, strategy: 'auto', support: await detectMemoryLimit(), name: 'hostile' });
    expect(plan.kind).toBe('prlimit-data');
    const r = await runTask(
      `
blocks = []
for i in range(64):
    blocks.append(bytearray(64 * 1024 * 1024))
print("ESCAPED allocation of 4 GiB")
`,
      { memory: plan },
    );
    expect(r.stdout).not.toContain('ESCAPED');
    expect(r.code).not.toBe(0);
    expect(classifyFailure({ code: r.code, signal: r.signal, memory: plan, oomKilled: false, stderrTail: r.stderr.slice(-8192) })).toEqual({
      errorClass: 'OOM',
      errorMessage: 'out of memory: exit code 1 after an allocation failed (memory limit: prlimit --data 256 MiB (per process))',
    });
  });

  it('positive: Debian torch imports and the metrics helper works, with the helpers kept under /tmp', async () => {
    // A worker installed under /tmp: its helpers would vanish behind the private /tmp if not bound.
    const helpers = mkdtempSync(join(tmpdir(), 'chatgpu-helpers-'));
    cpSync(HELPERS, helpers, { recursive: true });
    chmodSync(helpers, 0o755); // mkdtemp makes it 0700; an installed worker's folder is world-readable
    try {
      const r = await runTask(
        `
import torch
from chatgpu.metrics import log
x = torch.ones(3, 3)
log(step=1, loss=float((x @ x).sum()) / 100, torch_ok=True)
print("helpers from", __import__('chatgpu').__file__)
`,
        { helpersDir: helpers },
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const metric = r.stdout
        .split('\n')
        .map((l) => parseMetricLine(l))
        .find((m) => m !== null);
      expect(metric).toMatchObject({ step: 1, values: { loss: 0.27, torch_ok: 1 } });
      expect(r.stdout).toContain(`helpers from ${HELPERS_DIR}/chatgpu/__init__.py`);
    } finally {
      rmSync(helpers, { recursive: true, force: true });
    }
  });
  // ---------------------------------------------------------------------------------------------
  // The system call filter (seccomp.ts): each refused call, made from inside a task by number.

  const filter = hostSeccompFilter()!;
  const arch = filter.arch;
  const nr = (name: string) => SYSCALL_NUMBERS[name]![arch]!;
  /** Arguments that would make each call do something real without the filter (where one exists). */
  const ARGS: Record<string, number[]> = {
    unshare: [0x10000000], // CLONE_NEWUSER
    clone: [0x10000000 | 17], // CLONE_NEWUSER | SIGCHLD
    personality: [0x0040000], // ADDR_NO_RANDOMIZE
    ptrace: [0], // PTRACE_TRACEME
  };
  /** [label, number, args, errno the filter answers] for every refused call on this machine. */
  const syscallCases = SANDBOX_RULES.filter((r) => SYSCALL_NUMBERS[r.syscall]![arch] !== undefined).flatMap((r) =>
    r.syscall === 'ioctl'
      ? [
          ['ioctl-TIOCSTI', nr('ioctl'), [0, TIOCSTI], r.errno],
          ['ioctl-TIOCLINUX', nr('ioctl'), [0, TIOCLINUX], r.errno],
        ]
      : [[r.syscall, nr(r.syscall), ARGS[r.syscall] ?? [], r.errno]],
  );
  const SYSCALL_PRELUDE = `
import ctypes, json, subprocess
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def raw(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_ulong(a) for a in args])
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
def try_call(name, nr, args):
    r = raw(nr, *args)
    if name == 'clone' and r == 0:
        os._exit(0)  # the child of a clone the filter let through
    return r
CASES = json.loads(${JSON.stringify(JSON.stringify(syscallCases))})
`;

  it('every refused system call fails with its errno, called by number through libc.syscall', async () => {
    const r = await runTask(`${SYSCALL_PRELUDE}
for name, n, args, want in CASES:
    attempt(f"{name} (nr {n}) wants errno {want}", lambda name=name, n=n, args=args: try_call(name, n, args))
# the same refusal through the tools a task would use
def unshare_tool():
    p = subprocess.run(['unshare', '--user', '--map-root-user', 'id', '-u'], capture_output=True, text=True)
    if p.returncode == 0:
        return p.stdout
    raise PermissionError(p.stderr.strip())
attempt("unshare --user (util-linux)", unshare_tool)
attempt("os.unshare(CLONE_NEWUSER)", lambda: os.unshare(os.CLONE_NEWUSER) if hasattr(os, 'unshare') else raw(${nr('unshare')}, 0x10000000))
`);
    const refused = expectAllRefused(r, syscallCases.length + 2);
    for (const line of refused.slice(0, syscallCases.length)) {
      const m = /^REFUSED (\S+) \(nr \d+\) wants errno (\d+): \w+Error: \[Errno (\d+)\]/.exec(line);
      expect(m, line).not.toBeNull();
      expect(m![3], line).toBe(m![2]);
    }
    expect(refused.at(-2)).toMatch(/unshare --user \(util-linux\): PermissionError: .*Operation not permitted/);
    expect(refused.at(-1)).toMatch(/os\.unshare\(CLONE_NEWUSER\): (PermissionError|OSError): \[Errno 1\] Operation not permitted/);
    expect(r.code).toBe(0);
  });

  it('control: without the filter the same calls do not fail that way (so the test above sees the filter, not the kernel)', async () => {
    // Calls that succeed or fail differently for an unprivileged process when nothing filters them.
    const r = await runTask(
      `${SYSCALL_PRELUDE}
def outcome(f):
    try:
        return f()
    except OSError as e:
        return f"errno {e.errno}"
print("ptrace-traceme", outcome(lambda: raw(${nr('ptrace')}, 0)))
print("personality", outcome(lambda: raw(${nr('personality')}, 0x0040000)))
print("clone3", outcome(lambda: raw(${nr('clone3')}, 0, 0)))
print("tiocsti", outcome(lambda: raw(${nr('ioctl')}, 0, ${TIOCSTI}, 0)))
print("process_vm_writev", outcome(lambda: raw(${nr('process_vm_writev')}, os.getpid(), 0, 0, 0, 0, 0)))
`,
      { seccomp: null },
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('ptrace-traceme 0');
    expect(r.stdout).toContain('personality 0');
    expect(r.stdout).toContain('clone3 errno 22'); // EINVAL, not the filter's ENOSYS
    expect(r.stdout).toContain('tiocsti errno 25'); // ENOTTY on /dev/null, not EPERM
    expect(r.stdout).toContain('process_vm_writev 0');
  });

  it("bwrap's unfiltered PID 1 is out of reach: no ptrace, no /proc/1 (also for an ordinary-user worker, where it has the task's uid)", async () => {
    for (const ordinaryUser of [false, true]) {
      if (ordinaryUser && runAs) chmodSync(root, 0o711); // the task's uid must reach its attempt dir to bind it
      try {
        const r = await runTask(
          `${SYSCALL_PRELUDE}
import signal
def attach():
    got = raw(${nr('ptrace')}, 16, 1, 0, 0)  # PTRACE_ATTACH
    raw(${nr('ptrace')}, 17, 1, 0, 0)  # PTRACE_DETACH, and let it go on
    os.kill(1, signal.SIGCONT)
    return got
attempt("ptrace PID 1", attach)
attempt("open /proc/1/mem for writing", lambda: open('/proc/1/mem', 'r+b'))
attempt("list /proc/1", lambda: os.listdir('/proc/1') or (_ for _ in ()).throw(LookupError('empty')))
attempt("read /proc/1/cmdline", lambda: read('/proc/1/cmdline'))
attempt("process_vm_writev into PID 1", lambda: raw(${nr('process_vm_writev')}, 1, 0, 0, 0, 0, 0))
print("uid", os.getuid(), "pid", os.getpid(), "ppid", os.getppid())
`,
          { ordinaryUser },
        );
        expectAllRefused(r, 5);
        expect(r.stdout).toMatch(/uid \d+ pid 2 ppid 1/);
        if (ordinaryUser) expect(r.stdout).toContain(`uid ${runAs ? TASK_USER.uid : process.getuid!()} `);
      } finally {
        if (ordinaryUser && runAs) chmodSync(root, 0o700);
      }
    }
  });

  it('another ABI is killed: an x32 system call (x86_64), and an i386 one through int 0x80', async () => {
    expect(arch).toBe('x86_64'); // these machines; the aarch64 program's ABI check is in sandbox.seccomp.test.ts
    const r = await runTask(`
import subprocess
X32 = '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(ctypes.c_long(0x40000000 | 39))  # getpid through the x32 ABI
print("RESULT", r, ctypes.get_errno())
'''
I386 = '''
import ctypes, mmap
buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
buf.write(bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3]))  # mov eax, 20 (i386 getpid); int 0x80; ret
print("RESULT", ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(buf)))())
'''
for what, code in (("x32", X32), ("i386", I386)):
    p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    print(what, "signal" if p.returncode < 0 else "exit", -p.returncode if p.returncode < 0 else p.returncode, p.stdout.strip())
`);
    expect(r.stderr).toBe('');
    // x32: killed by SIGSYS (31); without the filter this kernel answers ENOSYS (no x32 support)
    expect(r.stdout).toContain('x32 signal 31 \n');
    // i386: the filter kills it (SIGSYS) — unless the kernel has no int 0x80 entry at all, which
    // faults (SIGSEGV) before seccomp sees it (this machine's VM kernel); never a result
    expect(r.stdout).toMatch(/^i386 signal (31|11) $/m);
  });

  it('positive: fork, threads, subprocess, multiprocessing, numpy and torch work under the filter; it is loaded and fd 3 is closed', async () => {
    const r = await runTask(`
import threading, subprocess, multiprocessing, numpy, torch
status = dict(l.split(':\\t') for l in open('/proc/self/status').read().splitlines() if l.startswith('Seccomp'))
print("seccomp mode", status.get('Seccomp'))
try:
    os.fstat(3); print("fd3 open")
except OSError as e:
    print("fd3", e.errno)
pid = os.fork()
if pid == 0:
    os._exit(7)
print("fork", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
out = []
ts = [threading.Thread(target=lambda i=i: out.append(i * i)) for i in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print("threads", sorted(out))
print("subprocess", subprocess.run(['/bin/sh', '-c', 'echo hi'], capture_output=True, text=True).stdout.strip())
with multiprocessing.get_context('fork').Pool(2) as pool:
    print("pool", pool.map(abs, [-1, -2, -3]))
print("numpy", int(numpy.arange(10).dot(numpy.arange(10))))
torch.set_num_threads(2)
a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
print("torch", (a @ a.T).tolist(), torch.get_num_threads())
import ctypes
print("personality query", ctypes.CDLL(None).personality(ctypes.c_uint(0xffffffff)))
`);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([
      'seccomp mode 2',
      'fd3 9',
      'fork 7',
      'threads [0, 1, 4, 9]',
      'subprocess hi',
      'pool [1, 2, 3]',
      'numpy 285',
      'torch [[5.0, 14.0], [14.0, 50.0]] 2',
      'personality query 0',
    ]);
  });
});
