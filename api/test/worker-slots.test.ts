/**
 * A root worker with two slots runs two attempts at once as two different unprivileged uids
 * (worker/src/sandbox.ts taskUserForSlot): each has its own pids budget and cannot signal the
 * other's processes. Real API, real worker, real bwrap.
 */
import { describe, expect, it } from 'vitest';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startTestApi } from './helpers/api.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "two"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);

describe('two slots', () => {
  it('run their attempts at the same time as different uids (root worker), or as the worker itself', { timeout: 90_000 }, async () => {
    const script = 'import os, time\nopen("outputs/uid.txt", "w").write(str(os.getuid()))\ntime.sleep(3)\n';
    const r = await api.gql(
      `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
      { i: { title: 't', request: 'r', files: [{ path: 'u.py', sha256: (await api.putBlob(script, user.token)).sha256 }] } },
      user.token,
    );
    const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
    const tasks: { id: string }[] = [];
    for (const name of ['a', 'b'])
      tasks.push(
        await createTask(api.server.resources, {
          jobId,
          kind: 'RUN',
          name,
          codeVersionId: r.data.createJob.originalCode.id,
          command: 'python u.py',
          requirements: { workload: 'python' },
        }),
      );
    // Both are queued before the worker starts: it claims them together, into its two slots.
    await startWorker(api.url, wt.data.createWorkerToken.token, 'two-slots', ['--python', '/usr/bin/python3', '--slots', '2']);
    const done = await waitFor(
      async () => {
        const ts = await api.server.db.prisma.task.findMany({ where: { id: { in: tasks.map((t) => t.id) } } });
        return ts.every((t) => ['SUCCEEDED', 'FAILED'].includes(t.status)) ? ts : null;
      },
      60_000,
      'both tasks',
    );
    expect(done.map((t) => t.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    const attempts = await api.server.db.prisma.attempt.findMany({ where: { taskId: { in: tasks.map((t) => t.id) } } });
    // They were held at the same time: each was leased before the other finished.
    const [x, y] = attempts;
    expect(
      x!.createdAt < y!.finishedAt! && y!.createdAt < x!.finishedAt!,
      JSON.stringify(attempts.map((a) => [a.createdAt, a.finishedAt])),
    ).toBe(true);
    const uids = await Promise.all(
      done.map(async (t) => {
        const out = (t.result as { outputs: { path: string; sha256: string }[] }).outputs.find((o) => o.path === 'outputs/uid.txt')!;
        const res = await api.getBlob(out.sha256, user.token);
        return res.status === 200 ? res.bytes.toString() : `HTTP ${res.status}`;
      }),
    );
    if (process.getuid?.() === 0) {
      expect(new Set(uids).size).toBe(2);
      expect(uids.map(Number).every((u) => u !== 0)).toBe(true);
    } else expect(uids).toEqual([String(process.getuid!()), String(process.getuid!())]);
  });
});
