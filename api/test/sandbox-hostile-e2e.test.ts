/**
 * Hostile tasks end to end: a real API, a real `chatgpu-worker` (bwrap sandbox, memory limit) and
 * tasks that try to reach what the worker's machine holds — the owner's home, the worker's data
 * folder (another attempt's kept folder, the blob cache), the worker token in the environment or
 * /proc, to make a user namespace (refused by the seccomp filter) — and to have the worker upload
 * host files through symlinked outputs; and a task that
 * allocates past its memory limit, which must fail with error class OOM. The per-case suite with
 * every attempt is worker/src/sandbox.hostile.test.ts; this one proves the runner wires it up, for a
 * contributor's worker and for the local worker started the way `npm start` starts it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startLocalWorker } from '../src/localWorker.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const api: TestApi = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', RETRY_BASE_SEC: '0' }, { scheduler: true });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "lab"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const workerToken: string = wt.data.createWorkerToken.token;
const prisma = api.server.db.prisma;
const ownerHome = mkdtempSync(path.join(tmpdir(), 'owner-home-'));
afterAll(() => rmSync(ownerHome, { recursive: true, force: true }));

async function runTask(files: Record<string, string>, command: string, requirements: Parameters<typeof createTask>[1]['requirements']) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
    { i: { title: 't', request: 'r', files: manifest } },
    user.token,
  );
  const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
  const task = await createTask(api.server.resources, {
    jobId,
    kind: 'RUN',
    name: 'hostile',
    codeVersionId: r.data.createJob.originalCode.id,
    command,
    requirements,
  });
  await waitFor(
    async () => ['SUCCEEDED', 'FAILED'].includes((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status),
    60_000,
    'task done',
  );
  const attempt = await prisma.attempt.findFirstOrThrow({ where: { taskId: task.id }, orderBy: { number: 'desc' } });
  const logs = (await prisma.logChunk.findMany({ where: { attemptId: attempt.id }, orderBy: { seq: 'asc' } })).map((l) => l.text);
  return { attempt, logs };
}

/**
 * The hostile task: reads what the machine holds, looks for the worker token, tries a user
 * namespace, and links host files into its outputs. `dataDir` is the worker's data folder.
 */
async function hostileRun(dataDir: string) {
  mkdirSync(path.join(ownerHome, '.ssh'), { recursive: true });
  writeFileSync(path.join(ownerHome, '.ssh', 'id_ed25519'), 'OWNER-PRIVATE-KEY\n');
  const other = path.join(dataDir, 'attempts', 'other-attempt', 'outputs');
  mkdirSync(other, { recursive: true });
  writeFileSync(path.join(other, 'model.bin'), 'OTHER-ATTEMPT-SECRET\n');
  const targets = [
    path.join(ownerHome, '.ssh', 'id_ed25519'),
    path.join(other, 'model.bin'),
    path.join(dataDir, 'cache'),
    dataDir,
    '/root',
    '/home',
  ];
  const script = `
import os
def attempt(what, fn):
    try:
        got = fn()
    except Exception as e:
        print(f"REFUSED {what}: {type(e).__name__}")
        return
    print(f"ESCAPED {what}: {got!r}"[:200])
def read(p):
    return os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read(100)
for p in ${JSON.stringify(targets)}:
    attempt(p, lambda p=p: read(p))
def token():
    hits = [k for k, v in os.environ.items() if ${JSON.stringify(workerToken)} in v]
    for pid in filter(str.isdigit, os.listdir('/proc')):
        for f in ('environ', 'cmdline'):
            try:
                if ${JSON.stringify(workerToken)}.encode() in open(f'/proc/{pid}/{f}', 'rb').read():
                    hits.append(f'/proc/{pid}/{f}')
            except OSError:
                pass
    if hits:
        return hits
    raise LookupError('no token')
attempt("worker token", token)
def new_user_namespace():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER: refused by the sandbox's seccomp filter
        raise OSError(ctypes.get_errno(), 'unshare')
    return 'a new user namespace'
attempt("unshare(CLONE_NEWUSER)", new_user_namespace)
os.symlink('/etc/passwd', 'outputs/passwd')
os.symlink(${JSON.stringify(path.join(other, 'model.bin'))}, 'outputs/other.bin')
os.symlink(${JSON.stringify(other)}, 'linked')
open('outputs/ok.txt', 'w').write('mine')
`;
  const { attempt, logs } = await runTask({ 'hostile.py': script }, 'python hostile.py', {
    workload: 'python',
    outputs: ['linked/model.bin', 'linked'],
  });
  expect(logs.filter((l) => l.startsWith('ESCAPED'))).toEqual([]);
  expect(logs.filter((l) => l.startsWith('REFUSED'))).toHaveLength(targets.length + 2);
  expect(logs).toContain('REFUSED unshare(CLONE_NEWUSER): PermissionError');
  expect(attempt.status).toBe('SUCCEEDED');
  expect((attempt.outputs as { path: string }[]).map((o) => o.path)).toEqual(['outputs/ok.txt']);
  expect(logs.filter((l) => / skipped: /.test(l)).sort()).toEqual([
    'worker: output linked skipped: symbolic link (not followed)',
    'worker: output linked/model.bin skipped: symbolic link (not followed)',
    'worker: output outputs/other.bin skipped: symbolic link (not followed)',
    'worker: output outputs/passwd skipped: symbolic link (not followed)',
  ]);
  // What the worker advertised is what the attempt ran in (both bwrap with the filter).
  const worker = await prisma.worker.findUniqueOrThrow({ where: { id: attempt.workerId } });
  expect(worker.capabilities).toMatchObject({ sandbox: 'bwrap' });
  expect(worker.capabilities).not.toHaveProperty('ownJobsOnly');
  expect(logs[0]).toMatch(
    / \(attempt 1; sandbox bwrap, network isolated, prlimit --data \d+ MiB \(per process\), processes .*, user .*, seccomp: \d+ system calls refused \((x86_64|aarch64)\)\)$/,
  );
  return { attempt, logs };
}

describe('hostile tasks through a real worker (bwrap)', () => {
  it('a contributor worker: sees none of the host, cannot find the worker token, cannot upload host files through symlinks; over its memory limit it is OOM', async () => {
    const w = await startWorker(api.url, workerToken, 'hostile', ['--python', '/usr/bin/python3', '--memory-limit', '400'], {
      HOME: ownerHome,
      CHATGPU_WORKER_TOKEN: workerToken,
    });
    const { logs } = await hostileRun(w.dataDir);
    expect(logs[0]).toMatch(/prlimit --data 400 MiB \(per process\)/);

    const hog = await runTask(
      { 'hog.py': 'blocks = [bytearray(64 * 1024 * 1024) for _ in range(32)]\nprint("allocated 2 GiB")\n' },
      'python hog.py',
      { workload: 'python' },
    );
    expect(hog.logs).not.toContain('allocated 2 GiB');
    expect(hog.attempt).toMatchObject({ status: 'FAILED', errorClass: 'OOM' });
    expect(hog.attempt.errorMessage).toMatch(
      /^out of memory: exit code 1 after an allocation failed \(memory limit: prlimit --data 400 MiB/,
    );
    await w.stop();
  }, 150_000);

  it('the local worker as `npm start` starts it (startLocalWorker: its sandbox check, then --sandbox own-jobs): the same', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'npm-start-'));
    const lines: string[] = [];
    const stop = await startLocalWorker({
      serverUrl: api.url,
      token: workerToken,
      dataDir,
      log: (l) => lines.push(l),
      env: { ...process.env, HOME: ownerHome },
    });
    try {
      // bubblewrap is installed on these machines (npm test installs it): nothing to say.
      expect(lines).toEqual([]);
      await waitFor(() => prisma.worker.findFirst({ where: { name: 'local', status: 'ONLINE' } }), 60_000, 'the local worker online');
      await hostileRun(path.join(dataDir, 'worker'));
    } finally {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 150_000);
});
