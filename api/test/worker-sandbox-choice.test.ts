/**
 * Isolation on a machine without bubblewrap, with real `chatgpu-worker` processes against a real
 * API: the worker's PATH is a copy of this machine's tools without bwrap. A contributor's worker
 * refuses to start unless its owner passes --sandbox none (then it says so everywhere); the local
 * worker as `npm start` starts it falls back to no sandbox for the local user's own jobs only.
 * And no leftovers: what an attempt leaves running ends with it, and after a SIGKILL of the worker,
 * at its next start.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startLocalWorker } from '../src/localWorker.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { repoRoot, spawnProc } from './helpers/processes.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const run = promisify(execFile);
const api: TestApi = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', RETRY_BASE_SEC: '0' }, { scheduler: true });
const prisma = api.server.db.prisma;
const owner = await api.signUp();
const stranger = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "lab"}) { ... on CreatedWorkerToken { token } } }`, {}, owner.token);
const workerToken: string = wt.data.createWorkerToken.token;
const bin = path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs');

/** This machine's /usr/bin and /bin without bwrap: a machine where bubblewrap is not installed. */
const noBwrap = mkdtempSync(path.join(tmpdir(), 'path-without-bwrap-'));
for (const d of ['/usr/local/bin', '/usr/bin', '/bin']) {
  for (const n of existsSync(d) ? readdirSync(d) : []) {
    if (n === 'bwrap' || existsSync(path.join(noBwrap, n))) continue;
    symlinkSync(path.join(d, n), path.join(noBwrap, n));
  }
}
afterAll(() => rmSync(noBwrap, { recursive: true, force: true }));

async function queueTask(userToken: string, command: string, files: Record<string, string> = { 'main.py': 'print("hi")\n' }) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, userToken)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
    { i: { title: 't', request: 'r', files: manifest } },
    userToken,
  );
  const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
  return createTask(api.server.resources, {
    jobId,
    kind: 'RUN',
    name: 'run',
    codeVersionId: r.data.createJob.originalCode.id,
    command,
    requirements: { workload: 'shell' },
  });
}
const taskStatus = async (id: string) => (await prisma.task.findUniqueOrThrow({ where: { id } })).status;
const firstLog = async (taskId: string) => {
  const a = await prisma.attempt.findFirstOrThrow({ where: { taskId }, orderBy: { number: 'desc' } });
  return (await prisma.logChunk.findFirstOrThrow({ where: { attemptId: a.id }, orderBy: { seq: 'asc' } })).text;
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a machine without bubblewrap', () => {
  it('a contributor worker refuses to start with one sentence (auto and bwrap); nothing reaches the API', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'refuse-'));
    for (const mode of [[], ['--sandbox', 'auto'], ['--sandbox', 'bwrap']]) {
      const r = await run(process.execPath, [bin, '--server', api.url, '--name', 'refuses', '--data-dir', dataDir, ...mode], {
        env: { PATH: noBwrap, CHATGPU_WORKER_TOKEN: workerToken, HOME: dataDir },
      }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(
        mode[1] === 'bwrap'
          ? '--sandbox bwrap requested but unavailable: bwrap is not installed.'
          : "This worker will not run other people's tasks without a sandbox (bwrap is not installed): install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`), or start it with --sandbox none to run them without isolation at your own risk.",
      );
    }
    expect(await prisma.worker.count({ where: { name: 'refuses' } })).toBe(0);
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("--sandbox none: starts, and says so on its capabilities, in `status` and in each attempt's first log line; it takes anyone's task", async () => {
    const w = await startWorker(api.url, workerToken, 'no-sandbox', ['--sandbox', 'none', '--python', '/usr/bin/python3'], {
      PATH: noBwrap,
    });
    expect(w.output()).toMatch(/WARNING: --sandbox none: tasks of other users run as plain processes/);
    const row = await prisma.worker.findFirstOrThrow({ where: { name: 'no-sandbox' } });
    expect(row.capabilities).toMatchObject({ sandbox: 'none', sandboxReason: expect.stringMatching(/^WARNING: --sandbox none/) });
    expect(row.capabilities).not.toHaveProperty('ownJobsOnly');
    const status = JSON.parse((await run(process.execPath, [bin, 'status', '--data-dir', w.dataDir])).stdout) as { sandbox: string };
    expect(status.sandbox).toBe('none (--sandbox none: tasks of anyone run without isolation)');
    const theirs = await queueTask(stranger.token, 'echo ran');
    await waitFor(async () => (await taskStatus(theirs.id)) === 'SUCCEEDED', 60_000, "the stranger's task");
    expect(await firstLog(theirs.id)).toBe(
      "worker: NO SANDBOX (--sandbox none, its owner's choice): this task runs as a plain process with the worker's user's access to files and network.",
    );
    await w.stop();
  }, 90_000);

  it("the local worker as npm start starts it: one sentence, then only the local user's own jobs, each saying it ran without a sandbox", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'npm-start-'));
    const lines: string[] = [];
    const stop = await startLocalWorker({
      serverUrl: api.url,
      token: workerToken,
      dataDir,
      installSandbox: 'never',
      log: (l) => lines.push(l),
      env: { ...process.env, PATH: noBwrap },
    });
    try {
      expect(lines).toEqual([
        expect.stringMatching(/^The local worker has no sandbox \(bubblewrap is not installed\), so it runs only your own jobs/),
      ]);
      const local = await waitFor(
        () => prisma.worker.findFirst({ where: { name: 'local', status: 'ONLINE' } }),
        60_000,
        'the local worker online',
      );
      expect(local.capabilities).toMatchObject({ sandbox: 'none', ownJobsOnly: true });
      const theirs = await queueTask(stranger.token, 'echo theirs');
      const mine = await queueTask(owner.token, 'echo mine');
      await waitFor(async () => (await taskStatus(mine.id)) === 'SUCCEEDED', 60_000, "the owner's task");
      expect(await firstLog(mine.id)).toMatch(/^worker: NO SANDBOX: this worker has none, so it runs only its owner's own jobs/);
      // The stranger's task, queued first, was never leased by it.
      expect(await taskStatus(theirs.id)).toBe('QUEUED');
      expect(await prisma.attempt.count({ where: { taskId: theirs.id } })).toBe(0);
      await api.gql(
        `mutation($id: ID!) { cancelJob(id: $id) { __typename } }`,
        { id: Buffer.from(`Job:${theirs.jobId}`).toString('base64') },
        stranger.token,
      );
    } finally {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('no leftovers', () => {
  it('what a task left running ends with its attempt; after a SIGKILL of the worker, its processes and spool are gone at the next start', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'leftovers-'));
    const args = [
      bin,
      '--server',
      api.url,
      '--name',
      'leftovers',
      '--data-dir',
      dataDir,
      '--sandbox',
      'none',
      '--python',
      '/usr/bin/python3',
    ];
    const env = { ...process.env, CHATGPU_WORKER_TOKEN: workerToken };
    const first = spawnProc(process.execPath, args, { env });
    await first.waitFor(/connected to .* as worker/, 60_000);

    // An attempt that ended: the background sleep it started is gone with it.
    const ended = await queueTask(owner.token, 'sleep 300 >/dev/null 2>&1 & echo "bg $!"');
    await waitFor(async () => (await taskStatus(ended.id)) === 'SUCCEEDED', 60_000, 'the first task');
    const a1 = await prisma.attempt.findFirstOrThrow({ where: { taskId: ended.id } });
    const bg = Number((await prisma.logChunk.findFirstOrThrow({ where: { attemptId: a1.id, text: { startsWith: 'bg ' } } })).text.slice(3));
    expect(await waitFor(async () => !alive(bg), 10_000, 'the background process of the ended attempt gone')).toBe(true);
    expect(readdirSync(path.join(dataDir, 'runs'))).toEqual([]);

    // A running attempt when the worker is killed outright: its processes outlive it (no sandbox).
    const running = await queueTask(owner.token, 'sleep 300 >/dev/null 2>&1 & echo "bg $!"; sleep 300');
    const a2 = await waitFor(
      () => prisma.attempt.findFirst({ where: { taskId: running.id, status: 'RUNNING' } }),
      60_000,
      'the second task running',
    );
    const bg2 = Number(
      (
        await waitFor(() => prisma.logChunk.findFirst({ where: { attemptId: a2.id, text: { startsWith: 'bg ' } } }), 30_000, 'its log line')
      ).text.slice(3),
    );
    const record = JSON.parse(readFileSync(path.join(dataDir, 'runs', `${a2.id}.json`), 'utf8')) as { pid: number };
    expect(existsSync(path.join(dataDir, 'spool', `${a2.id}.log`))).toBe(true);
    await first.stop('SIGKILL');
    expect(alive(record.pid) && alive(bg2)).toBe(true);

    const second = spawnProc(process.execPath, args, { env });
    await second.waitFor(/cleaned up after 1 attempt\(s\) an earlier run of this worker left behind \(ended the processes of 1\)/, 60_000);
    expect(await waitFor(async () => !alive(record.pid) && !alive(bg2), 10_000, "the killed worker's task processes gone")).toBe(true);
    expect(readdirSync(path.join(dataDir, 'spool'))).toEqual([]);
    expect(readdirSync(path.join(dataDir, 'runs'))).toEqual([]);
    expect(existsSync(path.join(dataDir, 'attempts', a2.id))).toBe(false);
    // A second worker on the same data folder would take the first one's runs for leftovers: it refuses.
    const third = await run(process.execPath, args, { env, timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(third).toEqual({
      code: 1,
      stderr: `Another worker is running with data directory ${dataDir}: stop it first, or give this one its own --data-dir.\n`,
    });
    await second.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 150_000);
});
