/**
 * The worker installed under /tmp (a checkout in any folder, rule 9): the sandbox's private /tmp
 * used to hide the worker's own Python helpers there, so metrics silently disappeared. A real
 * worker run from a copy of worker/ under /tmp runs a sandboxed task that imports the helpers,
 * reports metrics and writes an output.
 */
import { cpSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startTestApi } from './helpers/api.js';
import { repoRoot } from './helpers/processes.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const checkout = mkdtempSync(path.join(realpathSync(tmpdir()), 'chatgpu-checkout-'));
cpSync(path.join(repoRoot, 'worker'), path.join(checkout, 'worker'), {
  recursive: true,
  filter: (src) => !src.includes(`${path.sep}node_modules`),
});
symlinkSync(path.join(repoRoot, 'node_modules'), path.join(checkout, 'node_modules'));

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "tmp"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const worker = await startWorker(
  api.url,
  wt.data.createWorkerToken.token,
  'from-tmp',
  ['--python', '/usr/bin/python3', '--sandbox', 'bwrap'],
  {},
  { root: checkout },
);

describe('a worker installed under /tmp', () => {
  it('runs a sandboxed task whose metrics (through the worker’s helpers) and outputs arrive', async () => {
    expect(worker.child.spawnargs.join(' ')).toContain(`${checkout}/worker/bin/chatgpu-worker.mjs`);
    const script =
      'from chatgpu.metrics import log\nfor i in range(3):\n    log(step=i, loss=1.0 / (i + 1))\nopen("outputs/done.txt", "w").write("ok")\n';
    const manifest = [{ path: 'm.py', sha256: (await api.putBlob(script, user.token)).sha256 }];
    const r = await api.gql(
      `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
      { i: { title: 't', request: 'r', files: manifest } },
      user.token,
    );
    const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
    const task = await createTask(api.server.resources, {
      jobId,
      kind: 'RUN',
      name: 'm',
      codeVersionId: r.data.createJob.originalCode.id,
      command: 'python m.py',
      requirements: { workload: 'python' },
    });
    const done = await waitFor(
      async () => {
        const t = await api.server.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
        return ['SUCCEEDED', 'FAILED'].includes(t.status) ? t : null;
      },
      60_000,
      'the task',
    );
    expect(done.status, done.statusReason ?? '').toBe('SUCCEEDED');
    const attempt = await api.server.db.prisma.attempt.findFirstOrThrow({ where: { taskId: task.id } });
    const logs = await api.server.db.prisma.logChunk.findMany({ where: { attemptId: attempt.id }, orderBy: { seq: 'asc' } });
    expect(logs[0]!.text).toMatch(/sandbox bwrap/);
    // No --memory-limit given: the default (80 % of the RAM shared among the slots) applies.
    expect(logs[0]!.text).toMatch(/prlimit --data \d+ MiB/);
    const points = await api.server.db.prisma.metricPoint.findMany({
      where: { attemptId: attempt.id, name: 'loss' },
      orderBy: { step: 'asc' },
    });
    expect(points.map((p) => [p.step, p.value])).toEqual([
      [0, 1],
      [1, 0.5],
      [2, 1 / 3],
    ]);
    expect((done.result as any).outputs.map((o: any) => o.path)).toEqual(['outputs/done.txt']);
  });
});
