/**
 * The worker network with real processes: real API, real PostgreSQL, real
 * `chatgpu-worker` processes running real Python.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createTask } from '../src/domain/jobs/createTask.js';
import { repoRoot, spawnProc } from './helpers/processes.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';
import { waitFor } from './helpers/waitFor.js';
import { subscribe } from './helpers/ws.js';

const run = promisify(execFile);
/** The first test probes every Python on the machine; the others name the interpreter (faster start). */
const PY = ['--python', '/usr/bin/python3'];
const FAST = { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '4', WORKER_OFFLINE_SEC: '4', RETRY_BASE_SEC: '0' };
const api: TestApi = await startTestApi(FAST, { scheduler: true });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "lab"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const workerToken: string = wt.data.createWorkerToken.token;
const prisma = api.server.db.prisma;

async function newJob(files: Record<string, string>) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
    { i: { title: 't', request: 'r', files: manifest } },
    user.token,
  );
  const gid: string = r.data.createJob.id;
  const jobId = Buffer.from(gid, 'base64').toString().split(':')[1]!;
  return { gid, jobId, codeVersionId: r.data.createJob.originalCode.id as string };
}

describe('worker network (real processes)', () => {
  it('a worker appears ONLINE with probed capabilities; pause (API and CLI) stops new work; OFFLINE when killed', async () => {
    const w = await startWorker(api.url, workerToken, 'alpha');
    const row = await waitFor(() => prisma.worker.findFirst({ where: { name: 'alpha', status: 'ONLINE' } }), 10_000, 'worker online');
    const caps = row.capabilities as any;
    expect(caps.cpu.cores).toBeGreaterThan(0);
    expect(caps.workloads).toContain('python');
    expect(caps.pythons.some((p: any) => p.torch)).toBe(true);
    const listed = await api.gql(`{ workers { edges { node { name status workloads } } } }`, {}, user.token);
    expect(listed.data.workers.edges[0].node).toMatchObject({ name: 'alpha', status: 'ONLINE' });

    const gid = Buffer.from(`Worker:${row.id}`).toString('base64');
    await api.gql(`mutation($id: ID!) { pauseWorker(id: $id) { __typename } }`, { id: gid }, user.token);
    await w.waitFor(/paused by its owner/, 5000);
    const job = await newJob({ 'a.py': 'print("x")\n' });
    const task = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'p',
      codeVersionId: job.codeVersionId,
      command: 'python a.py',
      requirements: { workload: 'python' },
    });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('QUEUED');

    await api.gql(`mutation($id: ID!) { resumeWorker(id: $id) { __typename } }`, { id: gid }, user.token);
    await waitFor(
      async () => (await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status === 'SUCCEEDED',
      30_000,
      'task after resume',
    );

    // Pause from the machine itself.
    const { stdout } = await run(process.execPath, [
      path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs'),
      'pause',
      '--data-dir',
      w.dataDir,
    ]);
    expect(JSON.parse(stdout).status).toBe('PAUSED');
    expect((await prisma.worker.findUniqueOrThrow({ where: { id: row.id } })).status).toBe('PAUSED');
    await run(process.execPath, [path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs'), 'resume', '--data-dir', w.dataDir]);

    await w.stop('SIGKILL');
    await waitFor(
      async () => (await prisma.worker.findUniqueOrThrow({ where: { id: row.id } })).status === 'OFFLINE',
      15_000,
      'worker offline',
    );
  }, 150_000);

  it('runs a Python task: ordered complete logs (database and subscription), metrics, downloadable outputs', async () => {
    const w = await startWorker(api.url, workerToken, 'beta', PY);
    const job = await newJob({
      'train.py': [
        'import os, sys',
        'from chatgpu.metrics import log',
        'for i in range(3000):',
        '    print(f"line {i}")',
        '    if i % 500 == 0:',
        '        log(step=i, loss=1.0 / (i + 1))',
        'print("to stderr", file=sys.stderr)',
        'with open(os.path.join(os.environ["CHATGPU_OUTPUT_DIR"], "model.bin"), "wb") as f:',
        '    f.write(bytes(range(256)) * 40)',
        'open("report.txt", "w").write("done")',
      ].join('\n'),
    });
    const sub = subscribe(
      api.url,
      user.token,
      `subscription($id: ID!) { jobEvents(jobId: $id) { __typename ... on LogLinesEvent { lines { seq text } } } }`,
      { id: job.gid },
    );
    await new Promise((r) => setTimeout(r, 200));
    const task = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'train',
      codeVersionId: job.codeVersionId,
      command: 'python train.py',
      requirements: { workload: 'torch-cpu', outputs: ['report.txt'] },
    });
    const done = await waitFor(
      async () => {
        const t = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
        return ['SUCCEEDED', 'FAILED'].includes(t.status) ? t : null;
      },
      60_000,
      'task done',
    );
    expect(done.status).toBe('SUCCEEDED');
    const attempt = await prisma.attempt.findFirstOrThrow({ where: { taskId: task.id } });
    const logs = await prisma.logChunk.findMany({ where: { attemptId: attempt.id }, orderBy: { seq: 'asc' } });
    const stdout = logs.filter((l) => l.stream === 'stdout' && l.text.startsWith('line ')).map((l) => l.text);
    expect(stdout).toEqual(Array.from({ length: 3000 }, (_, i) => `line ${i}`));
    expect(logs.map((l) => l.seq)).toEqual(logs.map((_, i) => i));
    expect(logs.some((l) => l.stream === 'stderr' && l.text === 'to stderr')).toBe(true);
    await sub.until(
      (r) => r.flatMap((x) => x.jobEvents.lines ?? []).filter((l: any) => l.text.startsWith('line ')).length === 3000,
      15_000,
    );
    const viaSub = sub.results
      .flatMap((x) => x.jobEvents.lines ?? [])
      .filter((l: any) => l.text.startsWith('line '))
      .map((l: any) => l.text);
    expect(viaSub).toEqual(stdout);
    await sub.close();

    const points = await prisma.metricPoint.findMany({ where: { attemptId: attempt.id, name: 'loss' }, orderBy: { seq: 'asc' } });
    expect(points.map((p) => p.step)).toEqual([0, 500, 1000, 1500, 2000, 2500]);
    expect(points[1]!.value).toBeCloseTo(1 / 501);

    const outputs = attempt.outputs as { path: string; sha256: string; size: number }[];
    expect(outputs.map((o) => o.path)).toEqual(['outputs/model.bin', 'report.txt']);
    const model = await api.getBlob(outputs[0]!.sha256, user.token);
    expect(model.bytes.equals(Buffer.concat(Array.from({ length: 40 }, () => Buffer.from(Array.from({ length: 256 }, (_, i) => i)))))).toBe(
      true,
    );
    expect((await api.getBlob(outputs[1]!.sha256, user.token)).bytes.toString()).toBe('done');
    expect(Number((await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } })).costCad)).toBeGreaterThan(0);
    await w.stop();
  }, 150_000);

  it('SIGKILL mid-task: the attempt is LOST within lease + tick and the task succeeds on another worker with a new attempt and token', async () => {
    const a = await startWorker(api.url, workerToken, 'gamma', PY);
    const job = await newJob({ 'slow.py': 'import time\nprint("start", flush=True)\ntime.sleep(3)\nprint("end")\n' });
    const task = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'slow',
      codeVersionId: job.codeVersionId,
      command: 'python slow.py',
      requirements: { workload: 'python' },
    });
    const first = await waitFor(
      () => prisma.attempt.findFirst({ where: { taskId: task.id, status: 'RUNNING' } }),
      20_000,
      'first attempt running',
    );
    await a.stop('SIGKILL');
    const killedAt = Date.now();
    await waitFor(async () => (await prisma.attempt.findUniqueOrThrow({ where: { id: first.id } })).status === 'LOST', 15_000, 'LOST');
    expect(Date.now() - killedAt).toBeLessThan((4 + 1 + 2) * 1000); // lease + tick + slack
    const b = await startWorker(api.url, workerToken, 'delta', PY);
    await waitFor(
      async () => (await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status === 'SUCCEEDED',
      30_000,
      'retried task succeeded',
    );
    const attempts = await prisma.attempt.findMany({ where: { taskId: task.id }, orderBy: { number: 'asc' }, include: { worker: true } });
    expect(attempts.map((x) => [x.status, x.worker.name])).toEqual([
      ['LOST', 'gamma'],
      ['SUCCEEDED', 'delta'],
    ]);
    expect(attempts[1]!.id).not.toBe(attempts[0]!.id);
    expect(attempts[1]!.fencingToken).not.toBe(attempts[0]!.fencingToken);
    await b.stop();
  }, 150_000);

  it('a partitioned worker (SIGSTOP past its lease) has its late reports refused as stale, kills its run, and the accepted result is the other attempt’s', async () => {
    const a = await startWorker(api.url, workerToken, 'epsilon', PY);
    const job = await newJob({
      'work.py':
        'import time, os\nprint("begin", flush=True)\ntime.sleep(4)\nopen(os.path.join(os.environ["CHATGPU_OUTPUT_DIR"], "who.txt"), "w").write(os.environ["CHATGPU_ATTEMPT_ID"])\nprint("finished")\n',
    });
    const task = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'work',
      codeVersionId: job.codeVersionId,
      command: 'python work.py',
      requirements: { workload: 'python' },
    });
    const first = await waitFor(
      () => prisma.attempt.findFirst({ where: { taskId: task.id, status: 'RUNNING' } }),
      20_000,
      'running on epsilon',
    );
    process.kill(-a.child.pid!, 'SIGSTOP');
    await waitFor(
      async () => (await prisma.attempt.findUniqueOrThrow({ where: { id: first.id } })).status === 'LOST',
      15_000,
      'LOST while stopped',
    );
    const b = await startWorker(api.url, workerToken, 'zeta', PY);
    const done = await waitFor(
      async () => {
        const t = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
        return t.status === 'SUCCEEDED' ? t : null;
      },
      30_000,
      'success on zeta',
    );
    const accepted = JSON.stringify(done.result);
    process.kill(-a.child.pid!, 'SIGCONT');
    await a.waitFor(/stopping attempt .*|completion refused/, 15_000);
    await new Promise((r) => setTimeout(r, 3000));
    const firstNow = await prisma.attempt.findUniqueOrThrow({ where: { id: first.id } });
    expect(firstNow.status).toBe('STALE');
    expect(await prisma.staleReport.count({ where: { attemptId: first.id } })).toBeGreaterThan(0);
    const after = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(JSON.stringify(after.result)).toBe(accepted);
    expect((after.result as any).attemptId).not.toBe(first.id);
    const who = (after.result as any).outputs.find((o: any) => o.path === 'outputs/who.txt');
    expect((await api.getBlob(who.sha256, user.token)).bytes.toString()).toBe((after.result as any).attemptId);
    await a.stop();
    await b.stop();
  }, 150_000);

  it('a task whose requirements no worker meets stays queued and says why; a pinned task waits for its worker', async () => {
    const w = await startWorker(api.url, workerToken, 'eta', PY);
    const job = await newJob({ 'g.py': 'print(1)\n' });
    const gpu = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'gpu',
      codeVersionId: job.codeVersionId,
      command: 'python g.py',
      requirements: { workload: 'torch-cuda', accelVendor: 'nvidia', minAccelMemoryMiB: 16384 },
    });
    const other = await prisma.worker.create({
      data: {
        ownerId: user.userId,
        tokenId: (await prisma.workerToken.findFirstOrThrow()).id,
        name: 'away',
        workloads: ['python', 'shell'],
        status: 'OFFLINE',
      },
    });
    const pinned = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'pinned',
      codeVersionId: job.codeVersionId,
      command: 'python g.py',
      requirements: { workload: 'python' },
      pinnedWorkerId: other.id,
    });
    const reason = await waitFor(
      async () => (await prisma.task.findUniqueOrThrow({ where: { id: gpu.id } })).statusReason,
      10_000,
      'gpu reason',
    );
    expect(reason).toMatch(/No online worker can run this: it needs torch-cuda, nvidia accelerator, ≥ 16 GiB accelerator memory/);
    expect(reason).toMatch(/eta/);
    const pr = await waitFor(
      async () => (await prisma.task.findUniqueOrThrow({ where: { id: pinned.id } })).statusReason,
      10_000,
      'pinned reason',
    );
    expect(pr).toMatch(/Waiting for its pinned worker away/);
    const ev = await api.gql(
      `query($id: ID!) { job(id: $id) { tasks { name status statusReason } events { kind payload } } }`,
      { id: job.gid },
      user.token,
    );
    expect(ev.data.job.tasks.find((t: any) => t.name === 'gpu')).toMatchObject({ status: 'QUEUED' });
    expect(ev.data.job.events.some((e: any) => e.kind === 'task.status' && /No online worker/.test(e.payload.reason))).toBe(true);
    expect((await prisma.task.findUniqueOrThrow({ where: { id: pinned.id } })).status).toBe('QUEUED');
    await w.stop();
  }, 150_000);
});

describe('the worker token never needs the command line', () => {
  const cmdline = async (pid: number) => (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');

  it('from a 0600 file (--token-file): connects and runs work; the token is not in its arguments', async () => {
    const w = await startWorker(api.url, workerToken, 'filed', PY, {}, { tokenFrom: 'file' });
    const args = await cmdline(w.child.pid!);
    expect(args).toContain('--token-file');
    expect(args.join(' ')).not.toContain(workerToken);
    expect(w.output()).not.toMatch(/warning/i);
    const job = await newJob({ 'f.py': 'print("from a token file")\n' });
    const task = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'f',
      codeVersionId: job.codeVersionId,
      command: 'python f.py',
      requirements: { workload: 'python' },
      pinnedWorkerId: (await prisma.worker.findFirstOrThrow({ where: { name: 'filed' } })).id,
    });
    await waitFor(
      async () => (await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status === 'SUCCEEDED',
      30_000,
      'task on the token-file worker',
    );
    await w.stop();
  }, 120_000);

  it('from CHATGPU_WORKER_TOKEN (the helper’s default): the token is not in its arguments; --token still works but warns', async () => {
    const w = await startWorker(api.url, workerToken, 'env-token', PY);
    expect((await cmdline(w.child.pid!)).join(' ')).not.toContain(workerToken);
    await w.stop();
    const legacy = spawnProc(process.execPath, [
      path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs'),
      '--server',
      api.url,
      '--token',
      workerToken,
      '--name',
      'legacy',
      ...PY,
      '--data-dir',
      await mkdtemp(path.join(tmpdir(), 'worker-legacy-')),
    ]);
    await legacy.waitFor(/connected to .* as worker/, 60_000);
    expect(legacy.output()).toContain('--token puts the worker token on the command line, where other local users can read it');
    await legacy.stop();
  }, 120_000);

  it('no token, an empty or missing token file → exit 2 with what to do, before connecting', async () => {
    const bin = path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs');
    const dir = await mkdtemp(path.join(tmpdir(), 'worker-notoken-'));
    const env = { ...process.env, CHATGPU_WORKER_TOKEN: '' };
    const empty = path.join(dir, 'empty');
    await writeFile(empty, '\n', { mode: 0o600 });
    for (const [extra, message] of [
      [[], /No worker token: pass --token-file PATH or set CHATGPU_WORKER_TOKEN/],
      [['--token-file', empty], /is empty/],
      [['--token-file', path.join(dir, 'missing')], /no such file/],
    ] as const) {
      const r = await run(process.execPath, [bin, '--server', api.url, ...extra, '--data-dir', dir], { env }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      expect(r.code, extra.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
