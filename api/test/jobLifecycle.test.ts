/**
 * The job engine (domain/jobs/jobLifecycle.ts; docs/architecture.md), on real PostgreSQL:
 * every transition from every status, final statuses that never move, concurrent writers
 * of which exactly one wins, events that commit with the status or not at all, and a
 * cancel that lands while the planner is in the middle of its turn.
 */
import { describe, expect, it } from 'vitest';
import type { JobStatus } from '../src/generated/prisma/enums.js';
import { openDatabase } from '../src/db/client.js';
import { completed, createScriptedClient, fnCall } from '../src/agents/models/scriptedClient.js';
import {
  applyTransition,
  commitTransition,
  InvalidTransitionError,
  transition,
  TRANSITIONS,
  type TransitionName,
} from '../src/domain/jobs/jobLifecycle.js';
import { FINAL_JOB_STATUSES, JOB_STATUSES } from '../src/domain/jobs/jobStatus.js';
import type { Resources } from '../src/domain/resources.js';
import { createJobAt, eventsOf, insertOnlineWorker, waitFor } from './helpers/agents.js';
import { startTestApi } from './helpers/api.js';

const api = await startTestApi();
const r = api.server.resources;
const prisma = api.server.db.prisma;
const user = await api.signUp();

async function jobIn(status: JobStatus): Promise<string> {
  const { jobId } = await createJobAt(api.url, user.token, { 'main.py': 'print(1)\n' });
  // Test setup only: puts the job straight into the status under test.
  await prisma.job.update({ where: { id: jobId }, data: { status } });
  return jobId;
}

const statusEvents = async (jobId: string) =>
  (await eventsOf(prisma, jobId, 'job.status')).map(
    (e) => e.payload as { status: string; from: string; transition: string; reason?: string },
  );

describe('the transition table', () => {
  const names = Object.keys(TRANSITIONS) as TransitionName[];
  const cases = JOB_STATUSES.flatMap((status) =>
    names.map((name) => ({ status, name, allowed: (TRANSITIONS[name].from as readonly JobStatus[]).includes(status) })),
  );

  it.each(cases)('$name from $status: allowed=$allowed', async ({ status, name, allowed }) => {
    const jobId = await jobIn(status);
    const before = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    if (allowed) {
      const res = await transition(r, jobId, name, { reason: `because ${name}` });
      expect(res).toMatchObject({ from: status, to: TRANSITIONS[name].to, transition: name });
      const after = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      expect(after.status).toBe(TRANSITIONS[name].to);
      expect(after.statusReason).toBe(`because ${name}`);
      if (FINAL_JOB_STATUSES.includes(after.status)) expect(after.finishedAt).not.toBeNull();
      expect(await statusEvents(jobId)).toEqual([
        { status: TRANSITIONS[name].to, from: status, transition: name, reason: `because ${name}` },
      ]);
    } else {
      const err = await transition(r, jobId, name, { reason: 'must not land' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidTransitionError);
      expect(err).toMatchObject({ code: 'CONFLICT', current: status, transition: name });
      const after = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      expect({ status: after.status, reason: after.statusReason, updatedAt: after.updatedAt }).toEqual({
        status: before.status,
        reason: before.statusReason,
        updatedAt: before.updatedAt,
      });
      expect(await statusEvents(jobId)).toEqual([]);
    }
  });

  it('no transition leaves a final status', () => {
    for (const name of names) for (const s of FINAL_JOB_STATUSES) expect(TRANSITIONS[name].from as readonly JobStatus[]).not.toContain(s);
  });

  it('onlyFrom narrows a transition: fail only a job that is still PLANNING', async () => {
    const jobId = await jobIn('RUNNING');
    await expect(transition(r, jobId, 'fail', { reason: 'planner gave up', onlyFrom: ['PLANNING'] })).rejects.toBeInstanceOf(
      InvalidTransitionError,
    );
    expect((await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('RUNNING');
  });

  it('a transition of a job that does not exist is refused', async () => {
    await expect(transition(r, '00000000-0000-4000-8000-000000000000', 'cancel', { reason: null })).rejects.toMatchObject({
      current: null,
    });
  });
});

describe('atomicity', () => {
  it('the status and its event commit together: a transaction that fails after the transition leaves neither', async () => {
    const jobId = await jobIn('PLANNING');
    await expect(
      commitTransition(r, jobId, async (tx, now) => {
        await applyTransition(tx, now, jobId, 'askUser', { reason: 'a question' });
        throw new Error('the question could not be stored');
      }),
    ).rejects.toThrow('could not be stored');
    expect((await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('PLANNING');
    expect(await statusEvents(jobId)).toEqual([]);
  });

  it('concurrent writers on separate connections: exactly one of cancel, fail, askUser and startPreparation wins', async () => {
    // Four API processes' worth of connections, each racing one transition on the same job.
    const dbs = await Promise.all(
      [0, 1, 2, 3].map(() => openDatabase({ databaseUrl: api.databaseUrl, dataDir: api.dataDir, migrate: false, poolSize: 2 })),
    );
    try {
      for (let round = 0; round < 5; round++) {
        const jobId = await jobIn('PLANNING');
        const contenders: TransitionName[] = ['cancel', 'fail', 'askUser', 'startPreparation'];
        const results = await Promise.allSettled(
          contenders.map((name, i) => transition({ ...r, prisma: dbs[i]!.prisma } as Resources, jobId, name, { reason: name })),
        );
        const won = results.flatMap((res, i) => (res.status === 'fulfilled' ? [contenders[i]!] : []));
        const lost = results.filter((res) => res.status === 'rejected').map((res) => (res as PromiseRejectedResult).reason);
        const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
        // Whatever won first decides what may follow: after askUser or startPreparation a
        // cancel or fail may still land (they are allowed from NEEDS_INPUT and PREPARING).
        const events = await statusEvents(jobId);
        expect(events.length).toBe(won.length);
        expect(events.at(-1)!.status).toBe(job.status);
        expect(won.filter((w) => w === 'askUser' || w === 'startPreparation').length).toBeLessThanOrEqual(1);
        expect(won.filter((w) => w === 'cancel' || w === 'fail').length).toBeLessThanOrEqual(1);
        for (const e of lost) expect(e).toBeInstanceOf(InvalidTransitionError);
        // The chain of events is a valid walk of the table from PLANNING.
        let at: JobStatus = 'PLANNING';
        for (const e of events) {
          expect(TRANSITIONS[e.transition as TransitionName].from as readonly JobStatus[]).toContain(at);
          expect(e.from).toBe(at);
          at = e.status as JobStatus;
        }
      }
    } finally {
      await Promise.all(dbs.map((d) => d.close()));
    }
  });
});

describe('a cancel while the planner is mid-turn', () => {
  it('the plan the model then submits is refused, nothing is created, the run ends and the job stays CANCELLED', async () => {
    const withPlanner = await startTestApi({}, { model: gatedPlanner() });
    const u = await withPlanner.signUp();
    await insertOnlineWorker(withPlanner.server.db.prisma, u.userId);
    const db = withPlanner.server.db.prisma;
    const { id: gid, jobId } = await createJobAt(withPlanner.url, u.token, { 'main.py': 'print(1)\n' });

    // The planner is inside its model call (the gate holds the response back).
    await waitFor('the planner to call the model', async () => gate.entered);
    expect((await db.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('PLANNING');
    const cancel = await withPlanner.gql(
      `mutation($id: ID!) { cancelJob(id: $id) { __typename ... on Job { status } } }`,
      { id: gid },
      u.token,
    );
    expect(cancel.data.cancelJob).toEqual({ __typename: 'Job', status: 'CANCELLED' });

    // The model answers with a plan only now.
    gate.release();
    const run = await waitFor('the planner run to end', async () => {
      const run = await db.agentRun.findFirst({ where: { jobId, agent: 'planner' } });
      return run && run.status !== 'RUNNING' ? run : null;
    });
    await withPlanner.server.agents!.idle();
    expect(run).toMatchObject({ status: 'COMPLETED', stopReason: 'job_final' });
    const job = await db.job.findUniqueOrThrow({ where: { id: jobId } });
    expect(job).toMatchObject({ status: 'CANCELLED', currentPlanId: null, acceptanceCriteria: null, frozenCodeId: null });
    expect({
      plans: await db.plan.count({ where: { jobId } }),
      tasks: await db.task.count({ where: { jobId } }),
      actions: await db.action.count({ where: { jobId } }),
    }).toEqual({ plans: 0, tasks: 0, actions: 0 });
    const out = await db.agentItem.findFirstOrThrow({ where: { runId: run.id, type: 'function_call_output' }, orderBy: { seq: 'desc' } });
    expect(out.status).toBe('REJECTED');
    expect((out.payload as { output: string }).output).toMatch(/already cancelled/);
    const statuses = (await eventsOf(db, jobId, 'job.status')).map((e) => (e.payload as { status: string }).status);
    expect(statuses).toEqual(['PLANNING', 'CANCELLED']);

    // A reconcile later does not bring it back.
    await withPlanner.server.agents!.reconcile();
    await withPlanner.server.agents!.idle();
    expect((await db.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('CANCELLED');
  });
});

const gate = (() => {
  let open: () => void = () => {};
  const opened = new Promise<void>((res) => (open = res));
  const g = { entered: false, opened, release: () => open() };
  return g;
})();

function gatedPlanner() {
  const plan = {
    summary: 'Run main.py.',
    asks: [],
    steps: ['Run `python main.py`'],
    command: 'python main.py',
    environment: null,
    hardware: { workload: 'python', accelVendor: null, minMemoryMiB: null, minAccelMemoryMiB: null },
    timeoutSec: 600,
    outputs: ['outputs'],
    acceptance: { exitCode: 0, requiredFiles: [], metrics: [], evaluate: null },
  };
  return createScriptedClient([
    async () => {
      gate.entered = true;
      await gate.opened;
      return completed(fnCall('submit_plan', plan));
    },
  ]);
}

describe('one writer of Job.status', () => {
  it('no source file outside the job engine writes a job status (Prisma update or raw SQL)', async () => {
    const { readdir, readFile } = await import('node:fs/promises');
    const path = await import('node:path');
    const src = path.resolve(import.meta.dirname, '../src');
    const files = (await readdir(src, { recursive: true })).filter(
      (f) => f.endsWith('.ts') && !f.startsWith('generated') && !f.endsWith('.test.ts'),
    );
    const offenders: string[] = [];
    for (const f of files) {
      if (f === path.join('domain', 'jobs', 'jobLifecycle.ts')) continue;
      const text = await readFile(path.join(src, f), 'utf8');
      // (A job is created DRAFT by the column default; creating one is not a status change.)
      for (const m of text.matchAll(/\.job\.(update|updateMany|upsert)\(/g)) {
        // The call's argument text up to the end of its `data` object (a generous window).
        const call = text.slice(m.index!, m.index! + 600);
        const data = /data:\s*\{([\s\S]*?)\}\s*[,)]/.exec(call)?.[1] ?? '';
        if (/(^|[\s,{])status\s*:/.test(data)) offenders.push(`${f}: ${call.slice(0, 120).replace(/\s+/g, ' ')}`);
      }
      if (/UPDATE\s+"Job"\s+SET[^;`]*\bstatus\b/i.test(text)) offenders.push(`${f}: raw UPDATE "Job" … status`);
    }
    expect(offenders).toEqual([]);
  });
});
