/**
 * A service plan with setup steps (`before`), through the job engine and the worker protocol
 * (a protocol-level worker; api/test/services-setup-e2e.test.ts runs a real one): the Service row
 * exists from the plan's acceptance, held by the step's task and answering 503; the step's
 * products reach the SERVICE task as inputs at their paths and the row moves to it; a step that
 * does not produce what it declared fails the job naming it, and no service starts; the owner
 * stopping the service during the setup cancels the step and the job.
 */
import { describe, expect, it } from 'vitest';
import { acceptPlan } from '../src/domain/jobs/acceptPlan.js';
import { advanceJobAfterTask } from '../src/domain/jobs/advanceJob.js';
import { commitTransition, transition } from '../src/domain/jobs/jobLifecycle.js';
import type { PlanInput } from '../src/domain/jobs/planSchema.js';
import { rotateServiceToken, stopService } from '../src/domain/services/services.js';
import { startTestApi } from './helpers/api.js';
import { createJobWithFile, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';

const api = await startTestApi({ LEASE_SEC: '600', WORKER_OFFLINE_SEC: '86400' });
const prisma = api.server.db.prisma;
const r = api.server.resources;
const user = await api.signUp();
const w = new ProtocolWorker(api, await createWorkerToken(api, user.token), 'setup');
await w.hello();

const plan: PlanInput = {
  summary: 'Serve it after init-db.',
  asks: [],
  steps: ['init-db', 'serve'],
  command: 'python -m flask --app flaskr run --host 127.0.0.1 --port "$PORT"',
  hardware: { workload: 'python' },
  outputs: ['outputs'],
  acceptance: { requiredFiles: [], metrics: [] },
  service: { readiness: { path: '/' } },
  before: [{ name: 'init-db', command: 'flask --app flaskr init-db', produces: ['instance/flaskr.sqlite'] }],
};

async function accepted() {
  const job = await createJobWithFile(api, user.token);
  await transition(r, job.jobId, 'startPlanning', { reason: 'test' });
  const a = await commitTransition(r, job.jobId, (tx, now) => acceptPlan(tx, now, { jobId: job.jobId, author: 'scripted', plan }));
  return { jobId: job.jobId, stepTaskId: a.taskId! };
}

const status = async (jobId: string) =>
  prisma.job.findUniqueOrThrow({ where: { id: jobId }, select: { status: true, statusReason: true } });

describe('a service plan with setup steps', () => {
  it("the step runs first, holding the service (503); its products become the SERVICE task's inputs and the service moves to it", async () => {
    const { jobId, stepTaskId } = await accepted();
    const step = await prisma.task.findUniqueOrThrow({ where: { id: stepTaskId } });
    expect(step).toMatchObject({ kind: 'RUN', name: 'step:init-db', command: 'flask --app flaskr init-db' });
    expect((step.requirements as { outputs: string[]; service?: unknown }).outputs).toEqual(['instance/flaskr.sqlite']);
    expect((step.requirements as { service?: unknown }).service).toBeUndefined();
    const service = await prisma.service.findFirstOrThrow({ where: { jobId } });
    expect(service.taskId).toBe(stepTaskId);
    const { token } = await rotateServiceToken(r, user.userId, jobId, { firstOnly: true });
    expect((await fetch(`${api.url}/svc/${service.slug}/`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(503);

    const [a] = await w.claim();
    expect(a?.task.id).toBe(stepTaskId);
    expect((await w.heartbeat([a!])).renewed).toEqual([a!.attemptId]);
    const db = await api.putBlob('SQLite format 3\0 (a database)', w.token, undefined, a!.attemptId);
    expect(await w.complete(a!, { exitCode: 0, outputs: [{ path: 'instance/flaskr.sqlite', sha256: db.sha256 }] })).toMatchObject({
      status: 'SUCCEEDED',
    });
    await advanceJobAfterTask(r, stepTaskId);
    await advanceJobAfterTask(r, stepTaskId); // a second caller queues nothing more

    const tasks = await prisma.task.findMany({ where: { jobId, kind: 'SERVICE' } });
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ name: 'service', command: plan.command, codeVersionId: step.codeVersionId, maxAttempts: 20 });
    expect((tasks[0]!.environment as { inputs: { path: string; sha256: string }[] }).inputs).toEqual([
      expect.objectContaining({ path: 'instance/flaskr.sqlite', sha256: db.sha256 }),
    ]);
    expect((tasks[0]!.requirements as { service: { readinessPath: string } }).service.readinessPath).toBe('/');
    expect((await prisma.service.findFirstOrThrow({ where: { jobId } })).taskId).toBe(tasks[0]!.id);
    expect((await status(jobId)).status).toBe('RUNNING');
    await stopService(r, user.userId, jobId);
  });

  it('a step that does not produce what it declared fails the job naming it; no service starts', async () => {
    const { jobId, stepTaskId } = await accepted();
    const [a] = await w.claim();
    expect(a?.task.id).toBe(stepTaskId);
    expect((await w.heartbeat([a!])).renewed).toEqual([a!.attemptId]);
    expect(await w.complete(a!, { exitCode: 0, outputs: [] })).toMatchObject({ status: 'SUCCEEDED' });
    await advanceJobAfterTask(r, stepTaskId);
    expect(await status(jobId)).toEqual({
      status: 'FAILED',
      statusReason: 'The pipeline step "init-db" finished but did not produce instance/flaskr.sqlite.',
    });
    expect(await prisma.task.count({ where: { jobId, kind: 'SERVICE' } })).toBe(0);
  });

  it('stopping the service during its setup cancels the step and the job (it was never ready)', async () => {
    const { jobId, stepTaskId } = await accepted();
    await stopService(r, user.userId, jobId);
    expect((await status(jobId)).status).toBe('CANCELLED');
    expect((await prisma.task.findUniqueOrThrow({ where: { id: stepTaskId } })).status).toBe('CANCELLED');
    expect(await prisma.task.count({ where: { jobId, kind: 'SERVICE' } })).toBe(0);
  });
});
