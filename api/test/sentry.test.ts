/**
 * Telemetry: with SENTRY_DSN pointing at a local collector, the real worker's real
 * @sentry/node client sends a `task.execute` transaction tagged job, task, worker and
 * attempt. Without a DSN nothing is sent (the other suites run that way).
 */
import { describe, expect, it } from 'vitest';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startTestApi } from './helpers/api.js';
import { startSentryCollector } from './helpers/sentryCollector.js';
import { startWorker } from './helpers/worker.js';

const collector = await startSentryCollector();
const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "s"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);

describe('Sentry telemetry', () => {
  it('the worker sends a task.execute transaction with the four ids as tags', async () => {
    const w = await startWorker(api.url, wt.data.createWorkerToken.token, 'traced', ['--python', '/usr/bin/python3'], { SENTRY_DSN: collector.dsn });
    const blob = await api.putBlob('print("traced")\n', user.token);
    const r = await api.gql(`mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`, { i: { title: 't', request: 'r', files: [{ path: 'a.py', sha256: blob.sha256 }] } }, user.token);
    const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
    const task = await createTask(api.server.resources, { jobId, kind: 'RUN', name: 'traced', codeVersionId: r.data.createJob.originalCode.id, command: 'python a.py', requirements: { workload: 'python' } });
    const prisma = api.server.db.prisma;
    for (let i = 0; i < 300 && (await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status !== 'SUCCEEDED'; i++) await new Promise((res) => setTimeout(res, 100));
    const attempt = await prisma.attempt.findFirstOrThrow({ where: { taskId: task.id } });
    await w.stop('SIGTERM'); // flushes the client
    const tx = collector.items.find((i) => i.header.type === 'transaction' && i.payload?.transaction === 'task.execute');
    expect(tx, `items: ${collector.items.map((i) => i.header.type).join(',')}`).toBeTruthy();
    expect(tx!.payload.tags).toMatchObject({ job: jobId, task: task.id, worker: attempt.workerId, attempt: attempt.id });
    expect(tx!.payload.contexts.trace.op).toBe('task.execute');
  });
});
