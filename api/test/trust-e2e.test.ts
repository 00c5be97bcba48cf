/**
 * Trust-weighted validation of untrusted workers (domain/trust), end to end with the builtin
 * planner, the scheduler and real worker processes of four owners: three honest ones and a
 * planted liar (a worker whose installation nudges every number its tasks write,
 * helpers/lyingWorker.ts). A deterministic program is planned checkable; an honest result is
 * replicated on another owner's worker, matches and is accepted, its replica's cost shown apart
 * and inside the job's cost; the liar's result is replicated, mismatches, a tie-breaker on a third
 * owner's worker sides with the honest replica, the job goes on with the honest result, the
 * liar's attempt is the contributor's loss, it drops under the threshold and then gets no
 * checkable work — while it still gets work that is not checkable.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { lyingWorkerCheckout } from './helpers/lyingWorker.js';
import { repoRoot } from './helpers/processes.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const api = await startTestApi(
  { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '10' },
  { scheduler: true, model: createBuiltinClient() },
);
const prisma = api.server.db.prisma;

/** An owner with one worker (its own token), run from `root` when given (the liar's copy). */
async function owner(name: string, root?: string) {
  const user = await api.signUp();
  const wt = await api.gql(`mutation { createWorkerToken(input: {name: "t"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
  const worker = await startWorker(
    api.url,
    wt.data.createWorkerToken.token,
    name,
    ['--python', '/usr/bin/python3'],
    {},
    root ? { root } : {},
  );
  const list = await api.gql(`{ workers { edges { node { id name } } } }`, {}, user.token);
  const gid = list.data.workers.edges.find((e: any) => e.node.name === name).node.id as string;
  return { user, worker, gid, name };
}
type Owner = Awaited<ReturnType<typeof owner>>;

const honest = [await owner('honest-a'), await owner('honest-b'), await owner('honest-c')];
const liar = await owner('liar', lyingWorkerCheckout());
const submitter = honest[0]!.user;

// Deterministic: the same numbers on any honest machine. It sleeps a little so the test can
// change which workers are online while it runs (the sleep is not in its outputs).
const PROGRAM = `import json, os, time
os.makedirs("outputs", exist_ok=True)
time.sleep(2)
xs = [i * 0.5 for i in range(1, 2001)]
result = {"n": len(xs), "sum_squares": sum(x * x for x in xs), "mean": sum(xs) / len(xs)}
with open("outputs/result.json", "w") as f:
    json.dump(result, f)
print(json.dumps(result))
`;
const EXPECTED = { n: 2000, sum_squares: 667166750, mean: 500.25 };

async function submit(request: string) {
  const manifest = [{ path: 'squares.py', sha256: (await api.putBlob(PROGRAM, submitter.token)).sha256 }];
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title: 'squares', request, files: manifest } },
    submitter.token,
  );
  const id = r.data.createJob.id as string;
  return { id, jobId: Buffer.from(id, 'base64').toString().split(':')[1]! };
}

const JOB = `query($id: ID!) { job(id: $id) { status statusReason costCad lostCostCad replicationCostCad currentPlan { requirements }
  outputs { path sha256 } resultChecks { status replicated share reputation report wrongWorkerIds task { name } } } }`;
async function finished(id: string) {
  return waitFor(
    async () => {
      const job = (await api.gql(JOB, { id }, submitter.token)).data.job;
      return ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(job.status) ? job : null;
    },
    180_000,
    'the job to finish',
  );
}

async function setPaused(o: Owner, paused: boolean) {
  const r = await api.gql(
    `mutation($id: ID!) { ${paused ? 'pauseWorker' : 'resumeWorker'}(id: $id) { __typename } }`,
    { id: o.gid },
    o.user.token,
  );
  expect(r.errors).toBeUndefined();
}
const workerRow = (name: string) => prisma.worker.findFirstOrThrow({ where: { name } });
const trustEvents = async (jobId: string) =>
  (await prisma.jobEvent.findMany({ where: { jobId, kind: 'trust.check' }, orderBy: { id: 'asc' } })).map((e) => e.payload as any);
const attemptsOf = (jobId: string) =>
  prisma.attempt.findMany({ where: { task: { jobId } }, include: { task: true, worker: true }, orderBy: { createdAt: 'asc' } });
const json = async (sha: string) => JSON.parse((await api.getBlob(sha, submitter.token)).bytes.toString('utf8'));

describe('trust-weighted validation with real workers', () => {
  it(
    "an honest result is replicated on another owner's worker, matches and is accepted; the replica's cost is shown and inside the job's cost",
    { timeout: 240_000 },
    async () => {
      await setPaused(liar, true);
      const { id, jobId } = await submit('compute the sum of squares');
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      expect(job.currentPlan.requirements.checkable).toEqual({ compare: ['outputs'], tolerance: { rtol: 1e-9, atol: 1e-12 } });

      // New workers: every checkable result is replicated (share 1), on a worker of another owner.
      expect(job.resultChecks).toHaveLength(1);
      expect(job.resultChecks[0]).toMatchObject({
        status: 'MATCHED',
        replicated: true,
        share: 1,
        reputation: 0.5,
        wrongWorkerIds: [],
        task: { name: 'run' },
      });
      const attempts = await attemptsOf(jobId);
      const run = attempts.find((a) => a.task.name === 'run' && a.status === 'SUCCEEDED')!;
      const replica = attempts.find((a) => a.task.name === 'replica:run' && a.status === 'SUCCEEDED')!;
      expect(replica.worker.ownerId).not.toBe(run.worker.ownerId);
      expect(job.resultChecks[0].report).toBe(
        `Replicated on ${replica.worker.name}: matched ${run.worker.name}'s result (1 file(s) within tolerance).`,
      );
      const events = await trustEvents(jobId);
      expect(events.map((e) => e.step)).toEqual(['sampled', 'matched']);
      expect(events[0]).toMatchObject({ replicated: true, worker: run.worker.name, task: 'run' });
      expect(events[1]).toMatchObject({ replicaWorker: replica.worker.name });

      // Both confirmed: their reputation rises.
      for (const w of [run.worker.name, replica.worker.name])
        expect(await workerRow(w)).toMatchObject({ validatedCount: 1, mismatchCount: 0, reputation: 2 / 3 });
      const outputs = await json(job.outputs.find((o: any) => o.path === 'outputs/result.json').sha256);
      expect(outputs).toEqual(EXPECTED);

      // The replica's usage: billable (in costCad, which the cap counts) and shown apart.
      const usage = await prisma.usageEntry.findMany({ where: { jobId } });
      const of = (attemptId: string) => usage.filter((u) => u.attemptId === attemptId).reduce((s, u) => s + Number(u.costCad), 0);
      expect(of(replica.id)).toBeGreaterThan(0);
      expect(usage.every((u) => u.billable)).toBe(true);
      expect(job.replicationCostCad).toBeCloseTo(of(replica.id), 6);
      expect(Number(job.costCad)).toBeCloseTo(
        usage.reduce((s, u) => s + Number(u.costCad), 0),
        6,
      );
      expect(Number(job.costCad)).toBeGreaterThan(job.replicationCostCad);
      expect(Number(job.lostCostCad)).toBe(0);
    },
  );

  it(
    "the liar's result is replicated, mismatches, a tie-breaker on a third owner's worker outvotes it; the job goes on with the honest result",
    { timeout: 240_000 },
    async () => {
      // Only the liar online: it takes the run. The honest workers come back while it runs.
      for (const h of honest) await setPaused(h, true);
      await setPaused(liar, false);
      const { id, jobId } = await submit('compute the sum of squares again');
      await waitFor(
        async () =>
          (
            await prisma.attempt.findFirst({
              where: { task: { jobId, name: 'run' }, status: { in: ['LEASED', 'RUNNING'] } },
              include: { worker: true },
            })
          )?.worker.name === 'liar' || null,
        120_000,
        'the liar to take the run',
      );
      for (const h of honest) await setPaused(h, false);
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');

      const attempts = await attemptsOf(jobId);
      const byTask = (name: string) => attempts.find((a) => a.task.name === name && a.status === 'SUCCEEDED')!;
      const [run, replica, tiebreak] = [byTask('run'), byTask('replica:run'), byTask('tiebreak:run')];
      expect(run.worker.name).toBe('liar');
      expect(replica.worker.name).toMatch(/^honest-/);
      expect(tiebreak.worker.name).toMatch(/^honest-/);
      // Three owners: the tie-breaker runs on neither the liar's nor the replica's owner's machine.
      expect(new Set([run.worker.ownerId, replica.worker.ownerId, tiebreak.worker.ownerId]).size).toBe(3);

      // The liar's result really was wrong, and the job's output is the honest one.
      const lied = await json((run.task.result as any).outputs.find((o: any) => o.path === 'outputs/result.json').sha256);
      expect(lied.n).toBeCloseTo(2000 * 1.01 + 1, 9);
      const outputs = await json(job.outputs.find((o: any) => o.path === 'outputs/result.json').sha256);
      expect(outputs).toEqual(EXPECTED);

      const liarRow = await workerRow('liar');
      expect(job.resultChecks).toHaveLength(1);
      expect(job.resultChecks[0]).toMatchObject({ status: 'RESOLVED', replicated: true, share: 1, wrongWorkerIds: [liarRow.id] });
      expect(job.resultChecks[0].report).toMatch(
        new RegExp(
          `^Tie-breaker on ${tiebreak.worker.name}: agrees with ${replica.worker.name}; liar's result was wrong \\(outputs/result\\.json: .+\\) and it loses reputation\\. The job goes on with the replica's result\\.$`,
        ),
      );
      const events = await trustEvents(jobId);
      expect(events.map((e) => e.step)).toEqual(['sampled', 'mismatch', 'resolved']);
      expect(events[1]).toMatchObject({ worker: 'liar', replicaWorker: replica.worker.name });
      expect(events[1].reason).toMatch(/MISMATCH with liar's result/);
      expect(events[2]).toMatchObject({ tiebreakWorker: tiebreak.worker.name, right: replica.worker.name, wrong: 'liar' });

      // The liar: one result found wrong, under the threshold; the other two confirmed once more.
      expect(liarRow).toMatchObject({ validatedCount: 0, mismatchCount: 1 });
      expect(liarRow.reputation).toBeCloseTo(1 / 7, 12);
      expect(liarRow.reputation).toBeLessThan(api.config.trust.minReputation);
      for (const w of [replica.worker.name, tiebreak.worker.name]) expect((await workerRow(w)).validatedCount).toBeGreaterThanOrEqual(1);

      // Its attempt is the contributor's loss; the replica and tie-breaker are the user's, shown apart.
      const usage = await prisma.usageEntry.findMany({ where: { jobId } });
      const sum = (keep: (u: (typeof usage)[number]) => boolean) => usage.filter(keep).reduce((s, u) => s + Number(u.costCad), 0);
      expect(sum((u) => u.attemptId === run.id && u.billable)).toBe(0);
      expect(Number(job.lostCostCad)).toBeCloseTo(
        sum((u) => u.attemptId === run.id),
        6,
      );
      expect(Number(job.lostCostCad)).toBeGreaterThan(0);
      expect(job.replicationCostCad).toBeCloseTo(
        sum((u) => (u.attemptId === replica.id || u.attemptId === tiebreak.id) && u.billable),
        6,
      );
      expect(Number(job.costCad)).toBeCloseTo(
        sum((u) => u.billable),
        6,
      );
    },
  );

  it('under the threshold, the liar gets no checkable work — but still work that is not checkable', { timeout: 240_000 }, async () => {
    expect((await workerRow('liar')).reputation).toBeLessThan(api.config.trust.minReputation);
    for (const h of honest) await setPaused(h, true);
    // A checkable job while only the liar is online: its run waits in the queue …
    const checkable = await submit('compute the sum of squares a third time');
    const waiting = await waitFor(
      () => prisma.task.findFirst({ where: { jobId: checkable.jobId, name: 'run', status: 'QUEUED' } }),
      120_000,
      'the checkable run to be queued',
    );
    expect((waiting.requirements as any).checkable).toBeTruthy();
    // The job says why it waits (the tick's explanation of queued work).
    const why = await waitFor(
      async () => (await prisma.task.findUniqueOrThrow({ where: { id: waiting.id } })).statusReason,
      60_000,
      'the wait to be explained',
    );
    expect(why).toMatch(
      /^No online worker can run this: it needs python, a worker trusted with checkable work \(reputation ≥ 0\.3\)\. Online workers: liar \(/,
    );
    // … while the liar takes a later job that is not checkable (the request says its outputs vary),
    // so it was asking for work and skipped the older checkable run.
    const other = await submit('compute the sum of squares; the results are not reproducible');
    const otherJob = await finished(other.id);
    expect(otherJob.status, otherJob.statusReason).toBe('SUCCEEDED');
    expect(otherJob.currentPlan.requirements.checkable).toBeUndefined();
    expect(otherJob.resultChecks).toEqual([]);
    expect((await attemptsOf(other.jobId)).map((a) => a.worker.name)).toEqual(['liar']);
    expect(await prisma.task.findUniqueOrThrow({ where: { id: waiting.id } })).toMatchObject({ status: 'QUEUED', attemptCount: 0 });

    // The honest workers come back: they take it, and the liar never ran any of it.
    for (const h of honest) await setPaused(h, false);
    const job = await finished(checkable.id);
    expect(job.status, job.statusReason).toBe('SUCCEEDED');
    const names = (await attemptsOf(checkable.jobId)).map((a) => a.worker.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names).not.toContain('liar');
    expect(await json(job.outputs.find((o: any) => o.path === 'outputs/result.json').sha256)).toEqual(EXPECTED);
  });

  it("the worker's record is on the API and the Workers page's query", async () => {
    const r = await api.gql(`{ workers { edges { node { name reputation validatedCount mismatchCount } } } }`, {}, liar.user.token);
    expect(r.errors).toBeUndefined();
    expect(r.data.workers.edges[0].node).toMatchObject({ name: 'liar', validatedCount: 0, mismatchCount: 1 });
    expect(r.data.workers.edges[0].node.reputation).toBeCloseTo(1 / 7, 9);
  });

  it(
    "a sharded checkable job: each shard's check settles before the merge, which uses the verified results",
    { timeout: 240_000 },
    async () => {
      const pi = readFileSync(path.join(repoRoot, 'examples/montecarlo-pi/pi.py'), 'utf8');
      const manifest = [{ path: 'pi.py', sha256: (await api.putBlob(pi, submitter.token)).sha256 }];
      const r = await api.gql(
        `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
        { i: { title: 'pi', request: 'estimate pi with 30000 samples', files: manifest } },
        submitter.token,
      );
      const id = r.data.createJob.id as string;
      const jobId = Buffer.from(id, 'base64').toString().split(':')[1]!;
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      expect(job.currentPlan.requirements.checkable).toBeTruthy(); // seeded through --seed
      const shards = await prisma.task.findMany({
        where: { jobId, kind: 'SHARD' },
        include: { resultCheck: true, currentAttempt: { include: { worker: true } } },
      });
      expect(shards.length).toBeGreaterThanOrEqual(2);
      // The liar (under the threshold) ran none of them.
      for (const s of shards) expect(s.currentAttempt!.worker.name).not.toBe('liar');
      // Every shard's result was checked (replicated or not, by its worker's share) and settled.
      for (const s of shards) expect(['MATCHED', 'SKIPPED']).toContain(s.resultCheck?.status);
      const events = await prisma.jobEvent.findMany({
        where: { jobId, kind: { in: ['trust.check', 'shards.merged'] } },
        orderBy: { id: 'asc' },
      });
      const merged = events.findIndex((e) => e.kind === 'shards.merged');
      expect(merged).toBe(events.length - 1); // after every check's last decision
      expect(events.filter((e) => (e.payload as any).step === 'sampled')).toHaveLength(shards.length);
      const replicated = shards.filter((s) => s.resultCheck!.status === 'MATCHED');
      expect(events.filter((e) => (e.payload as any).step === 'matched')).toHaveLength(replicated.length);
      // The merged sample count is every shard's.
      const result = await json(job.outputs.find((o: any) => o.path === 'outputs/result.json').sha256);
      expect(result.samples).toBe(30000);
    },
  );
});
