/**
 * Job.shardGroup (issue 14, the job page's shard group) over rows written as the job engine
 * writes them, for the states a real run reaches only by chance or through a failure: the
 * check still running (shards PENDING), the check rejected (NOT_RUN, the record's verdict),
 * shards running with one retried after a lost attempt (its usage the contributor's loss),
 * merged, a shard failed; a job in one piece has no group, and a stranger sees none.
 * web/test/shardGroup.test.ts runs a real sharded job end to end.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { recordJobEvent } from '../src/domain/jobs/jobEvents.js';
import { createJobAt } from './helpers/agents.js';
import { startTestApi } from './helpers/api.js';

const api = await startTestApi();
const prisma = api.server.db.prisma;
const owner = await api.signUp();
const stranger = await api.signUp();
await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { __typename } }`, {}, owner.token);
const workerToken = await prisma.workerToken.findFirstOrThrow({ where: { userId: owner.userId } });
const seedWorker = (name: string) => prisma.worker.create({ data: { ownerId: owner.userId, tokenId: workerToken.id, name } });
const wa = await seedWorker('wa');
const wb = await seedWorker('wb');

const cmd = (n: number, seed: number) => `python pi.py --samples ${n} --out outputs/result.json --seed ${seed}`;
const SPEC = {
  why: 'independent samples',
  unit: 'sample',
  total: 3000,
  shards: [1, 2, 3].map((i) => ({ command: cmd(1000, 42000 + i), size: 1000, seed: 42000 + i })),
  check: { original: cmd(300, 42), shards: [1, 2, 3].map((i) => cmd(100, 42000 + i)) },
  merge: {
    file: 'outputs/result.json',
    fields: [
      { name: 'estimate', how: 'weighted-mean', weight: 'samples', stderr: 'stderr', check: 'within-k-se' },
      { name: 'samples', how: 'sum', check: 'exact' },
    ],
  },
  required: false,
};

const GROUP = `query($id: ID!) { job(id: $id) { shardGroup { phase unit totalUnits total done running queued failed retried costCad checkCostCad lostCostCad mergeFile mergeRules merged
  check { outcome reason } mergeTask { id } shards { index name size seed range command status attemptCount costCad lostCostCad task { name attempts { number status workerName } } } } } }`;
async function group(id: string, token = owner.token) {
  const r = await api.gql(GROUP, { id }, token);
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data.job?.shardGroup;
}

async function seedJob(shards: unknown) {
  const { id, jobId } = await createJobAt(api.url, owner.token, { 'pi.py': 'print(1)\n' });
  const code = await prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
  const plan = await prisma.plan.create({
    data: {
      jobId,
      version: 1,
      author: 'test',
      summary: 's',
      steps: [],
      command: cmd(3000, 42),
      requirements: { workload: 'python' },
      outputs: ['outputs'],
      acceptanceCriteria: {},
      shards: shards as never,
    },
  });
  await prisma.job.update({ where: { id: jobId }, data: { currentPlanId: plan.id, status: 'RUNNING' } });
  return { id, jobId, codeVersionId: code.id };
}

type Job = Awaited<ReturnType<typeof seedJob>>;
async function task(
  job: Job,
  kind: 'PROBE' | 'SHARD',
  name: string,
  status: 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED',
  command = 'python pi.py',
) {
  return prisma.task.create({
    data: {
      jobId: job.jobId,
      ownerId: owner.userId,
      kind,
      role: kind === 'PROBE' ? 'SHARD_CHECK' : 'SHARD',
      name,
      codeVersionId: job.codeVersionId,
      command,
      status,
    },
  });
}
/** An attempt with one usage entry of `cost` CAD (billable unless the attempt was lost). */
async function attempt(
  taskId: string,
  number: number,
  worker: { id: string },
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'LOST',
  cost: number,
  errorClass: string | null = null,
) {
  const now = new Date();
  const a = await prisma.attempt.create({
    data: {
      taskId,
      number,
      workerId: worker.id,
      fencingToken: randomBytes(8).toString('hex'),
      leaseExpiresAt: new Date(now.getTime() + 30_000),
      status,
      errorClass,
      startedAt: now,
      finishedAt: status === 'RUNNING' ? null : now,
    },
  });
  const jobId = (await prisma.task.findUniqueOrThrow({ where: { id: taskId } })).jobId;
  await prisma.usageEntry.create({
    data: {
      jobId,
      attemptId: a.id,
      periodStart: now,
      periodEnd: now,
      cpuCoreHours: 0.01,
      ramGbHours: 0.01,
      accelHours: 0,
      costCad: cost,
      billable: status !== 'LOST',
    },
  });
  await prisma.task.update({ where: { id: taskId }, data: { attemptCount: number, currentAttemptId: a.id } });
  return a;
}
async function adaptationRecord(job: Job, outcome: 'ACCEPTED' | 'REJECTED', reason: string) {
  const code = await prisma.codeVersion.findUniqueOrThrow({ where: { id: job.codeVersionId } });
  return prisma.preparationRecord.create({
    data: {
      jobId: job.jobId,
      step: 'shard',
      kind: 'adaptation',
      revision: 0,
      required: false,
      transformation: 'shard ×3',
      outcome,
      reason,
      hardware: {},
      originalCodeId: code.id,
      originalManifestSha: 'x'.repeat(64),
    },
  });
}

describe('Job.shardGroup', () => {
  it('is null for a job in one piece (and before a plan)', async () => {
    const job = await seedJob(null);
    expect(await group(job.id)).toBeNull();
    const { id } = await createJobAt(api.url, owner.token, { 'a.py': 'print(2)\n' });
    expect(await group(id)).toBeNull();
  });

  it('follows a job from the check to the merge: pending shards, the verdict, a lost attempt retried elsewhere, the costs apart', async () => {
    const job = await seedJob(SPEC);
    // The check runs: the shards wait for it, PENDING; what the check's runs cost is apart.
    const original = await task(job, 'PROBE', 'adapt:original', 'RUNNING');
    await attempt(original.id, 1, wa, 'RUNNING', 0.25);
    let g = await group(job.id);
    expect(g).toMatchObject({
      phase: 'CHECKING',
      unit: 'sample',
      totalUnits: 3000,
      total: 3,
      done: 0,
      running: 0,
      queued: 3,
      failed: 0,
      retried: 0,
      costCad: 0,
      checkCostCad: 0.25,
      lostCostCad: 0,
      check: null,
      merged: null,
      mergeTask: null,
    });
    expect(g.mergeFile).toBe('outputs/result.json');
    expect(g.mergeRules).toEqual(['estimate: weighted-mean', 'samples: sum']);
    expect(g.shards).toEqual(
      [1, 2, 3].map((i) => ({
        index: i,
        name: `shard-${i}`,
        size: 1000,
        seed: 42000 + i,
        range: null,
        command: cmd(1000, 42000 + i),
        status: 'PENDING',
        attemptCount: 0,
        costCad: 0,
        lostCostCad: 0,
        task: null,
      })),
    );

    // Accepted: the shards run; shard-2's first attempt is lost with its worker and retried elsewhere.
    await prisma.task.update({ where: { id: original.id }, data: { status: 'SUCCEEDED' } });
    await adaptationRecord(job, 'ACCEPTED', 'Adaptation accepted (3 shards of 3000 samples): agrees.');
    const [s1, s2, s3] = await Promise.all(
      [1, 2, 3].map((i) => task(job, 'SHARD', `shard-${i}`, i === 3 ? 'QUEUED' : 'RUNNING', cmd(1000, 42000 + i))),
    );
    await attempt(s1!.id, 1, wa, 'SUCCEEDED', 1);
    await prisma.task.update({ where: { id: s1!.id }, data: { status: 'SUCCEEDED' } });
    await attempt(s2!.id, 1, wa, 'LOST', 0.5, 'LEASE_EXPIRED');
    await attempt(s2!.id, 2, wb, 'RUNNING', 2);
    g = await group(job.id);
    expect(g).toMatchObject({
      phase: 'RUNNING',
      done: 1,
      running: 1,
      queued: 1,
      failed: 0,
      retried: 1,
      costCad: 3,
      checkCostCad: 0.25,
      lostCostCad: 0.5,
    });
    expect(g.check).toEqual({ outcome: 'ACCEPTED', reason: 'Adaptation accepted (3 shards of 3000 samples): agrees.' });
    expect(g.shards.map((s: any) => [s.status, s.attemptCount, s.costCad, s.lostCostCad])).toEqual([
      ['SUCCEEDED', 1, 1, 0],
      ['RUNNING', 2, 2, 0.5],
      ['QUEUED', 0, 0, 0],
    ]);
    expect(g.shards[1].task).toEqual({
      name: 'shard-2',
      attempts: [
        { number: 1, status: 'LOST', workerName: 'wa' },
        { number: 2, status: 'RUNNING', workerName: 'wb' },
      ],
    });

    // All done and merged once: the merged result as the merge event recorded it.
    await prisma.task.update({ where: { id: s2!.id }, data: { status: 'SUCCEEDED' } });
    await attempt(s3!.id, 1, wb, 'SUCCEEDED', 1.5);
    await prisma.task.update({ where: { id: s3!.id }, data: { status: 'SUCCEEDED' } });
    await recordJobEvent(prisma, job.jobId, 'shards.merged', {
      shards: 3,
      file: 'outputs/result.json',
      merged: { estimate: 3.14, samples: 3000 },
    });
    g = await group(job.id);
    expect(g).toMatchObject({
      phase: 'MERGED',
      done: 3,
      running: 0,
      queued: 0,
      retried: 1,
      costCad: 4.5,
      merged: { estimate: 3.14, samples: 3000 },
    });

    // Nobody else's.
    expect((await api.gql(GROUP, { id: job.id }, stranger.token)).data.job).toBeNull();
  });

  it('a failed shard fails the group; a rejected check leaves the shards NOT_RUN with its report', async () => {
    const failing = await seedJob(SPEC);
    await adaptationRecord(failing, 'ACCEPTED', 'ok');
    const shard = await task(failing, 'SHARD', 'shard-1', 'FAILED');
    await attempt(shard.id, 1, wa, 'FAILED', 0.75, 'EXIT_NONZERO');
    let g = await group(failing.id);
    expect(g).toMatchObject({ phase: 'FAILED', done: 0, failed: 1, queued: 2, costCad: 0.75 });

    const rejected = await seedJob({ ...SPEC, shards: SPEC.shards.map((s, i) => ({ ...s, range: [i * 1000, (i + 1) * 1000] })) });
    await adaptationRecord(
      rejected,
      'REJECTED',
      'Adaptation rejected: samples: merged 100 ≠ unsharded 300 (exact). Next: running it unsharded.',
    );
    g = await group(rejected.id);
    expect(g).toMatchObject({
      phase: 'REJECTED',
      done: 0,
      queued: 0,
      costCad: 0,
      check: { outcome: 'REJECTED', reason: expect.stringContaining('merged 100 ≠ unsharded 300') },
    });
    expect(g.shards.map((s: any) => [s.status, s.range])).toEqual([
      ['NOT_RUN', [0, 1000]],
      ['NOT_RUN', [1000, 2000]],
      ['NOT_RUN', [2000, 3000]],
    ]);
  });
});
