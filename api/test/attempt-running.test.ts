/**
 * An attempt is RUNNING once its program runs, not at the worker's next heartbeat: the worker
 * reports a started program at once (worker/src/session.ts `traced`). Heartbeats here are 30 s
 * apart, so an attempt seen RUNNING well before that was reported by the start, not the timer;
 * its start time is the program's, so the run's duration counts from there.
 */
import { expect, it } from 'vitest';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startTestApi } from './helpers/api.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const HEARTBEAT_SEC = 30;
const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: String(HEARTBEAT_SEC), LEASE_SEC: '120' }, { scheduler: true });
const user = await api.signUp();
const prisma = api.server.db.prisma;

it('a started program makes its attempt RUNNING at once, not at the next heartbeat', async () => {
  const wt = await api.gql(
    `mutation { createWorkerToken(input: {name: "starts"}) { ... on CreatedWorkerToken { token } } }`,
    {},
    user.token,
  );
  const w = await startWorker(api.url, wt.data.createWorkerToken.token, 'starts', ['--python', '/usr/bin/python3']);
  const files = [
    { path: 'run.py', sha256: (await api.putBlob('import time\nprint("started", flush=True)\ntime.sleep(8)\n', user.token)).sha256 },
  ];
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
    { i: { title: 't', request: 'r', files } },
    user.token,
  );
  const jobId = Buffer.from(r.data.createJob.id as string, 'base64')
    .toString()
    .split(':')[1]!;
  const task = await createTask(api.server.resources, {
    jobId,
    kind: 'RUN',
    name: 'run',
    codeVersionId: r.data.createJob.originalCode.id,
    command: 'python run.py',
    requirements: { workload: 'python' },
  });

  const leased = await waitFor(() => prisma.attempt.findFirst({ where: { taskId: task.id } }), 30_000, 'the claim');
  const running = await waitFor(
    async () => {
      const a = await prisma.attempt.findUniqueOrThrow({ where: { id: leased.id } });
      return a.status === 'RUNNING' ? a : null;
    },
    20_000,
    'RUNNING',
  );
  // Seen while the program still sleeps, long before a heartbeat could have said it.
  expect(running.startedAt).not.toBeNull();
  expect(running.startedAt!.getTime() - leased.createdAt.getTime()).toBeLessThan((HEARTBEAT_SEC - 10) * 1000);
  const line = await waitFor(
    () => prisma.logChunk.findFirst({ where: { attemptId: leased.id, text: 'started' } }),
    20_000,
    'the first line',
  );
  expect(line).toBeTruthy();
  await w.stop();
}, 90_000);
