/**
 * More shapes of divisible work (issue 14), end to end with the builtin planner, the scheduler
 * and three real worker processes sharing one API: a batch of files in a folder (each shard
 * keeps its slice, the merge is the union of the result files), the rows of a CSV (the rows of
 * the output CSV concatenated in order), the project's own merge script (a MERGE task on a
 * worker, in the check and in the full run) — a planted wrong merge script rejected with the
 * report, a merge script that fails in the check (rejected, run unsharded) or after the shards
 * (the job fails naming it) —, a sweep loop with no flags run through the generated driver, an evaluation over
 * index ranges (--start/--end, a count-weighted mean); the planner refuses a loop that carries
 * state, a batch too small to pay for its check and a Monte-Carlo count with no seed flag (the
 * shape of a public script whose count is a positional argument), and says why. Every merged result is
 * compared with the unsharded program run here on the same inputs.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { createJobAt } from './helpers/agents.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';

const api = await startTestApi(
  { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '5' },
  { scheduler: true, model: createBuiltinClient() },
);
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
for (const name of ['shape-a', 'shape-b', 'shape-c'])
  await startWorker(api.url, wt.data.createWorkerToken.token, name, ['--python', '/usr/bin/python3']);
const prisma = api.server.db.prisma;
const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { summary steps shards } outputs { path sha256 size } } }`;

const submit = (files: Record<string, string>, request: string) => createJobAt(api.url, user.token, files, request);

async function finished(id: string) {
  const end = Date.now() + 200_000;
  for (;;) {
    const job = (await api.gql(JOB, { id }, user.token)).data.job;
    if (['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(job.status)) return job;
    if (Date.now() > end) throw new Error(`timed out: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

const text = async (job: any, p: string) => {
  const o = job.outputs.find((x: any) => x.path === p);
  if (!o) throw new Error(`no output ${p} among ${job.outputs.map((x: any) => x.path).join(', ')}`);
  return (await api.getBlob(o.sha256, user.token)).bytes.toString('utf8');
};
const tasksOf = (jobId: string) => prisma.task.findMany({ where: { jobId }, include: { attempts: { include: { worker: true } } } });
const recordOf = (jobId: string) => prisma.preparationRecord.findFirstOrThrow({ where: { jobId, kind: 'adaptation' } });

/** Runs the unsharded program here on the same files; returns its folder. */
function runHere(files: Record<string, string>, args: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'shape-'));
  for (const [p, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), content);
  }
  execFileSync('python3', args, { cwd: dir });
  return dir;
}

const PROCESS = `"""Upper-cases every text file of a folder: one output file per input file."""
import argparse
import os

p = argparse.ArgumentParser()
p.add_argument("--input-dir", default="data")
p.add_argument("--out", default="outputs/")
a = p.parse_args()
os.makedirs(a.out, exist_ok=True)
for name in sorted(os.listdir(a.input_dir)):
    with open(os.path.join(a.input_dir, name)) as f:
        text = f.read()
    with open(os.path.join(a.out, name + ".upper"), "w") as f:
        f.write(text.upper())
`;
const docs = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`data/doc${i + 1}.txt`, `line one of ${i + 1}\nsecond line ${i + 1}\n`]));

const COUNT = `"""Counts the words of every text file of a folder."""
import argparse
import json
import os

p = argparse.ArgumentParser()
p.add_argument("--input-dir", default="texts")
p.add_argument("--out", default="outputs/summary.json")
a = p.parse_args()
files = 0
words = 0
longest = ""
for name in sorted(os.listdir(a.input_dir)):
    with open(os.path.join(a.input_dir, name)) as f:
        ws = f.read().split()
    files += 1
    words += len(ws)
    longest = max(ws + [longest], key=lambda w: (len(w), w))
os.makedirs(os.path.dirname(a.out), exist_ok=True)
json.dump({"files": files, "words": words, "longest": longest}, open(a.out, "w"), indent=1)
`;
const MERGE = `"""Merges summaries written by count.py."""
import argparse
import json
import os

p = argparse.ArgumentParser()
p.add_argument("parts", nargs="+")
p.add_argument("--out", required=True)
a = p.parse_args()
parts = [json.load(open(x)) for x in a.parts]
merged = {
    "files": sum(x["files"] for x in parts),
    "words": sum(x["words"] for x in parts),
    "longest": max((x["longest"] for x in parts), key=lambda w: (len(w), w)),
}
os.makedirs(os.path.dirname(a.out), exist_ok=True)
json.dump(merged, open(a.out, "w"), indent=1)
`;
const texts = Object.fromEntries(
  ['alpha beta gamma', 'delta epsilon', 'zeta eta theta iota kappa', 'lambda mu', 'omicron pi rho sigma', 'upsilon phi chi psi omega'].map(
    (t, i) => [`texts/t${i + 1}.txt`, `${t}\n`],
  ),
);

describe('sharding batches, merge scripts, driver loops and dataset ranges', () => {
  it(
    'a folder of files: each shard keeps its slice, the union of result files equals the unsharded run byte for byte',
    { timeout: 240_000 },
    async () => {
      const files = { 'process.py': PROCESS, ...docs(6) };
      const { id, jobId } = await submit(files, 'upper-case the documents');
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      const spec = job.currentPlan.shards;
      expect(spec).toMatchObject({
        transformation: 'slice',
        inputs: { kind: 'files', path: 'data', count: 6 },
        merge: { kind: 'files', file: 'outputs/' },
      });
      expect(spec.shards.map((s: any) => [s.command, s.range])).toEqual(
        [
          [0, 2],
          [2, 4],
          [4, 6],
        ].map(([a, b]) => [`python -m chatgpu.shard files data ${a} ${b} && python process.py --out outputs`, [a, b]]),
      );
      expect(spec.check.original).toBe('python -m chatgpu.shard files data 0 3 && python process.py --out outputs');
      expect(job.currentPlan.summary).toContain('Split the 6 files of data into 3 shards');
      const record = await recordOf(jobId);
      expect(record.outcome).toBe('ACCEPTED');
      expect(record.reason).toContain('3 files under outputs/: the same paths, byte for byte (exact)');
      // Each shard's task handled only its own files.
      const shards = (await tasksOf(jobId)).filter((t) => t.kind === 'SHARD').sort((a, b) => a.name.localeCompare(b.name));
      expect(shards.map((t) => ((t.result as any).outputs as any[]).map((o) => o.path).sort())).toEqual([
        ['outputs/doc1.txt.upper', 'outputs/doc2.txt.upper'],
        ['outputs/doc3.txt.upper', 'outputs/doc4.txt.upper'],
        ['outputs/doc5.txt.upper', 'outputs/doc6.txt.upper'],
      ]);
      const here = runHere(files, ['process.py', '--input-dir', 'data', '--out', 'outputs/']);
      const names = readdirSync(path.join(here, 'outputs')).sort();
      expect(
        job.outputs
          .map((o: any) => o.path)
          .filter((p: string) => p.startsWith('outputs/'))
          .sort(),
      ).toEqual(names.map((n) => `outputs/${n}`));
      for (const n of names) expect(await text(job, `outputs/${n}`)).toBe(readFileSync(path.join(here, 'outputs', n), 'utf8'));
    },
  );

  it(
    'the rows of a CSV: each shard keeps its rows, the output rows concatenate in order to the unsharded output exactly',
    { timeout: 240_000 },
    async () => {
      const rows = ['id,name,score', ...Array.from({ length: 12 }, (_, i) => `${i},"item, ${i}",${(i * 7) % 10}`)].join('\n') + '\n';
      const score = `import argparse, csv, os
p = argparse.ArgumentParser()
p.add_argument("--input", default="data/rows.csv")
p.add_argument("--out", default="outputs/scored.csv")
a = p.parse_args()
os.makedirs(os.path.dirname(a.out), exist_ok=True)
with open(a.input, newline="") as f, open(a.out, "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["id", "label", "double"])
    for row in csv.DictReader(f):
        w.writerow([row["id"], row["name"].upper(), int(row["score"]) * 2])
`;
      const files = { 'score.py': score, 'data/rows.csv': rows };
      const { id, jobId } = await submit(files, 'score the rows');
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      const spec = job.currentPlan.shards;
      expect(spec).toMatchObject({
        inputs: { kind: 'rows', path: 'data/rows.csv', count: 12 },
        merge: { kind: 'rows', file: 'outputs/scored.csv' },
      });
      expect(spec.shards.map((s: any) => s.range)).toEqual([
        [0, 4],
        [4, 8],
        [8, 12],
      ]);
      expect((await recordOf(jobId)).reason).toContain('outputs/scored.csv: merged 3 rows = unsharded 3 rows, in order (exact)');
      const here = runHere(files, ['score.py', '--input', 'data/rows.csv', '--out', 'outputs/scored.csv']);
      expect(await text(job, 'outputs/scored.csv')).toBe(readFileSync(path.join(here, 'outputs/scored.csv'), 'utf8'));
    },
  );

  it(
    "the project's merge script runs as a MERGE task on a worker, in the check and after the shards; its result equals the unsharded run",
    { timeout: 240_000 },
    async () => {
      const files = { 'count.py': COUNT, 'merge.py': MERGE, ...texts };
      const { id, jobId } = await submit(files, 'count the words');
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      const spec = job.currentPlan.shards;
      const parts = [1, 2, 3].map((i) => `shards/shard-${i}/outputs/summary.json`).join(' ');
      expect(spec.merge).toEqual({
        kind: 'script',
        file: 'outputs/summary.json',
        fields: [],
        script: { path: 'merge.py', command: `python merge.py --out outputs/summary.json ${parts}` },
      });
      const tasks = await tasksOf(jobId);
      const merges = tasks.filter((t) => t.kind === 'MERGE');
      expect(merges.map((t) => [t.name, t.status]).sort()).toEqual([
        ['adapt:merge', 'SUCCEEDED'],
        ['merge', 'SUCCEEDED'],
      ]);
      // The full run's merge was given the shards' outputs, and ran after all of them.
      const merge = merges.find((t) => t.name === 'merge')!;
      expect(((merge.environment as any).inputs as any[]).map((i) => i.path)).toEqual(
        [1, 2, 3].map((i) => `shards/shard-${i}/outputs/summary.json`),
      );
      for (const s of tasks.filter((t) => t.kind === 'SHARD'))
        expect(merge.createdAt.getTime()).toBeGreaterThanOrEqual(s.finishedAt!.getTime());
      expect((await recordOf(jobId)).reason).toContain('outputs/summary.json: merged the result = unsharded (exact)');
      expect(await prisma.jobEvent.count({ where: { jobId, kind: 'shards.merged' } })).toBe(1);
      const here = runHere(files, ['count.py']);
      expect(JSON.parse(await text(job, 'outputs/summary.json'))).toEqual(
        JSON.parse(readFileSync(path.join(here, 'outputs/summary.json'), 'utf8')),
      );
    },
  );

  it(
    'a planted wrong merge script (words averaged) fails the check: rejected with the report, the job runs unsharded',
    { timeout: 240_000 },
    async () => {
      const wrong = MERGE.replace('"words": sum(x["words"] for x in parts)', '"words": sum(x["words"] for x in parts) // len(parts)');
      const { id, jobId } = await submit({ 'count.py': COUNT, 'merge.py': wrong, ...texts }, 'count the words');
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      const record = await recordOf(jobId);
      expect(record.outcome).toBe('REJECTED');
      expect(record.reason).toMatch(
        /^Adaptation rejected \(3 shards of 6 files\): The merged result disagrees with the unsharded run: outputs\/summary\.json: merged ≠ unsharded \(words: \d+ ≠ \d+\) \(exact\)\. Next: running it unsharded\.$/,
      );
      const kinds = (await tasksOf(jobId)).map((t) => `${t.kind}:${t.name}`).sort();
      expect(kinds).toEqual([
        'MERGE:adapt:merge',
        'PROBE:adapt:original',
        'PROBE:adapt:shard-1',
        'PROBE:adapt:shard-2',
        'PROBE:adapt:shard-3',
        'RUN:run',
      ]);
      expect(JSON.parse(await text(job, 'outputs/summary.json')).words).toBe(21);
    },
  );

  it(
    'a merge script that fails: in the check the adaptation is rejected with why and the job runs unsharded; after the shards the job fails naming the merge',
    { timeout: 240_000 },
    async () => {
      const crashes = MERGE.replace('a = p.parse_args()', 'a = p.parse_args()\nraise SystemExit("merge.py: cannot merge")');
      // Passes the check (3 files) but not the full run (6 files).
      const late = MERGE.replace(
        'os.makedirs(os.path.dirname(a.out), exist_ok=True)',
        'if merged["files"] > 3:\n    raise SystemExit("merge.py: more than 3 files")\nos.makedirs(os.path.dirname(a.out), exist_ok=True)',
      );
      const a = await submit({ 'count.py': COUNT, 'merge.py': crashes, ...texts }, 'count the words');
      const b = await submit({ 'count.py': COUNT, 'merge.py': late, ...texts }, 'count the words');
      const [ja, jb] = [await finished(a.id), await finished(b.id)];
      expect(ja.status, ja.statusReason).toBe('SUCCEEDED');
      const record = await recordOf(a.jobId);
      expect(record.outcome).toBe('REJECTED');
      expect(record.reason).toMatch(
        /^Adaptation rejected \(3 shards of 6 files\): The check could not compare: merge \(`python merge\.py --out outputs\/summary\.json shards\/shard-1\/outputs\/summary\.json shards\/shard-2\/outputs\/summary\.json shards\/shard-3\/outputs\/summary\.json`\) failed: .+ Next: running it unsharded\.$/,
      );
      expect(JSON.parse(await text(ja, 'outputs/summary.json')).words).toBe(21);
      expect(jb.status).toBe('FAILED');
      expect(jb.statusReason).toMatch(
        /^The merge \(`python merge\.py --out outputs\/summary\.json .+`\) failed: .*Last error output: .*merge\.py: more than 3 files/,
      );
      expect((await recordOf(b.jobId)).outcome).toBe('ACCEPTED');
      const merge = (await tasksOf(b.jobId)).find((t) => t.name === 'merge')!;
      expect(merge.attempts.map((x) => x.status)).toEqual(['FAILED']); // a program's own error is not retried
      expect(await prisma.jobEvent.count({ where: { jobId: b.jobId, kind: 'shards.merged' } })).toBe(0);
    },
  );

  it(
    'a sweep loop with no flags runs through the generated driver on slices; the concatenated results equal the unsharded script',
    { timeout: 240_000 },
    async () => {
      const sweep = `import json, os, random

def evaluate(cfg):
    rng = random.Random(cfg["seed"])
    return {"lr": cfg["lr"], "seed": cfg["seed"], "score": round(sum(rng.random() for _ in range(200)) * cfg["lr"], 6)}

CONFIGS = [{"lr": 0.1, "seed": 1}, {"lr": 0.2, "seed": 2}, {"lr": 0.3, "seed": 3}, {"lr": 0.4, "seed": 4}, {"lr": 0.5, "seed": 5}, {"lr": 0.6, "seed": 6}]
results = []
for cfg in CONFIGS:
    results.append(evaluate(cfg))
os.makedirs("outputs", exist_ok=True)
json.dump(results, open("outputs/sweep.json", "w"), indent=1)
`;
      const { id, jobId } = await submit({ 'sweep.py': sweep }, 'run the sweep');
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      const spec = job.currentPlan.shards;
      expect(spec).toMatchObject({ transformation: 'driver', total: 6, merge: { kind: 'list', file: 'outputs/sweep.json' } });
      expect(spec.shards.map((s: any) => s.command)).toEqual(
        ['0 2', '2 4', '4 6'].map((r) => `python -m chatgpu.shard loop sweep.py 9 ${r}`),
      );
      expect((await recordOf(jobId)).reason).toContain('outputs/sweep.json: merged 3 items = unsharded (exact)');
      const here = runHere({ 'sweep.py': sweep }, ['sweep.py']);
      expect(JSON.parse(await text(job, 'outputs/sweep.json'))).toEqual(
        JSON.parse(readFileSync(path.join(here, 'outputs/sweep.json'), 'utf8')),
      );
      // The user's file is unchanged: the shards ran the uploaded code version.
      const code = await prisma.codeVersion.findMany({ where: { jobId } });
      expect(code.map((c) => c.status)).toEqual(['ORIGINAL']);
    },
  );

  it(
    'an evaluation over index ranges: --start/--end per shard, the accuracy weighted by count equals the unsharded one',
    { timeout: 240_000 },
    async () => {
      const acc = `import argparse, json, os
p = argparse.ArgumentParser()
p.add_argument("--start", type=int, default=0)
p.add_argument("--end", type=int, default=90)
p.add_argument("--out", default="outputs/eval.json")
a = p.parse_args()
correct = 0
loss = 0.0
for i in range(a.start, a.end):
    x = (i * 37) % 101 / 101
    pred = x > 0.4
    truth = (i * 13) % 7 < 4
    correct += pred == truth
    loss += (x - truth) ** 2
n = a.end - a.start
os.makedirs(os.path.dirname(a.out), exist_ok=True)
json.dump({"n": n, "correct": correct, "accuracy": correct / n, "loss": loss / n}, open(a.out, "w"))
`;
      const { id, jobId } = await submit({ 'accuracy.py': acc }, 'measure the accuracy');
      const job = await finished(id);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      const spec = job.currentPlan.shards;
      expect(spec.shards.map((s: any) => s.command)).toEqual(
        ['0 30', '30 60', '60 90']
          .map((r) => r.split(' '))
          .map(([a, b]) => `python accuracy.py --out outputs/eval.json --start ${a} --end ${b}`),
      );
      expect(spec.merge.fields).toEqual([
        { name: 'n', how: 'sum', check: 'exact' },
        { name: 'correct', how: 'sum', check: 'exact' },
        { name: 'accuracy', how: 'weighted-mean', weight: 'n', check: 'close' },
        { name: 'loss', how: 'weighted-mean', weight: 'n', check: 'close' },
      ]);
      expect((await recordOf(jobId)).outcome).toBe('ACCEPTED');
      const here = runHere({ 'accuracy.py': acc }, ['accuracy.py']);
      const whole = JSON.parse(readFileSync(path.join(here, 'outputs/eval.json'), 'utf8'));
      const merged = JSON.parse(await text(job, 'outputs/eval.json'));
      expect(merged.n).toBe(whole.n);
      expect(merged.correct).toBe(whole.correct);
      expect(Math.abs(merged.accuracy - whole.accuracy)).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(merged.loss - whole.loss)).toBeLessThanOrEqual(1e-9 * whole.loss);
    },
  );

  it(
    'does not split a loop that keeps a running best, nor a batch too small to pay for its check, and says why',
    { timeout: 240_000 },
    async () => {
      const best = `import json, os
def score(c):
    return (c * 37) % 11
best = None
for c in range(8):
    s = score(c)
    best = s if best is None or s > best else best
os.makedirs("outputs", exist_ok=True)
json.dump({"best": best}, open("outputs/best.json", "w"))
`;
      const a = await submit({ 'best.py': best }, 'find the best');
      const b = await submit({ 'process.py': PROCESS, ...docs(4) }, 'upper-case the documents');
      const [ja, jb] = [await finished(a.id), await finished(b.id)];
      expect(ja.status, ja.statusReason).toBe('SUCCEEDED');
      expect(ja.currentPlan.shards).toBeNull();
      expect(ja.currentPlan.summary).toContain(
        'Not split into shards: the variable `best` is set before the loop and updated in it (`best = s if best is None or s > best else best`), so each item depends on the ones before (the loop on line 5 of best.py).',
      );
      expect(jb.status, jb.statusReason).toBe('SUCCEEDED');
      expect(jb.currentPlan.shards).toBeNull();
      expect(jb.currentPlan.summary).toContain(
        'Not split into shards: it does not pay: the check costs about 4 files of wall time (3 unsharded, the same in 3 shards beside it) and 3 shards save about 2.67 of the 4',
      );
      for (const j of [a, b]) expect((await tasksOf(j.jobId)).map((t) => t.kind)).toEqual(['RUN']);
    },
  );

  // The shape of a public Monte-Carlo script (sdsc-complecs/batch-computing pi.py): the sample
  // count is a positional argument, there is no seed flag and the estimate is printed.
  const POSITIONAL = `#!/usr/bin/env python3
import argparse
import random

parser = argparse.ArgumentParser(description="Monte Carlo estimate of pi")
parser.add_argument("samples", type=int, help="number of random points")
parser.add_argument("-q", "--quiet", action="store_true")
args = parser.parse_args()
hits = 0
for _ in range(args.samples):
    u, v = random.random(), random.random()
    if u * u + v * v <= 1.0:
        hits += 1
print(4 * hits / args.samples)
`;
  it(
    'a sample count as a positional argument: passed from the request, not split without a seed flag (the plan says why); no count → stopped with why',
    { timeout: 240_000 },
    async () => {
      const a = await submit({ 'mc.py': POSITIONAL }, 'estimate pi with 200000 samples');
      const b = await submit({ 'mc.py': POSITIONAL }, 'estimate pi');
      const [ja, jb] = [await finished(a.id), await finished(b.id)];
      expect(ja.status, ja.statusReason).toBe('SUCCEEDED');
      expect(ja.currentPlan.shards).toBeNull();
      expect(ja.currentPlan.summary).toContain(
        'Not split into shards: the program has no seed flag, so shards could not be given distinct, reproducible random streams.',
      );
      expect((await tasksOf(a.jobId)).map((t) => [t.kind, t.command])).toEqual([['RUN', 'python mc.py 200000']]);
      expect(jb.status).toBe('FAILED');
      expect(jb.statusReason).toBe(
        'mc.py needs its positional argument `samples` (number of random points), and the request does not give it: say its value, e.g. "with 1000000 samples".',
      );
    },
  );
});
