/**
 * No black holes (invariant 13), on real PostgreSQL through the worker protocol, the tick driven
 * with explicit instants (nothing sleeps):
 * - an infrastructure failure (the worker could not start the task: its launcher exited 127) is
 *   retried on another worker and not counted against maxAttempts; bounded by INFRA_RETRIES;
 *   the program's own exit 127 is still the user's failure; a lost lease after one is counted
 *   by the same rule (leases/retryOrFail.ts);
 * - a worker that reports itself UNHEALTHY claims nothing, says why, and claims again when healthy;
 * - the black-hole rule: failures on tasks of BLACK_HOLE_JOBS jobs that then succeeded elsewhere
 *   quarantine the worker, with the reason, for QUARANTINE_MIN; then it is ONLINE again and its
 *   old failures are not counted twice. One job's failures, or too few jobs, quarantine nothing.
 */
import { describe, expect, it } from 'vitest';
import { retryOrFail } from '../src/domain/leases/retryOrFail.js';
import { runTick } from '../src/scheduler/tick.js';
import { startTestApi } from './helpers/api.js';
import { addTask, createJobWithFile, createWorkerToken, ProtocolWorker, workerGid } from './helpers/protocolClient.js';

const api = await startTestApi({
  RETRY_BASE_SEC: '0',
  INFRA_RETRIES: '2',
  BLACK_HOLE_JOBS: '3',
  BLACK_HOLE_WINDOW_MIN: '60',
  QUARANTINE_MIN: '30',
});
const prisma = api.server.db.prisma;
const owner = await api.signUp();
const token = await createWorkerToken(api, owner.token);
const launcher127 = {
  exitCode: 127,
  errorClass: 'SANDBOX_ERROR',
  errorMessage: 'the worker could not start the program (exit code 127): the sandbox binary bwrap is missing',
};

async function setHealth(w: ProtocolWorker, healthy: boolean, reason: string | null) {
  const r = await w.gql(
    `mutation($w: ID!, $h: Boolean!, $r: String) { setWorkerHealth(workerId: $w, healthy: $h, reason: $r) { __typename ... on Worker { status statusReason } ... on Error { message } } }`,
    { w: w.workerId, h: healthy, r: reason },
  );
  return { ...r.data?.setWorkerHealth, errors: r.errors };
}

/** The owner's view (Workers page / GraphQL). */
async function ownersView(w: ProtocolWorker) {
  const r = await api.gql(
    `query($id: ID!) { worker(id: $id) { status statusReason quarantinedUntil } }`,
    { id: workerGid(w.workerId) },
    owner.token,
  );
  return r.data.worker as { status: string; statusReason: string | null; quarantinedUntil: string | null };
}

/** Drains the queue of anything earlier tests left (each test starts from no queued work). */
async function clearQueue() {
  await prisma.task.updateMany({ where: { status: { in: ['QUEUED', 'LEASED', 'RUNNING'] } }, data: { status: 'CANCELLED' } });
  await prisma.attempt.updateMany({ where: { status: { in: ['LEASED', 'RUNNING'] } }, data: { status: 'CANCELLED' } });
}

describe('infrastructure failures: retried elsewhere, not counted against the attempts', async () => {
  const broken = new ProtocolWorker(api, token, 'broken');
  const good = new ProtocolWorker(api, token, 'good');
  await broken.hello();
  await good.hello();
  const job = await createJobWithFile(api, owner.token);

  it('a launcher that exited 127 (SANDBOX_ERROR) requeues a task with maxAttempts 1; the retry on another worker succeeds', async () => {
    await clearQueue();
    const task = await addTask(api, job, { name: 'once', maxAttempts: 1 });
    const [a1] = await broken.claim();
    expect(a1!.task.id).toBe(task.id);
    expect((await broken.complete(a1!, launcher127)).status).toBe('FAILED');
    const queued = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(queued).toMatchObject({ status: 'QUEUED', attemptCount: 1, infraFailures: 1, maxAttempts: 1 });
    expect(queued.statusReason).toMatch(
      /failed on broken \(SANDBOX_ERROR: .*exit code 127.*\); retrying in 0s \(the worker failed, not the code: not counted/,
    );
    const [a2] = await good.claim();
    expect(a2).toMatchObject({ number: 2, task: { id: task.id } });
    expect((await good.complete(a2!, { exitCode: 0 })).status).toBe('SUCCEEDED');
    expect(await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({
      status: 'SUCCEEDED',
      attemptCount: 2,
      infraFailures: 1,
    });
  });

  it("the program's own exit 127 (a command that does not exist) is the user's failure: FAILED, not retried", async () => {
    await clearQueue();
    const task = await addTask(api, job, { name: 'typo', maxAttempts: 3, command: 'pyhton main.py' });
    const [a] = await good.claim();
    await good.complete(a!, { exitCode: 127, errorClass: 'EXIT_NONZERO', errorMessage: 'exit code 127' });
    expect(await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({
      status: 'FAILED',
      infraFailures: 0,
      statusReason: 'The command exited with code 127.',
    });
  });

  it('gives up after INFRA_RETRIES infrastructure failures (a task no worker can start ends)', async () => {
    await clearQueue();
    const task = await addTask(api, job, { name: 'unstartable', maxAttempts: 1 });
    for (let i = 0; i < 2; i++) {
      const [a] = await broken.claim();
      await broken.complete(a!, {
        exitCode: null,
        errorClass: 'WORKER_ERROR',
        errorMessage: 'this worker cannot run tasks now: the interpreter /x/python3 is missing',
      });
      expect(await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({ status: 'QUEUED', infraFailures: i + 1 });
    }
    const [a] = await broken.claim();
    await broken.complete(a!, {
      exitCode: null,
      errorClass: 'WORKER_ERROR',
      errorMessage: 'this worker cannot run tasks now: the interpreter /x/python3 is missing',
    });
    const t = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(t).toMatchObject({ status: 'FAILED', attemptCount: 3, infraFailures: 3 });
    expect(t.statusReason).toMatch(/^WORKER_ERROR: this worker cannot run tasks now: .*; giving up after 3 infrastructure failures/);
  });

  it('a lost lease after an infrastructure failure is counted by the same rule (the tick): retried within maxAttempts, then FAILED', async () => {
    await clearQueue();
    const task = await addTask(api, job, { name: 'lost-after-infra', maxAttempts: 2 });
    const [a1] = await broken.claim();
    await broken.complete(a1!, launcher127);
    const [a2] = await good.claim();
    const lease2 = (await prisma.attempt.findUniqueOrThrow({ where: { id: a2!.attemptId } })).leaseExpiresAt;
    api.clock.advance(lease2.getTime() + 1000 - api.clock.now().getTime());
    await runTick(api.server.resources, api.clock.now());
    const t2 = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(t2).toMatchObject({ status: 'QUEUED', attemptCount: 2, infraFailures: 1 });
    expect(t2.statusReason).toMatch(/\(attempt 2 of 2\)/);
    const [a3] = await good.claim();
    const lease3 = (await prisma.attempt.findUniqueOrThrow({ where: { id: a3!.attemptId } })).leaseExpiresAt;
    api.clock.advance(lease3.getTime() + 1000 - api.clock.now().getTime());
    await runTick(api.server.resources, api.clock.now());
    const t3 = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(t3).toMatchObject({ status: 'FAILED', attemptCount: 3, infraFailures: 1 });
    expect(t3.statusReason).toBe('Lost 2 times (workers stopped responding); giving up after 2 attempts.');
  });

  it('the rule itself: only infrastructure classes are free, and they are bounded', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const cfg = { retryBaseSec: 2, infraRetries: 3 };
    expect(
      retryOrFail({ attemptCount: 1, maxAttempts: 1, infraFailures: 0 }, { kind: 'failed', errorClass: 'SANDBOX_ERROR' }, now, cfg),
    ).toMatchObject({ retry: true, infrastructure: true, nextCounted: 1, waitSec: 2 });
    expect(
      retryOrFail({ attemptCount: 1, maxAttempts: 3, infraFailures: 0 }, { kind: 'failed', errorClass: 'EXIT_NONZERO' }, now, cfg),
    ).toEqual({ retry: false, infrastructure: false, exhausted: null });
    expect(
      retryOrFail({ attemptCount: 4, maxAttempts: 1, infraFailures: 3 }, { kind: 'failed', errorClass: 'WORKER_ERROR' }, now, cfg),
    ).toMatchObject({ retry: false, infrastructure: true });
    // Lost: attempts 1 and 2 were infrastructure failures, 3 and 4 count: 2 of 2 used.
    expect(retryOrFail({ attemptCount: 4, maxAttempts: 2, infraFailures: 2 }, { kind: 'lost' }, now, cfg)).toMatchObject({
      retry: false,
      exhausted: 'giving up after 2 attempts',
    });
    expect(retryOrFail({ attemptCount: 3, maxAttempts: 2, infraFailures: 2 }, { kind: 'lost' }, now, cfg)).toMatchObject({
      retry: true,
      nextCounted: 2,
    });
    expect(retryOrFail({ attemptCount: 2, maxAttempts: 2, infraFailures: 1 }, { kind: 'lost' }, now, cfg)).toMatchObject({
      retry: true,
      nextCounted: 2,
      runAfter: new Date(now.getTime() + 4000),
    });
  });
});

describe('an UNHEALTHY worker claims nothing', async () => {
  const sick = new ProtocolWorker(api, token, 'sick');
  await sick.hello();
  const job = await createJobWithFile(api, owner.token);

  it('says why, claims nothing while unhealthy, and claims again once healthy', async () => {
    await clearQueue();
    const task = await addTask(api, job, { name: 'waits-for-health' });
    const reason = 'the sandbox binary bwrap is missing or not executable (Debian/Ubuntu: apt-get install bubblewrap)';
    expect(await setHealth(sick, false, reason)).toMatchObject({ __typename: 'Worker', status: 'UNHEALTHY', statusReason: reason });
    expect(await ownersView(sick)).toMatchObject({ status: 'UNHEALTHY', statusReason: reason });
    expect(await sick.claim({ max: 1 })).toEqual([]);
    // Its heartbeats keep it UNHEALTHY (never back to ONLINE by being seen) and still claim nothing.
    expect((await sick.heartbeat([])).status).toBe('UNHEALTHY');
    expect(await sick.claim({ max: 1 })).toEqual([]);
    expect((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe('QUEUED');
    expect(await setHealth(sick, true, null)).toMatchObject({ status: 'ONLINE', statusReason: null });
    const [a] = await sick.claim({ max: 1 });
    expect(a!.task.id).toBe(task.id);
    await sick.complete(a!, { exitCode: 0 });
  });

  it("never overrides the owner's pause; an unhealthy report needs a reason", async () => {
    const r = await api.gql(`mutation($id: ID!) { pauseWorker(id: $id) { __typename } }`, { id: workerGid(sick.workerId) }, owner.token);
    expect(r.data.pauseWorker.__typename).toBe('Worker');
    expect((await setHealth(sick, false, 'disk full')).status).toBe('PAUSED');
    expect((await setHealth(sick, true, null)).status).toBe('PAUSED');
    await api.gql(`mutation($id: ID!) { resumeWorker(id: $id) { __typename } }`, { id: workerGid(sick.workerId) }, owner.token);
    expect(await setHealth(sick, false, '  ')).toMatchObject({ __typename: 'ValidationError' });
    expect((await ownersView(sick)).status).toBe('ONLINE');
  });
});

describe('the black-hole rule: quarantine with a threshold and a cool-down', async () => {
  const hole = new ProtocolWorker(api, token, 'hole');
  const fine = new ProtocolWorker(api, token, 'fine');
  await hole.hello();
  await fine.hello();
  const jobs = [
    await createJobWithFile(api, owner.token),
    await createJobWithFile(api, owner.token),
    await createJobWithFile(api, owner.token),
  ];

  /** A task of `job` fails on the hole (an infrastructure error) and then succeeds on the fine worker. */
  async function failThenSucceed(job: { jobId: string; codeVersionId: string }, name: string) {
    await clearQueue();
    await addTask(api, job, { name, maxAttempts: 1 });
    const [a1] = await hole.claim();
    await hole.complete(a1!, launcher127);
    const [a2] = await fine.claim();
    await fine.complete(a2!, { exitCode: 0 });
  }

  it('running out of memory (or time) on tasks of three jobs that then succeeded on a bigger machine quarantines nothing', async () => {
    const small = new ProtocolWorker(api, token, 'small');
    await small.hello();
    for (const [k, job] of jobs.entries()) {
      await clearQueue();
      const t = await addTask(api, job, { name: `big-${k}`, maxAttempts: 1 });
      const [a1] = await small.claim();
      await small.complete(
        a1!,
        k === 2 ? { exitCode: null, errorClass: 'TIMEOUT' } : { exitCode: 137, errorClass: 'OOM', errorMessage: 'out of memory' },
      );
      // Retried with more memory or time (the supervisor's retry_task), on another worker.
      await prisma.task.update({ where: { id: t.id }, data: { status: 'QUEUED', currentAttemptId: null, maxAttempts: 2 } });
      const [a2] = await fine.claim();
      await fine.complete(a2!, { exitCode: 0 });
    }
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ quarantined: 0 });
    expect((await ownersView(small)).status).toBe('ONLINE');
  });

  it('failures on three tasks of ONE job quarantine nothing; two jobs stay below the threshold', async () => {
    for (const n of ['j0-a', 'j0-b', 'j0-c']) await failThenSucceed(jobs[0]!, n);
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ quarantined: 0 });
    await failThenSucceed(jobs[1]!, 'j1-a');
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ quarantined: 0 });
    expect((await ownersView(hole)).status).toBe('ONLINE');
  });

  it('the third job quarantines it with the reason; it claims nothing until the cool-down ends, then its old failures do not count again', async () => {
    await failThenSucceed(jobs[2]!, 'j2-a');
    const t0 = api.clock.now();
    expect(await runTick(api.server.resources, t0)).toMatchObject({ quarantined: 1 });
    const view = await ownersView(hole);
    expect(view.status).toBe('QUARANTINED');
    expect(new Date(view.quarantinedUntil!).getTime()).toBe(t0.getTime() + 30 * 60_000);
    expect(view.statusReason).toMatch(
      /^Quarantined until .*: 5 of its attempts failed on tasks of 3 jobs within 60 min that then succeeded on other workers \(last: SANDBOX_ERROR: .*exit code 127/,
    );
    expect((await ownersView(fine)).status).toBe('ONLINE');
    // Quarantined: a queued task is not given to it, and being seen does not end the quarantine.
    await clearQueue();
    const waiting = await addTask(api, jobs[0]!, { name: 'after-quarantine' });
    expect((await hole.heartbeat([])).status).toBe('QUARANTINED');
    expect(await hole.claim()).toEqual([]);
    // Still within the cool-down (the server's clock moved, the worker heard from): nothing changes.
    api.clock.advance(t0.getTime() + 30 * 60_000 - 1000 - api.clock.now().getTime());
    await hole.heartbeat([]);
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ quarantined: 0, released: 0 });
    expect((await ownersView(hole)).status).toBe('QUARANTINED');
    // The cool-down is over: ONLINE, claims again; the failures before it (still within the
    // 60 min window) are not counted again.
    api.clock.advance(1000);
    await hole.heartbeat([]);
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ released: 1 });
    expect(await ownersView(hole)).toMatchObject({ status: 'ONLINE', statusReason: null });
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ quarantined: 0 });
    const [a] = await hole.claim();
    expect(a!.task.id).toBe(waiting.id);
    await hole.complete(a!, { exitCode: 0 });
  });
});
