/**
 * A replica counts toward the job's spending cap (domain/trust, db/sql/claimTasks.ts), on real
 * PostgreSQL with protocol-level workers of two owners and the server's test clock: the checkable
 * run's replica is not leased while its projection would pass the cap (the task says why), is
 * leased once the cap allows it, and its usage is billable — in Job.costCad, which the cap and the
 * tick count — and shown apart as the job's replication cost. The engine is driven directly
 * (advanceJobAfterTask, as the pipeline does on a completion).
 */
import { describe, expect, it } from 'vitest';
import { acceptPlan } from '../src/domain/jobs/acceptPlan.js';
import { advanceJobAfterTask } from '../src/domain/jobs/advanceJob.js';
import { commitTransition, transition } from '../src/domain/jobs/jobLifecycle.js';
import type { PlanInput } from '../src/domain/jobs/planSchema.js';
import { runTick } from '../src/scheduler/tick.js';
import { startTestApi } from './helpers/api.js';
import { CPU_CAPS, createJobWithFile, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';

const SEC = 1000;

describe('a replica counts toward the spending cap', async () => {
  const api = await startTestApi({ LEASE_SEC: '600', WORKER_OFFLINE_SEC: '86400' });
  const prisma = api.server.db.prisma;
  const r = api.server.resources;
  // One slot of 1 core + 1 GiB: 0.023 CAD an hour at the default rates; a 60 s time limit projects to ≈ 0.000383 CAD.
  const small = { ...CPU_CAPS, cpu: { model: 'tiny', cores: 1 }, memoryMiB: 1024 };
  const user = await api.signUp();
  const other = await api.signUp();
  const mine = new ProtocolWorker(api, await createWorkerToken(api, user.token), 'mine');
  const theirs = new ProtocolWorker(api, await createWorkerToken(api, other.token), 'theirs');
  await mine.hello({ capabilities: small });
  await theirs.hello({ capabilities: small });

  const plan: PlanInput = {
    summary: 'Compute it.',
    steps: ['Run it'],
    command: 'python main.py',
    hardware: { workload: 'python' },
    timeoutSec: 60,
    outputs: ['outputs'],
    acceptance: { requiredFiles: ['outputs/result.json'], metrics: [] },
    checkable: { tolerance: { rtol: 1e-9 } },
  };

  /** Uploads the result file for the attempt and completes it after `runMs` of the server's clock. */
  async function finish(w: ProtocolWorker, a: { attemptId: string; fencingToken: string }, runMs: number) {
    expect((await w.heartbeat([a])).renewed).toEqual([a.attemptId]); // RUNNING from here
    api.clock.advance(runMs);
    const up = await api.putBlob('{"value": 42.0}', w.token, undefined, a.attemptId);
    expect(up.status).toBe(201);
    expect(await w.complete(a, { exitCode: 0, outputs: [{ path: 'outputs/result.json', sha256: up.sha256 }] })).toMatchObject({ status: 'SUCCEEDED' });
  }

  it('the replica waits while it would pass the cap, saying so; raised, it runs and its cost is in costCad and shown apart', async () => {
    // Cap 0.0006: the run (≈ 0.000383 projected) fits; after 40 s of it (≈ 0.000256 spent) the replica's projection does not.
    const job = await createJobWithFile(api, user.token, { spendingCapCad: 0.0006 });
    await transition(r, job.jobId, 'startPlanning', { reason: 'test' });
    const accepted = await commitTransition(r, job.jobId, (tx, now) => acceptPlan(tx, now, { jobId: job.jobId, author: 'scripted', plan }));
    const [run] = await mine.claim();
    expect(run?.task.id).toBe(accepted.taskId);
    await finish(mine, run!, 40 * SEC);
    await advanceJobAfterTask(r, run!.task.id);

    const check = await prisma.resultCheck.findUniqueOrThrow({ where: { taskId: run!.task.id } });
    expect(check).toMatchObject({ status: 'REPLICATING', share: 1 });
    const replica = await prisma.task.findUniqueOrThrow({ where: { id: check.replicaTaskId! } });
    expect(replica).toMatchObject({ name: 'replica:run', kind: 'PROBE', status: 'QUEUED' });
    expect((replica.requirements as any).avoidOwners).toEqual([user.userId]);
    const spent = Number((await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } })).costCad);
    expect(spent).toBeGreaterThan(0.0002);

    // Not on the first owner's worker ever; not on the other owner's while the cap says no.
    expect(await mine.claim()).toEqual([]);
    expect(await theirs.claim()).toEqual([]);
    api.clock.advance(2 * SEC); // the tick explains tasks that have waited a moment
    await runTick(r, api.clock.now());
    const waiting = await prisma.task.findUniqueOrThrow({ where: { id: replica.id } });
    expect(waiting.statusReason).toMatch(/^Waiting: leasing it would pass the job's spending cap of 0\.0006 CAD — cost so far 0\.000[23]\d*, in-flight work up to 0\.0000, this task up to 0\.0004/);
    expect(await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } })).toMatchObject({ status: 'RUNNING' });

    // A higher cap (set in the database: the API has no mutation for it): the replica is leased on
    // the other owner's worker, matches, and the job goes on.
    await prisma.job.update({ where: { id: job.jobId }, data: { spendingCapCad: 0.01 } });
    expect(await mine.claim()).toEqual([]);
    const [rep] = await theirs.claim();
    expect(rep?.task.id).toBe(replica.id);
    await finish(theirs, rep!, 30 * SEC);
    await advanceJobAfterTask(r, rep!.task.id);
    expect(await prisma.resultCheck.findUniqueOrThrow({ where: { id: check.id } })).toMatchObject({ status: 'MATCHED' });
    expect((await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } })).status).toBe('SUCCEEDED');

    const usage = await prisma.usageEntry.findMany({ where: { jobId: job.jobId } });
    const of = (attemptId: string) => usage.filter((u) => u.attemptId === attemptId).reduce((s, u) => s + Number(u.costCad), 0);
    expect(usage.every((u) => u.billable)).toBe(true);
    expect(of(rep!.attemptId)).toBeGreaterThan(0.00015); // ≈ 30 s
    const q = await api.gql(`query($id: ID!) { job(id: $id) { costCad replicationCostCad resultChecks { status replicated report } } }`, { id: job.gid }, user.token);
    expect(q.errors).toBeUndefined();
    expect(q.data.job.replicationCostCad).toBeCloseTo(of(rep!.attemptId), 6);
    expect(Number(q.data.job.costCad)).toBeCloseTo(of(run!.attemptId) + of(rep!.attemptId), 6);
    expect(q.data.job.resultChecks).toEqual([{ status: 'MATCHED', replicated: true, report: "Replicated on theirs: matched mine's result (1 file(s) within tolerance)." }]);
  });

  it('the replica\'s usage stops the job at its cap like any other work', async () => {
    const job = await createJobWithFile(api, user.token, { spendingCapCad: 0.0009 });
    await transition(r, job.jobId, 'startPlanning', { reason: 'test' });
    await commitTransition(r, job.jobId, (tx, now) => acceptPlan(tx, now, { jobId: job.jobId, author: 'scripted', plan }));
    const [run] = await mine.claim();
    await finish(mine, run!, 20 * SEC); // ≈ 0.000128
    await advanceJobAfterTask(r, run!.task.id);
    const [rep] = await theirs.claim();
    expect(rep?.task.name).toBe('replica:run');
    expect((await theirs.heartbeat([rep!])).renewed).toEqual([rep!.attemptId]);
    // The replica hangs far past its projection: its billed minutes reach the cap; the tick stops the job.
    let stopped = 0;
    for (let i = 0; i < 5 && !stopped; i++) {
      api.clock.advance(60 * SEC);
      expect((await theirs.heartbeat([rep!])).renewed).toEqual([rep!.attemptId]);
      stopped = (await runTick(r, api.clock.now())).stopped;
    }
    expect(stopped).toBe(1);
    const j = await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } });
    expect(j.status).toBe('STOPPED');
    expect(Number(j.costCad)).toBeGreaterThanOrEqual(0.0009);
    const replicaBilled = (await prisma.usageEntry.findMany({ where: { attemptId: rep!.attemptId, billable: true } })).reduce((s, u) => s + Number(u.costCad), 0);
    expect(replicaBilled).toBeGreaterThan(Number(j.costCad) / 2);
  });
});
