/**
 * The `attempt.resumed` job event (domain/leases/checkpoints.ts recordResumes, written by the claim):
 * an attempt handed its task's checkpoint says at which step of how many it starts, from a checkpoint
 * of when, and how much work the previous attempt did after that checkpoint and lost. Over the real
 * worker protocol (GraphQL over HTTP with a worker token, blobs uploaded for the attempt) and the real
 * tick; the server's clock is moved, never slept on. The words `chatgpu watch` and the dashboard print
 * are checked beside it (api/src/cli/follow.test.ts has none of these: resumedLine here).
 */
import { describe, expect, it } from 'vitest';
import { resumedLine } from '../src/cli/follow.js';
import { runTick } from '../src/scheduler/tick.js';
import { startTestApi } from './helpers/api.js';
import { addTask, createJobWithFile, createWorkerToken, ProtocolWorker, type Assignment } from './helpers/protocolClient.js';

const api = await startTestApi({ LEASE_SEC: '30' });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const token = await createWorkerToken(api, user.token);

async function saveCheckpoint(w: ProtocolWorker, a: Assignment, step: number, meta: Record<string, unknown>) {
  const files = [];
  for (const [p, content] of [
    [`checkpoint/resume-${step}.pt`, `weights of step ${step} ${Math.random()}`],
    ['checkpoint/chatgpu-checkpoint.json', JSON.stringify(meta)],
  ] as const) {
    const put = await api.putBlob(content, token, undefined, a.attemptId);
    expect(put.status, JSON.stringify(put.body)).toBeLessThan(300);
    files.push({ path: p, sha256: put.sha256 });
  }
  const r = await w.gql(
    `mutation($a: ID!, $f: String!, $c: CheckpointInput!) { saveCheckpoint(attemptId: $a, fencingToken: $f, checkpoint: $c) { __typename } }`,
    { a: a.attemptId, f: a.fencingToken, c: { files, step } },
  );
  expect(r.data?.saveCheckpoint?.__typename, JSON.stringify(r)).toBe('TaskCheckpoint');
}

async function resumedEvents(jobId: string) {
  return (await prisma.jobEvent.findMany({ where: { jobId, kind: 'attempt.resumed' }, orderBy: { id: 'asc' } })).map(
    (e) => e.payload as Record<string, unknown>,
  );
}

async function worker(name: string) {
  const w = new ProtocolWorker(api, token, name);
  await w.hello();
  return w;
}

describe('attempt.resumed', () => {
  it('a lost attempt: the next one resumes at the checkpoint’s step of the total the program wrote beside it; work lost = its lease’s end − the checkpoint', async () => {
    const job = await createJobWithFile(api, user.token);
    const task = await addTask(api, job, { maxAttempts: 3 });
    const a = await worker('vanishes');
    const [first] = await a.claim();
    expect(first!.task.id).toBe(task.id);
    await saveCheckpoint(a, first!, 3, { step: 3, of: 10 });
    const saved = (await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).checkpoint as { savedAt: string };

    // The worker says nothing more: its lease runs out, the tick marks the attempt LOST and queues the task again.
    api.clock.advance(31_000);
    await runTick(api.server.resources, api.clock.now());
    const lost = await prisma.attempt.findUniqueOrThrow({ where: { id: first!.attemptId } });
    expect(lost.status).toBe('LOST');
    api.clock.advance(600_000); // past any retry backoff
    await prisma.task.update({ where: { id: task.id }, data: { runAfter: api.clock.now() } });
    expect(await resumedEvents(job.jobId)).toEqual([]); // nothing until an attempt starts from it

    const b = await worker('replacement');
    const [second] = await b.claim();
    expect(second!.number).toBe(2);
    const workLost = Math.round((lost.leaseExpiresAt.getTime() - Date.parse(saved.savedAt)) / 1000);
    // Saved right after the claim, lost when the 30 s lease ran out: the time between them (a loaded machine takes a while to save).
    expect(workLost).toBeGreaterThan(0);
    expect(workLost).toBeLessThanOrEqual(30);
    const [ev, ...more] = await resumedEvents(job.jobId);
    expect(more).toEqual([]);
    expect(ev).toEqual({
      taskId: task.id,
      attemptId: second!.attemptId,
      number: 2,
      fromAttempt: 1,
      step: 3,
      of: 10,
      checkpointAt: saved.savedAt,
      previousEndedAt: lost.leaseExpiresAt.toISOString(),
      workLostSec: workLost,
    });
    const at = `${saved.savedAt.slice(0, 10)} ${saved.savedAt.slice(11, 19)} UTC`;
    expect(resumedLine(ev!)).toBe(`resumed at step 3 of 10 from a checkpoint of ${at} (work lost: ${workLost} s)`);
  });

  it('a drained attempt: work lost is the time from its last checkpoint to the drain; with no total known the line leaves it out', async () => {
    const job = await createJobWithFile(api, user.token);
    const task = await addTask(api, job);
    const a = await worker('drainee');
    const [first] = await a.claim();
    await saveCheckpoint(a, first!, 5, { step: 5 });
    api.clock.advance(7_000);
    const r = await a.gql(
      `mutation($a: ID!, $f: String!) { releaseDrainedAttempt(attemptId: $a, fencingToken: $f) { __typename ... on Attempt { status } } }`,
      { a: first!.attemptId, f: first!.fencingToken },
    );
    expect(r.data?.releaseDrainedAttempt, JSON.stringify(r)).toEqual({ __typename: 'Attempt', status: 'DRAINED' });
    const b = await worker('other');
    const [second] = await b.claim();
    expect(second!.task.id).toBe(task.id);
    const [ev] = await resumedEvents(job.jobId);
    expect(ev).toMatchObject({ number: 2, fromAttempt: 1, step: 5, of: null, workLostSec: 7 });
    expect(resumedLine(ev!)).toMatch(/^resumed at step 5 from a checkpoint of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(work lost: 7 s\)$/);
  });

  it('an attempt with no checkpoint to start from records none; a step file with no sound total: the plan’s full scale is the total', async () => {
    const job = await createJobWithFile(api, user.token);
    await addTask(api, job);
    const plan = await prisma.plan.create({
      data: {
        jobId: job.jobId,
        version: 1,
        author: 'scripted',
        summary: 'train',
        steps: [],
        command: 'python main.py',
        requirements: {},
        outputs: [],
        acceptanceCriteria: {},
        smokeRun: { command: 'python main.py --epochs 1', timeoutSec: 60, scale: { unit: 'epoch', bounded: 1, full: 20 } },
      },
    });
    await prisma.job.update({ where: { id: job.jobId }, data: { currentPlanId: plan.id } });
    const a = await worker('plain');
    const [first] = await a.claim();
    expect(first!.number).toBe(1);
    expect(await resumedEvents(job.jobId)).toEqual([]);

    await saveCheckpoint(a, first!, 2, { step: 2, of: 'many' });
    await a.gql(`mutation($a: ID!, $f: String!) { releaseDrainedAttempt(attemptId: $a, fencingToken: $f) { __typename } }`, {
      a: first!.attemptId,
      f: first!.fencingToken,
    });
    const [second] = await (await worker('plain-2')).claim();
    expect(second!.number).toBe(2);
    const [ev] = await resumedEvents(job.jobId);
    expect(ev).toMatchObject({ step: 2, of: 20 });
    // Drained right after the save: what is lost is the time between the two (0 s, or a few on a loaded machine).
    expect(ev!.workLostSec).toBeGreaterThanOrEqual(0);
    expect(ev!.workLostSec).toBeLessThanOrEqual(10);
  });

  it('the words for partial events', () => {
    expect(resumedLine({})).toBe('resumed from a checkpoint');
    expect(resumedLine({ step: 4, of: 8, checkpointAt: 'not a time', workLostSec: 12 })).toBe(
      'resumed at step 4 of 8 from a checkpoint (work lost: 12 s)',
    );
    expect(resumedLine({ step: 0, checkpointAt: '2026-12-07T15:04:05.123Z' })).toBe(
      'resumed at step 0 from a checkpoint of 2026-12-07 15:04:05 UTC',
    );
  });
});
