/**
 * Adaptation by sharding (issue 14), end to end with the builtin planner, the scheduler and
 * three real worker processes: the Monte-Carlo example splits into one shard per worker with
 * recorded seeds, the adaptation check (merged bounded shards vs the unsharded bounded run)
 * passes and is recorded, the shards run on all three workers, the merge happens once and is
 * the job's output, and it agrees with the unsharded program within the stated test. A program
 * that carries state between iterations is not split (the plan says why); a planted wrong merge
 * (averaging a count that must be summed) fails the check: rejected with its report, the job
 * runs unsharded — or stops, when the plan made sharding required. A sweep over a list of seeds
 * splits into slices whose concatenated results equal the unsharded program's exactly. Last, a
 * worker SIGKILLed mid-shard: only that shard is retried, the merge happens once.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import type { ModelClient } from '../src/agents/models/types.js';
import { startTestApi } from './helpers/api.js';
import { repoRoot } from './helpers/processes.js';
import { startWorker } from './helpers/worker.js';

const builtin = createBuiltinClient();
/**
 * The builtin planner, except that a request saying PLANT-WRONG-MERGE gets a plan whose merge
 * averages the sample count (it must be summed); PLANT-REQUIRED also makes sharding required.
 */
const model: ModelClient = {
  name: 'builtin',
  respond: async (req) => {
    const res = await builtin.respond(req);
    const text = req.input.map((i) => (i.type === 'message' ? i.content : '')).join('\n');
    if (!/PLANT-WRONG-MERGE/.test(text)) return res;
    return {
      ...res,
      output: res.output.map((i) => {
        if (i.type !== 'function_call' || i.name !== 'submit_plan') return i;
        const plan = JSON.parse(i.arguments);
        if (!plan.shards) return i;
        plan.shards.merge.fields = plan.shards.merge.fields.map((f: any) => (f.name === 'samples' ? { ...f, how: 'mean' } : f));
        if (/PLANT-REQUIRED/.test(text)) plan.shards.required = true;
        return { ...i, arguments: JSON.stringify(plan) };
      }),
    };
  },
};

// A short lease, so that a killed worker's shard is found lost within seconds.
const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '5' }, { scheduler: true, model });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const token = wt.data.createWorkerToken.token;
const workers = new Map<string, Awaited<ReturnType<typeof startWorker>>>();
for (const name of ['shard-a', 'shard-b', 'shard-c'])
  workers.set(name, await startWorker(api.url, token, name, ['--python', '/usr/bin/python3']));
const prisma = api.server.db.prisma;

const PI = readFileSync(path.join(repoRoot, 'examples/montecarlo-pi/pi.py'), 'utf8');
const JOB = `query($id: ID!) { job(id: $id) { status statusReason costCad currentPlan { summary steps command shards } outputs { path sha256 size } } }`;

async function submit(files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title: 'job', request, files: manifest } },
    user.token,
  );
  const id = r.data.createJob.id as string;
  return { id, jobId: Buffer.from(id, 'base64').toString().split(':')[1]! };
}

async function finished(id: string, timeoutMs = 200_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const job = (await api.gql(JOB, { id }, user.token)).data.job;
    if (['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(job.status)) return job;
    if (Date.now() > end) throw new Error(`timed out: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

const tasksOf = (jobId: string) =>
  prisma.task.findMany({
    where: { jobId },
    orderBy: [{ createdAt: 'asc' }, { name: 'asc' }],
    include: { attempts: { include: { worker: true } } },
  });
const json = async (sha: string) => JSON.parse((await api.getBlob(sha, user.token)).bytes.toString('utf8'));

describe('sharding a Monte-Carlo estimate across workers', () => {
  it(
    'splits the example across the three workers, checks the merge against the unsharded run, runs the shards on all three and merges once',
    { timeout: 240_000 },
    async () => {
      const { id, jobId } = await submit({ 'pi.py': PI }, 'estimate pi with 60000 samples');
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      const plan = await prisma.plan.findFirstOrThrow({ where: { jobId } });
      expect(plan.smokeRun).toBeNull();
      const spec = plan.shards as any;
      expect(job.currentPlan.shards).toEqual(spec); // on the API, as stored
      expect(spec.shards).toEqual(
        [1, 2, 3].map((i) => ({
          command: `python pi.py --samples 20000 --out outputs/result.json --seed 4200${i}`,
          size: 20000,
          seed: 42000 + i,
        })),
      );
      expect(spec.check.original).toBe('python pi.py --samples 60000 --out outputs/result.json --seed 42'.replace('60000', '6000'));
      expect(job.currentPlan.summary).toMatch(
        /^Run pi\.py unchanged on 3 python workers at once\. Split into 3 shards of about 20000 samples \(one per compatible worker online\), each with its own seed \(42001, 42002, 42003\)/,
      );

      const tasks = await tasksOf(jobId);
      expect(
        tasks
          .filter((t) => t.kind === 'PROBE')
          .map((t) => [t.name, t.status])
          .sort(),
      ).toEqual([
        ['adapt:original', 'SUCCEEDED'],
        ['adapt:shard-1', 'SUCCEEDED'],
        ['adapt:shard-2', 'SUCCEEDED'],
        ['adapt:shard-3', 'SUCCEEDED'],
      ]);
      const shards = tasks.filter((t) => t.kind === 'SHARD');
      expect(shards.map((t) => [t.name, t.status, t.command])).toEqual(
        spec.shards.map((s: any, i: number) => [`shard-${i + 1}`, 'SUCCEEDED', s.command]),
      );
      expect(tasks.filter((t) => t.kind === 'RUN')).toEqual([]);
      // One shard per worker: all three took part.
      const workers = shards.map((t) => t.attempts.find((a) => a.status === 'SUCCEEDED')!.worker.name);
      expect(new Set(workers)).toEqual(new Set(['shard-a', 'shard-b', 'shard-c']));
      // The shards were leased only after the check had finished.
      const checkDone = Math.max(...tasks.filter((t) => t.kind === 'PROBE').map((t) => t.finishedAt!.getTime()));
      for (const s of shards) expect(s.createdAt.getTime()).toBeGreaterThanOrEqual(checkDone);

      const [record] = await prisma.preparationRecord.findMany({ where: { jobId } });
      expect(record).toMatchObject({ kind: 'adaptation', step: 'shard', outcome: 'ACCEPTED', transformation: 'shard ×3', required: false });
      expect(record!.reason).toMatch(
        /^Adaptation accepted \(3 shards of 60000 samples\): The merged result agrees with the unsharded run: estimate: merged [\d.]+ vs unsharded [\d.]+, \|Δ\| [\d.e-]+ ≤ 4 combined standard errors \([\d.]+\); samples: merged 6000 = unsharded 6000 \(exact\)\. Next: running 3 shards in parallel\.$/,
      );
      expect((record!.numericalCheck as any).ok).toBe(true);
      expect((record!.timings as any).seeds).toEqual([42001, 42002, 42003]);

      // The merge: once, and it is the job's output (each shard's own files kept under shards/).
      const merges = await prisma.jobEvent.findMany({ where: { jobId, kind: 'shards.merged' } });
      expect(merges).toHaveLength(1);
      expect(job.outputs.map((o: any) => o.path).sort()).toEqual([
        'outputs/result.json',
        'shards/shard-1/outputs/result.json',
        'shards/shard-2/outputs/result.json',
        'shards/shard-3/outputs/result.json',
      ]);
      const merged = await json(job.outputs.find((o: any) => o.path === 'outputs/result.json').sha256);
      const parts = await Promise.all(
        [1, 2, 3].map((i) => json(job.outputs.find((o: any) => o.path === `shards/shard-${i}/outputs/result.json`).sha256)),
      );
      expect(parts.map((p) => p.samples)).toEqual([20000, 20000, 20000]);
      expect(merged.samples).toBe(60000);
      expect(merged.hits).toBe(parts.reduce((s, p) => s + p.hits, 0));
      expect(merged.estimate).toBeCloseTo((4 * merged.hits) / 60000, 12);

      // Against the unsharded program on the full workload: within 4 combined standard errors.
      const dir = mkdtempSync(path.join(tmpdir(), 'pi-'));
      const whole = JSON.parse(
        execFileSync(
          'python3',
          [path.join(repoRoot, 'examples/montecarlo-pi/pi.py'), '--samples', '60000', '--seed', '42', '--out', path.join(dir, 'r.json')],
          { encoding: 'utf8' },
        ),
      );
      expect(whole.samples).toBe(merged.samples);
      expect(Math.abs(merged.estimate - whole.estimate)).toBeLessThanOrEqual(4 * Math.hypot(merged.stderr, whole.stderr));

      // The cost is that of every attempt: the check's runs and the shards.
      const usage = await prisma.usageEntry.aggregate({ where: { attempt: { task: { jobId } } }, _sum: { costCad: true } });
      expect(Number(job.costCad)).toBeCloseTo(Number(usage._sum.costCad ?? 0), 6);
      expect(Number(job.costCad)).toBeGreaterThan(0);
    },
  );

  it('does not split a program that carries state between iterations, and the plan says why', { timeout: 200_000 }, async () => {
    const chain = `import argparse, json, math, os, random
p = argparse.ArgumentParser()
p.add_argument("--samples", type=int, default=20000)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--out", default="outputs/result.json")
a = p.parse_args()
rng = random.Random(a.seed)
x = 0.0
total = 0.0
for _ in range(a.samples):
    proposal = x + rng.uniform(-1, 1)
    x = proposal if rng.random() < math.exp((x * x - proposal * proposal) / 2) else x
    total += x * x
os.makedirs("outputs", exist_ok=True)
json.dump({"estimate": total / a.samples, "stderr": 0.01, "samples": a.samples}, open(a.out, "w"))
`;
    const { id, jobId } = await submit({ 'chain.py': chain }, 'estimate the second moment with 20000 samples');
    const job = await finished(id);
    expect(job.status, job.statusReason).toBe('SUCCEEDED');
    expect(job.currentPlan.summary).toContain(
      'Not split into shards: the variable `x` is carried from one iteration to the next (`x = proposal if rng.random() < math.exp((x * x - proposal * proposal) / 2) else x`), so later samples depend on earlier ones.',
    );
    expect((await prisma.plan.findFirstOrThrow({ where: { jobId } })).shards).toBeNull();
    const tasks = await tasksOf(jobId);
    expect(tasks.map((t) => t.kind)).not.toContain('SHARD');
    expect(tasks.filter((t) => t.kind === 'RUN').map((t) => t.status)).toEqual(['SUCCEEDED']);
    expect(await prisma.preparationRecord.count({ where: { jobId } })).toBe(0);
  });

  it('rejects a planted wrong merge (a count averaged) with the report, and runs the program unsharded', { timeout: 200_000 }, async () => {
    const { id, jobId } = await submit({ 'pi.py': PI }, 'estimate pi with 60000 samples PLANT-WRONG-MERGE');
    const job = await finished(id);
    expect(job.status, job.statusReason).toBe('SUCCEEDED');
    const [record] = await prisma.preparationRecord.findMany({ where: { jobId } });
    expect(record).toMatchObject({ kind: 'adaptation', outcome: 'REJECTED', required: false });
    expect(record!.reason).toContain('The merged result disagrees with the unsharded run');
    expect(record!.reason).toContain('samples: merged 2000 ≠ unsharded 6000 (exact)');
    expect(record!.reason).toMatch(/Next: running it unsharded\.$/);
    const tasks = await tasksOf(jobId);
    expect(tasks.filter((t) => t.kind !== 'PROBE').map((t) => [t.kind, t.name, t.status, t.command])).toEqual([
      ['RUN', 'run', 'SUCCEEDED', 'python pi.py --samples 60000 --out outputs/result.json'],
    ]);
    expect(await prisma.jobEvent.count({ where: { jobId, kind: 'shards.merged' } })).toBe(0);
    const result = await json(job.outputs.find((o: any) => o.path === 'outputs/result.json').sha256);
    expect(result.samples).toBe(60000);
  });

  it('stops the job with the report when the plan made sharding required and the check fails', { timeout: 200_000 }, async () => {
    const { id, jobId } = await submit({ 'pi.py': PI }, 'estimate pi with 60000 samples PLANT-WRONG-MERGE PLANT-REQUIRED');
    const job = await finished(id);
    expect(job.status).toBe('FAILED');
    expect(job.statusReason).toMatch(
      /^The work had to be split into shards, but the adaptation check failed: The merged result disagrees with the unsharded run: .*samples: merged 2000 ≠ unsharded 6000 \(exact\)\.$/,
    );
    expect(await prisma.preparationRecord.findFirstOrThrow({ where: { jobId } })).toMatchObject({ outcome: 'REJECTED', required: true });
    expect((await tasksOf(jobId)).filter((t) => t.kind !== 'PROBE')).toEqual([]);
  });

  it(
    'splits a sweep over seeds into slices; the concatenated results equal the unsharded program exactly',
    { timeout: 200_000 },
    async () => {
      const sweep = `import argparse, json, os, random
p = argparse.ArgumentParser()
p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
p.add_argument("--out", default="outputs/sweep.json")
a = p.parse_args()
results = []
for s in a.seeds:
    rng = random.Random(s)
    results.append({"seed": s, "mean": sum(rng.random() for _ in range(1000)) / 1000})
os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
json.dump({"results": results, "count": len(results)}, open(a.out, "w"))
`;
      const { id, jobId } = await submit({ 'sweep.py': sweep }, 'run the sweep');
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      const spec = (await prisma.plan.findFirstOrThrow({ where: { jobId } })).shards as any;
      expect(spec.shards.map((s: any) => s.command)).toEqual(
        ['1 2', '3 4', '5 6'].map((v) => `python sweep.py --out outputs/sweep.json --seeds ${v}`),
      );
      expect(spec.check.original).toBe('python sweep.py --out outputs/sweep.json --seeds 1 3 5');
      const record = await prisma.preparationRecord.findFirstOrThrow({ where: { jobId } });
      expect(record.outcome).toBe('ACCEPTED');
      expect(record.reason).toContain('count: merged 3 = unsharded 3 (exact)');
      const merged = await json(job.outputs.find((o: any) => o.path === 'outputs/sweep.json').sha256);
      const dir = mkdtempSync(path.join(tmpdir(), 'sweep-'));
      const file = path.join(dir, 'sweep.py');
      writeFileSync(file, sweep);
      execFileSync('python3', [file, '--out', path.join(dir, 'r.json')]);
      expect(merged).toEqual(JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8')));
    },
  );

  // Last: it kills one of the three workers.
  it(
    'SIGKILL of a worker mid-shard: only that shard is retried, elsewhere; the merge happens once and counts every shard once',
    { timeout: 240_000 },
    async () => {
      // 20 M samples per shard: seconds of work, so that a shard is caught RUNNING.
      const { id, jobId } = await submit({ 'pi.py': PI }, 'estimate pi with 60000000 samples');
      const running = await (async () => {
        const end = Date.now() + 150_000;
        for (;;) {
          const a = await prisma.attempt.findFirst({
            where: { status: 'RUNNING', task: { jobId, kind: 'SHARD' } },
            include: { worker: true, task: true },
          });
          if (a) return a;
          if (Date.now() > end || (await prisma.task.count({ where: { jobId, kind: 'SHARD', status: 'SUCCEEDED' } })) === 3)
            throw new Error('no shard was caught running');
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      await workers.get(running.worker.name)!.stop('SIGKILL');
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      const shards = (await tasksOf(jobId)).filter((t) => t.kind === 'SHARD');
      expect(shards).toHaveLength(3);
      for (const t of shards) {
        const attempts = [...t.attempts].sort((a, b) => a.number - b.number);
        if (t.id === running.taskId) {
          // Lost with its worker, then done once elsewhere.
          expect(attempts.map((a) => a.status)).toEqual(['LOST', 'SUCCEEDED']);
          expect(attempts[1]!.worker.name).not.toBe(running.worker.name);
        } else expect(attempts.map((a) => a.status)).toEqual(['SUCCEEDED']);
      }
      expect(await prisma.jobEvent.count({ where: { jobId, kind: 'shards.merged' } })).toBe(1);
      const merged = await json(job.outputs.find((o: any) => o.path === 'outputs/result.json').sha256);
      const parts = await Promise.all(
        [1, 2, 3].map((i) => json(job.outputs.find((o: any) => o.path === `shards/shard-${i}/outputs/result.json`).sha256)),
      );
      expect(merged.samples).toBe(60_000_000);
      expect(merged.hits).toBe(parts.reduce((s, p) => s + p.hits, 0));
    },
  );
});
