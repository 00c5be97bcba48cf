/**
 * The setup phase end to end: a real API, real `chatgpu-worker` processes and real pip against a
 * package index on 127.0.0.1 serving wheels built by the test (no internet). Tasks are created
 * directly with `requirements.setup.pip`, as the planner does for packages the workers lack.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempPipIndex } from '../../worker/test/pipIndex.js';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const PY = ['--python', '/usr/bin/python3'];
const FAST = { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '10', WORKER_OFFLINE_SEC: '10', RETRY_BASE_SEC: '0' };
const api: TestApi = await startTestApi(FAST, { scheduler: true });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "lab"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const workerToken: string = wt.data.createWorkerToken.token;
const prisma = api.server.db.prisma;
const index = await tempPipIndex();

async function newJob(files: Record<string, string>) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
    { i: { title: 't', request: 'r', files: manifest } },
    user.token,
  );
  const gid: string = r.data.createJob.id;
  return { jobId: Buffer.from(gid, 'base64').toString().split(':')[1]!, codeVersionId: r.data.createJob.originalCode.id as string };
}

/** The full name of the env whose name starts with `h8` (log lines show 8 characters). */
function envHashOf(dataDir: string, h8: string): string {
  return readdirSync(path.join(dataDir, 'envs')).find((n) => n.startsWith(h8) && !n.includes('.'))!;
}

async function finished(taskId: string) {
  return waitFor(
    async () => {
      const t = await prisma.task.findUniqueOrThrow({ where: { id: taskId } });
      return ['SUCCEEDED', 'FAILED'].includes(t.status) ? t : null;
    },
    90_000,
    'task finished',
  );
}

async function attemptLogs(taskId: string) {
  const attempt = await prisma.attempt.findFirstOrThrow({ where: { taskId }, orderBy: { number: 'desc' } });
  const logs = await prisma.logChunk.findMany({ where: { attemptId: attempt.id }, orderBy: { seq: 'asc' } });
  return { attempt, logs, text: logs.map((l) => `[${l.stream}] ${l.text}`).join('\n') };
}

describe('setup phase (real API, real worker, local package index)', () => {
  it('installs a missing package before the run, reuses the environment for the next task, fails DEPENDENCY on an upgrade of torch/numpy', async () => {
    const w = await startWorker(api.url, workerToken, 'installer', [...PY, '--pip-index-url', index.url, '--env-cache-mb', '512']);
    const row = await waitFor(() => prisma.worker.findFirst({ where: { name: 'installer', status: 'ONLINE' } }), 10_000, 'worker online');
    const caps = row.capabilities as {
      install: { enabled: boolean; index: string | null };
      pythons: { path: string; modules: string[] }[];
    };
    expect(caps.install).toEqual({ enabled: true, index: index.url });
    expect(caps.pythons[0]!.modules).toEqual(expect.arrayContaining(['numpy', 'torch']));
    expect(caps.pythons[0]!.modules).not.toContain('chatgpu_testpkg');

    const job = await newJob({
      'train.py': [
        'import socket, sys, torch, chatgpu_testpkg',
        'print("VALUE", chatgpu_testpkg.VALUE)',
        'print("TORCH", torch.__file__)',
        'print("PREFIX", sys.prefix)',
        'try:',
        `    socket.create_connection(("127.0.0.1", ${index.port}), timeout=5)`,
        '    print("NETWORK reached")',
        'except OSError as e:',
        '    print("NETWORK", type(e).__name__)',
      ].join('\n'),
    });
    const setup = { workload: 'python' as const, setup: { pip: ['chatgpu-testpkg==0.1'] } };
    const first = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'first',
      codeVersionId: job.codeVersionId,
      command: 'python train.py',
      requirements: setup,
    });
    expect((await finished(first.id)).status).toBe('SUCCEEDED');
    const one = await attemptLogs(first.id);
    console.log(one.text);
    expect(one.logs.some((l) => l.stream === 'system' && l.text === 'setup: Successfully installed chatgpu-testpkg-0.1')).toBe(true);
    const created = one.logs.find((l) => /^worker: environment [0-9a-f]{8} created in \d+\.\ds/.test(l.text));
    expect(created).toBeTruthy();
    const h8 = /environment ([0-9a-f]{8})/.exec(created!.text)![1]!;
    const stdout = one.logs.filter((l) => l.stream === 'stdout').map((l) => l.text);
    expect(stdout).toContain('VALUE from the local index');
    expect(stdout).toContain('TORCH /usr/lib/python3/dist-packages/torch/__init__.py');
    // the run's python is the env's (its bin first on PATH), kept in the worker's data directory
    expect(stdout.find((l) => l.startsWith('PREFIX '))).toBe(`PREFIX ${path.join(w.dataDir, 'envs', envHashOf(w.dataDir, h8))}`);
    // the setup fetched from 127.0.0.1; the run itself could not reach it
    expect(index.requests.some((r) => r.includes('chatgpu_testpkg-0.1-py3-none-any.whl'))).toBe(true);
    expect(stdout).toContain('NETWORK ConnectionRefusedError');

    const fetched = index.requests.length;
    const second = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'second',
      codeVersionId: job.codeVersionId,
      command: 'python train.py',
      requirements: setup,
    });
    expect((await finished(second.id)).status).toBe('SUCCEEDED');
    const two = await attemptLogs(second.id);
    console.log(two.text);
    expect(two.logs.some((l) => new RegExp(`^worker: reusing environment ${h8} \\(created [^)]+\\) in \\d+\\.\\ds$`).test(l.text))).toBe(
      true,
    );
    expect(two.logs.some((l) => l.text.startsWith('setup: '))).toBe(false);
    expect(index.requests.length).toBe(fetched);
    expect(two.logs.filter((l) => l.stream === 'stdout').map((l) => l.text)).toContain('VALUE from the local index');

    const upgrade = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'upgrade',
      codeVersionId: job.codeVersionId,
      command: 'python train.py',
      requirements: { workload: 'python', setup: { pip: ['numpy>=99'] } },
      maxAttempts: 1,
    });
    expect((await finished(upgrade.id)).status).toBe('FAILED');
    const bad = await attemptLogs(upgrade.id);
    expect(bad.attempt.errorClass).toBe('DEPENDENCY');
    expect(bad.attempt.errorMessage).toMatch(/^pip install failed \(exit code 1\): [^]*numpy>=99/);
    expect(bad.logs.some((l) => /^worker: running/.test(l.text))).toBe(false);
    await w.stop();
  }, 240_000);

  it('a worker started with --no-install says so and is never given a task with a setup phase', async () => {
    const w = await startWorker(api.url, workerToken, 'plain', [...PY, '--no-install']);
    const row = await waitFor(() => prisma.worker.findFirst({ where: { name: 'plain', status: 'ONLINE' } }), 10_000, 'worker online');
    expect((row.capabilities as { install: unknown }).install).toEqual({ enabled: false, index: null });
    const job = await newJob({ 'a.py': 'print("plain")\n' });
    const needs = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'needs',
      codeVersionId: job.codeVersionId,
      command: 'python a.py',
      requirements: { workload: 'python', setup: { pip: ['chatgpu-testpkg==0.1'] } },
    });
    const plain = await createTask(api.server.resources, {
      jobId: job.jobId,
      kind: 'RUN',
      name: 'plain',
      codeVersionId: job.codeVersionId,
      command: 'python a.py',
      requirements: { workload: 'python' },
    });
    expect((await finished(plain.id)).status).toBe('SUCCEEDED');
    expect((await prisma.task.findUniqueOrThrow({ where: { id: needs.id } })).status).toBe('QUEUED');
    expect(await prisma.attempt.count({ where: { taskId: needs.id } })).toBe(0);
    await w.stop();
  }, 120_000);
});
