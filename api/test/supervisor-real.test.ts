/**
 * The run supervisor's response table provoked for real (issue 12): a real API with the
 * scheduler and the builtin planner and supervisor, real worker processes running real
 * Python in their sandbox.
 *   - A run killed by its worker's memory limit (OOM): retried on a worker whose limit is
 *     larger (the worker advertises the memory its tasks may use, not the machine's RAM), the
 *     finding saved, the follow-up "resolved" recorded by the next run.
 *   - A worker SIGKILLed twice under the same task: the first loss is the scheduler's routine
 *     retry, the second makes the supervisor reassign the task off that worker (it is back
 *     online, and not chosen), with the finding and the follow-up.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { createJobAt, waitFor } from './helpers/agents.js';
import { startTestApi } from './helpers/api.js';
import { createWorkerToken } from './helpers/protocolClient.js';
import { startWorker, type TestWorker } from './helpers/worker.js';

// Workers a test stopped are OFFLINE within 5 s, so the next test's work never waits for them.
const api = await startTestApi(
  { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '4', RETRY_BASE_SEC: '1', WORKER_OFFLINE_SEC: '5' },
  { scheduler: true, model: createBuiltinClient() },
);
const db = api.server.db.prisma;
const running: TestWorker[] = [];
afterAll(async () => {
  await Promise.all(running.map((w) => w.stop('SIGKILL').catch(() => {})));
});

async function worker(token: string, name: string, extra: string[] = []) {
  const w = await startWorker(api.url, token, name, ['--python', '/usr/bin/python3', ...extra]);
  running.push(w);
  return w;
}

const runningAttempt = (jobId: string, number: number) =>
  waitFor(
    `attempt ${number} running`,
    () => db.attempt.findFirst({ where: { task: { jobId, kind: 'RUN' }, number, status: 'RUNNING' }, include: { worker: true } }),
    90_000,
  );
const finalJob = (jobId: string) =>
  waitFor(
    'the job to end',
    async () => {
      const j = await db.job.findUniqueOrThrow({ where: { id: jobId } });
      return ['SUCCEEDED', 'FAILED', 'STOPPED', 'CANCELLED'].includes(j.status) ? j : null;
    },
    120_000,
  ).catch(async (err) => {
    const tasks = await db.task.findMany({
      where: { jobId },
      include: { attempts: { include: { worker: { select: { name: true, status: true } } } } },
    });
    const events = await db.jobEvent.findMany({ where: { jobId, kind: { not: 'agent.item' } }, orderBy: { id: 'asc' } });
    throw new Error(`${(err as Error).message}\n${JSON.stringify({ tasks, events: events.map((e) => [e.kind, e.payload]) }, null, 1)}`);
  });
const findingsOf = (jobId: string) => db.finding.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });

describe('the supervisor against real workers', () => {
  it(
    'a run killed by its memory limit: retried on the worker with the larger limit; finding and follow-up saved',
    { timeout: 240_000 },
    async () => {
      const user = await api.signUp();
      const small = await worker(await createWorkerToken(api, user.token, 'small'), 'small', ['--memory-limit', '300']);
      const main = [
        'import os, time',
        'time.sleep(10)', // time for the big worker to start (probing Python with torch takes seconds) before the OOM
        'blocks = [bytearray(64 << 20) for _ in range(10)]  # 640 MiB',
        "os.makedirs('outputs', exist_ok=True)",
        "open('outputs/done.txt', 'w').write('allocated %d MiB' % (64 * len(blocks)))",
        "print('allocated', 64 * len(blocks), 'MiB')",
      ].join('\n');
      const { jobId } = await createJobAt(api.url, user.token, { 'main.py': `${main}\n` }, 'run main.py');
      const first = await runningAttempt(jobId, 1);
      expect(first.worker.name).toBe('small');
      expect(first.worker.memoryMiB).toBe(300); // its limit, not the machine's RAM
      const big = await worker(await createWorkerToken(api, user.token, 'big'), 'big', ['--memory-limit', '1500']);

      const job = await finalJob(jobId);
      expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
      const attempts = await db.attempt.findMany({
        where: { task: { jobId, kind: 'RUN' } },
        orderBy: { number: 'asc' },
        include: { worker: true, task: true },
      });
      expect(attempts.map((a) => [a.worker.name, a.status, a.errorClass])).toEqual([
        ['small', 'FAILED', 'OOM'],
        ['big', 'SUCCEEDED', null],
      ]);
      expect(attempts[1]!.task.minMemoryMiB).toBe(1500);
      const actions = await db.action.findMany({ where: { jobId, kind: 'take_action' } });
      expect(
        actions.map((a) => [(a.input as { kind: string }).kind, (a.input as { minMemoryMiB?: number }).minMemoryMiB, a.status]),
      ).toEqual([['retry', 1500, 'DONE']]);
      const findings = await waitFor('the follow-up', async () => {
        const f = await findingsOf(jobId);
        return f.length === 2 ? f : null;
      });
      expect(findings[0]!.text).toMatch(/^Attempt 1 of run ran out of memory on small, which has 300 MiB/);
      expect(findings[0]!.data).toMatchObject({ remedy: 'retry_more_memory', errorClass: 'OOM' });
      expect(findings[1]!.text).toBe('Follow-up: resolved — after retry_more_memory, attempt 2 of run succeeded on big.');
      expect(big.output()).toMatch(/connected to .* as worker/);
      await small.stop('SIGTERM');
      await big.stop('SIGTERM');
    },
  );

  it(
    'a worker SIGKILLed twice under one task: the second loss is reassigned off it, onto another worker; finding and follow-up saved',
    { timeout: 240_000 },
    async () => {
      const user = await api.signUp();
      const token = await createWorkerToken(api, user.token, 'killed');
      let w1 = await worker(token, 'killed');
      const main = [
        'import os, time',
        'for i in range(20):',
        "    print('step', i, flush=True)",
        '    time.sleep(1)',
        "os.makedirs('outputs', exist_ok=True)",
        "open('outputs/done.txt', 'w').write('done')",
      ].join('\n');
      const { jobId } = await createJobAt(api.url, user.token, { 'main.py': `${main}\n` }, 'run main.py');

      const a1 = await runningAttempt(jobId, 1);
      expect(a1.worker.name).toBe('killed');
      await w1.stop('SIGKILL');
      w1 = await worker(token, 'killed'); // back at once: the only worker, it takes the retry
      const a2 = await runningAttempt(jobId, 2);
      expect(a2.workerId).toBe(a1.workerId);
      // Another worker online (idle: the task runs on killed) before the second loss, so the
      // supervisor sees where to move it (a worker takes seconds to start: probing Python with torch).
      const w2 = await worker(await createWorkerToken(api, user.token, 'other'), 'other');
      expect(await db.attempt.findFirst({ where: { id: a2.id } })).toMatchObject({ status: 'RUNNING' });
      await w1.stop('SIGKILL');
      w1 = await worker(token, 'killed'); // back again, and eligible: the supervisor keeps the task off it

      const job = await finalJob(jobId);
      expect(job.status).toBe('SUCCEEDED');
      const attempts = await db.attempt.findMany({
        where: { task: { jobId, kind: 'RUN' } },
        orderBy: { number: 'asc' },
        include: { worker: true, task: true },
      });
      expect(attempts.map((a) => [a.worker.name, ['LOST', 'STALE'].includes(a.status) ? 'lost' : a.status])).toEqual([
        ['killed', 'lost'],
        ['killed', 'lost'],
        ['other', 'SUCCEEDED'],
      ]);
      expect((attempts[2]!.task.requirements as { avoidWorkers?: string[] }).avoidWorkers).toEqual([a1.workerId]);
      const actions = await db.action.findMany({ where: { jobId, kind: 'take_action' } });
      expect(
        actions.map((a) => [(a.input as { kind: string }).kind, (a.input as { avoidWorkerIds?: string[] }).avoidWorkerIds, a.status]),
      ).toEqual([['reassign', [a1.workerId], 'DONE']]);
      const findings = await waitFor('the follow-up', async () => {
        const f = await findingsOf(jobId);
        return f.length === 2 ? f : null;
      });
      expect(findings[0]!.text).toBe('Task run failed 2 times on killed (LEASE_EXPIRED).');
      expect(findings[0]!.data).toMatchObject({ remedy: 'retry_elsewhere', errorClass: 'LEASE_EXPIRED' });
      expect(findings[1]!.text).toBe('Follow-up: resolved — after retry_elsewhere, attempt 3 of run succeeded on other.');
      await w1.stop('SIGTERM');
      await w2.stop('SIGTERM');
    },
  );
});
