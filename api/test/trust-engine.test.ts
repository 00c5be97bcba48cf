/**
 * The trust check on the job engine (domain/trust/replication.ts), on real PostgreSQL with
 * protocol-level workers of three owners and the server's test clock — the paths the end-to-end
 * suite (trust-e2e.test.ts, real worker processes) does not reach. A replica counts toward the
 * job's spending cap (db/sql/claimTasks.ts): the checkable
 * run's replica is not leased while its projection would pass the cap (the task says why), is
 * leased once the cap allows it, and its usage is billable — in Job.costCad, which the cap and the
 * tick count — and shown apart as the job's replication cost. The engine is driven directly
 * (advanceJobAfterTask, as the pipeline does on a completion). Then: no worker of another owner
 * online, or none big enough (accepted unverified, saying so), a replica whose workers went away (given
 * up by the tick after TRUST_REPLICA_WAIT_SEC), a replica that fails for good (likewise), a replica that
 * is the wrong one (outvoted; its usage the contributor's loss; the original goes on), three
 * different results (the job fails, saying so) and a tie-breaker that fails for good (likewise).
 */
import { describe, expect, it } from 'vitest';
import { acceptPlan } from '../src/domain/jobs/acceptPlan.js';
import { advanceJobAfterTask } from '../src/domain/jobs/advanceJob.js';
import { commitTransition, transition } from '../src/domain/jobs/jobLifecycle.js';
import type { PlanInput } from '../src/domain/jobs/planSchema.js';
import { runTick } from '../src/scheduler/tick.js';
import { reputationOf } from '../src/domain/trust/reputation.js';
import { startTestApi } from './helpers/api.js';
import { CPU_CAPS, createJobWithFile, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';

const SEC = 1000;

describe('the trust check on the job engine', async () => {
  const api = await startTestApi({ LEASE_SEC: '600', WORKER_OFFLINE_SEC: '86400' });
  const prisma = api.server.db.prisma;
  const r = api.server.resources;
  // One slot of 1 core + 1 GiB: 0.023 CAD an hour at the default rates; a 60 s time limit projects to ≈ 0.000383 CAD.
  const small = { ...CPU_CAPS, cpu: { model: 'tiny', cores: 1 }, memoryMiB: 1024 };
  const user = await api.signUp();
  const other = await api.signUp();
  const mine = new ProtocolWorker(api, await createWorkerToken(api, user.token), 'mine');
  const theirs = new ProtocolWorker(api, await createWorkerToken(api, other.token), 'theirs');
  const third = new ProtocolWorker(api, await createWorkerToken(api, (await api.signUp()).token), 'third');
  await mine.hello({ capabilities: small });
  await theirs.hello({ capabilities: small });
  await third.hello({ capabilities: small });
  // The third owner's worker is well confirmed already (5 results, none wrong): a tie-breaker must be
  // at least as trusted as the more trusted disputant (reputation.ts tieBreakerReputation).
  await prisma.worker.update({
    where: { id: third.workerId },
    data: { validatedCount: 5, reputation: reputationOf({ validatedCount: 5, mismatchCount: 0 }) },
  });

  const plan: PlanInput = {
    summary: 'Compute it.',
    asks: [],
    steps: ['Run it'],
    command: 'python main.py',
    hardware: { workload: 'python' },
    timeoutSec: 60,
    outputs: ['outputs'],
    acceptance: { requiredFiles: ['outputs/result.json'], metrics: [] },
    checkable: { tolerance: { rtol: 1e-9 } },
  };

  /** Uploads the result file for the attempt and completes it after `runMs` of the server's clock. */
  async function finish(w: ProtocolWorker, a: { attemptId: string; fencingToken: string }, runMs: number, value = 42) {
    expect((await w.heartbeat([a])).renewed).toEqual([a.attemptId]); // RUNNING from here
    api.clock.advance(runMs);
    const up = await api.putBlob(`{"value": ${value.toFixed(1)}}`, w.token, undefined, a.attemptId);
    expect(up.status).toBe(201);
    expect(await w.complete(a, { exitCode: 0, outputs: [{ path: 'outputs/result.json', sha256: up.sha256 }] })).toMatchObject({
      status: 'SUCCEEDED',
    });
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
    expect(waiting.statusReason).toMatch(
      /^Waiting: leasing it would pass the job's spending cap of 0\.0006 CAD — cost so far 0\.000[23]\d*, in-flight work up to 0\.0000, this task up to 0\.0004/,
    );
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
    const q = await api.gql(
      `query($id: ID!) { job(id: $id) { costCad replicationCostCad resultChecks { status replicated report } } }`,
      { id: job.gid },
      user.token,
    );
    expect(q.errors).toBeUndefined();
    expect(q.data.job.replicationCostCad).toBeCloseTo(of(rep!.attemptId), 6);
    expect(Number(q.data.job.costCad)).toBeCloseTo(of(run!.attemptId) + of(rep!.attemptId), 6);
    expect(q.data.job.resultChecks).toEqual([
      { status: 'MATCHED', replicated: true, report: "Replicated on theirs: matched mine's result (1 file(s) within tolerance)." },
    ]);
  });

  it("the replica's usage stops the job at its cap like any other work", async () => {
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
    const replicaBilled = (await prisma.usageEntry.findMany({ where: { attemptId: rep!.attemptId, billable: true } })).reduce(
      (s, u) => s + Number(u.costCad),
      0,
    );
    expect(replicaBilled).toBeGreaterThan(Number(j.costCad) / 2);
  });

  /** A new job of the plan, its run done by `mine` with `value` and advanced: the check decided. */
  async function runChecked(value = 42) {
    const job = await createJobWithFile(api, user.token);
    await transition(r, job.jobId, 'startPlanning', { reason: 'test' });
    await commitTransition(r, job.jobId, (tx, now) => acceptPlan(tx, now, { jobId: job.jobId, author: 'scripted', plan }));
    const [run] = await mine.claim();
    expect(run?.task.name).toBe('run');
    await finish(mine, run!, 10 * SEC, value);
    await advanceJobAfterTask(r, run!.task.id);
    return {
      job,
      run: run!,
      check: () => prisma.resultCheck.findUniqueOrThrow({ where: { taskId: run!.task.id } }),
      status: async () => (await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } })).status,
    };
  }
  const steps = async (jobId: string) =>
    (await prisma.jobEvent.findMany({ where: { jobId, kind: 'trust.check' }, orderBy: { id: 'asc' } })).map(
      (e) => (e.payload as { step: string }).step,
    );
  const counts = async (w: ProtocolWorker) =>
    prisma.worker.findUniqueOrThrow({ where: { id: w.workerId }, select: { validatedCount: true, mismatchCount: true } });
  const setPaused = (w: ProtocolWorker, paused: boolean) =>
    prisma.worker.update({ where: { id: w.workerId }, data: { status: paused ? 'PAUSED' : 'ONLINE' } });

  it('no worker of another owner online: the sampled result is accepted unverified, and the check says why', async () => {
    await setPaused(theirs, true);
    await setPaused(third, true);
    try {
      const j = await runChecked();
      expect(await j.check()).toMatchObject({ status: 'UNCHECKED', replicaTaskId: null, share: 1 });
      expect((await j.check()).report).toMatch(
        /^Sampled \(100% of mine's checkable results are replicated .*\), but no worker of another owner is online to replicate on: accepted unverified\.$/,
      );
      expect(await j.status()).toBe('SUCCEEDED');
      expect(await steps(j.job.jobId)).toEqual(['sampled']);
    } finally {
      await setPaused(theirs, false);
      await setPaused(third, false);
    }
  });

  it("the other owners' workers online are all too small for the run: no replica is made; accepted unverified at once", async () => {
    // The run needs 2 GiB: mine has 4 GiB, theirs and third 1 GiB. A replica none of them can take
    // would leave the job waiting for a worker that may never come.
    await prisma.worker.update({ where: { id: mine.workerId }, data: { memoryMiB: 4096 } });
    try {
      const job = await createJobWithFile(api, user.token);
      await transition(r, job.jobId, 'startPlanning', { reason: 'test' });
      await commitTransition(r, job.jobId, (tx, now) =>
        acceptPlan(tx, now, {
          jobId: job.jobId,
          author: 'scripted',
          plan: { ...plan, hardware: { workload: 'python', minMemoryMiB: 2048 } },
        }),
      );
      const [run] = await mine.claim();
      await finish(mine, run!, 10 * SEC);
      await advanceJobAfterTask(r, run!.task.id);
      const c = await prisma.resultCheck.findUniqueOrThrow({ where: { taskId: run!.task.id } });
      expect(c).toMatchObject({ status: 'UNCHECKED', replicaTaskId: null });
      expect(c.report).toMatch(/but no worker of another owner is online to replicate on: accepted unverified\.$/);
      expect((await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } })).status).toBe('SUCCEEDED');
    } finally {
      await prisma.worker.update({ where: { id: mine.workerId }, data: { memoryMiB: 1024 } });
    }
  });

  it("the other owners' workers go away while the replica waits: the tick gives it up after TRUST_REPLICA_WAIT_SEC and the original is accepted unverified", async () => {
    const j = await runChecked();
    const c0 = await j.check();
    expect(c0.status).toBe('REPLICATING');
    await setPaused(theirs, true);
    await setPaused(third, true);
    try {
      const waitSec = r.config.trust.replicaWaitSec;
      // Before the wait is over the replica waits (the tick says why).
      api.clock.advance((waitSec - 10) * SEC);
      await runTick(r, api.clock.now());
      expect(await prisma.task.findUniqueOrThrow({ where: { id: c0.replicaTaskId! } })).toMatchObject({
        status: 'QUEUED',
        statusReason: expect.stringMatching(
          /^No online worker can run this: it needs python, a worker of an owner other than the 1 whose worker already ran this result/,
        ),
      });
      api.clock.advance(20 * SEC);
      await runTick(r, api.clock.now());
      const given = await prisma.task.findUniqueOrThrow({ where: { id: c0.replicaTaskId! } });
      expect(given.status).toBe('FAILED');
      expect(given.statusReason).toMatch(/^Given up after 5 min: No online worker can run this/);
      await advanceJobAfterTask(r, given.id); // what the pipeline does on the tick's task.finished
      const c = await j.check();
      expect(c.status).toBe('UNCHECKED');
      expect(c.report).toMatch(/^The replica could not run \(Given up after 5 min: .+\): mine's result is accepted unverified\.$/);
      expect(await j.status()).toBe('SUCCEEDED');
      expect(await steps(j.job.jobId)).toEqual(['sampled', 'unchecked']);
    } finally {
      await setPaused(theirs, false);
      await setPaused(third, false);
    }
  });

  it("a replica that fails for good: the original is accepted unverified; nobody's reputation moves", async () => {
    const before = await counts(mine);
    const j = await runChecked();
    expect((await j.check()).status).toBe('REPLICATING');
    // Its program fails (not an infrastructure error: not retried, the task fails for good).
    const [a] = await theirs.claim();
    expect(a?.task.name).toBe('replica:run');
    expect((await theirs.heartbeat([a!])).renewed).toEqual([a!.attemptId]);
    expect(await theirs.complete(a!, { exitCode: 1 })).toMatchObject({ status: 'FAILED' });
    expect((await prisma.task.findUniqueOrThrow({ where: { id: a!.task.id } })).status).toBe('FAILED');
    await advanceJobAfterTask(r, a!.task.id);
    const c = await j.check();
    expect(c.status).toBe('UNCHECKED');
    expect(c.report).toMatch(/^The replica could not run \(.+\): mine's result is accepted unverified\.$/);
    expect(await j.status()).toBe('SUCCEEDED');
    expect(await counts(mine)).toEqual(before);
    expect(await steps(j.job.jobId)).toEqual(['sampled', 'unchecked']);
  });

  it("the replica is the wrong one: the tie-breaker sides with the original; the replica's worker loses reputation and its usage is the contributor's loss", async () => {
    const [m0, t0, x0] = [await counts(mine), await counts(theirs), await counts(third)];
    const j = await runChecked(42);
    const [rep] = await theirs.claim();
    await finish(theirs, rep!, 10 * SEC, 43);
    await advanceJobAfterTask(r, rep!.task.id);
    const mid = await j.check();
    expect(mid.status).toBe('TIEBREAK');
    const tb = await prisma.task.findUniqueOrThrow({ where: { id: mid.tiebreakTaskId! } });
    expect(tb).toMatchObject({ name: 'tiebreak:run', status: 'QUEUED' });
    // Neither owner's worker may break the tie.
    expect(await mine.claim()).toEqual([]);
    expect(await theirs.claim()).toEqual([]);
    const [a] = await third.claim();
    expect(a?.task.id).toBe(tb.id);
    await finish(third, a!, 10 * SEC, 42);
    await advanceJobAfterTask(r, a!.task.id);
    const c = await j.check();
    expect(c).toMatchObject({ status: 'RESOLVED', wrongWorkerIds: [theirs.workerId] });
    expect(c.report).toMatch(
      /^Tie-breaker on third: agrees with mine; theirs's result was wrong \(outputs\/result\.json: value 43 \(theirs\) vs 42 \(third\)\) and it loses reputation\. The job goes on with the original result\.$/,
    );
    expect(await j.status()).toBe('SUCCEEDED');
    expect(await steps(j.job.jobId)).toEqual(['sampled', 'mismatch', 'resolved']);
    expect(await counts(mine)).toEqual({ ...m0, validatedCount: m0.validatedCount + 1 });
    expect(await counts(third)).toEqual({ ...x0, validatedCount: x0.validatedCount + 1 });
    expect(await counts(theirs)).toEqual({ ...t0, mismatchCount: t0.mismatchCount + 1 });
    const usage = await prisma.usageEntry.findMany({ where: { jobId: j.job.jobId } });
    expect(usage.filter((u) => u.attemptId === rep!.attemptId).every((u) => !u.billable)).toBe(true);
    const job = await prisma.job.findUniqueOrThrow({ where: { id: j.job.jobId } });
    expect(Number(job.lostCostCad)).toBeCloseTo(
      usage.filter((u) => u.attemptId === rep!.attemptId).reduce((s, u) => s + Number(u.costCad), 0),
      9,
    );
    expect(Number(job.lostCostCad)).toBeGreaterThan(0);
    // The outputs are the original's.
    const q = await api.gql(`query($id: ID!) { job(id: $id) { outputs { path sha256 } } }`, { id: j.job.gid }, user.token);
    const original = (await prisma.task.findUniqueOrThrow({ where: { id: j.run.task.id } })).result as { outputs: { sha256: string }[] };
    expect(q.data.job.outputs.map((o: any) => o.sha256)).toEqual([original.outputs[0]!.sha256]);
  });

  /** Mine returns 42, theirs 43 as the replica: the tie-breaker is queued, and third has it. */
  async function mismatched() {
    const j = await runChecked(42);
    const [rep] = await theirs.claim();
    await finish(theirs, rep!, 10 * SEC, 43);
    await advanceJobAfterTask(r, rep!.task.id);
    const [a] = await third.claim();
    expect(a?.task.name).toBe('tiebreak:run');
    return { j, a };
  }

  it('three different results: the job fails, saying the output is not reproducible; nobody is blamed', async () => {
    // Theirs fell under the threshold (one mismatch, one confirmation at most): bring it back for this case.
    await prisma.worker.update({ where: { id: theirs.workerId }, data: { reputation: 0.5 } });
    const [m0, t0, x0] = [await counts(mine), await counts(theirs), await counts(third)];
    const { j, a } = await mismatched();
    await finish(third, a!, 10 * SEC, 44);
    await advanceJobAfterTask(r, a!.task.id);
    const c = await j.check();
    expect(c.status).toBe('UNRESOLVED');
    expect(await j.status()).toBe('FAILED');
    const job = await prisma.job.findUniqueOrThrow({ where: { id: j.job.jobId } });
    expect(job.statusReason).toMatch(
      /^Three workers disagree: mine, theirs and the tie-breaker third returned three different results \(.+\): the output is not reproducible within the plan's tolerances\.$/,
    );
    expect(await steps(j.job.jobId)).toEqual(['sampled', 'mismatch', 'unresolved']);
    expect([await counts(mine), await counts(theirs), await counts(third)]).toEqual([m0, t0, x0]);
  });

  it('a tie-breaker that fails for good: the job fails — a known disagreement is never accepted', async () => {
    await prisma.worker.update({ where: { id: theirs.workerId }, data: { reputation: 0.5 } });
    const { j, a } = await mismatched();
    expect((await third.heartbeat([a!])).renewed).toEqual([a!.attemptId]);
    expect(await third.complete(a!, { exitCode: 1 })).toMatchObject({ status: 'FAILED' });
    await advanceJobAfterTask(r, a!.task.id);
    expect((await j.check()).status).toBe('UNRESOLVED');
    expect(await j.status()).toBe('FAILED');
    expect((await prisma.job.findUniqueOrThrow({ where: { id: j.job.jobId } })).statusReason).toMatch(
      /^mine and theirs returned different results and the tie-breaker could not run \(.+\): neither result can be trusted\.$/,
    );
  });
});
