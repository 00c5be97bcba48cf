/**
 * Sharding (issue 14): wall time of the Monte-Carlo example (examples/montecarlo-pi) run
 * unsharded and sharded on 1, 2 and 4 local worker processes.
 *
 * For each worker count W: a fresh database, a real API (own process) with the builtin planner
 * (BENCH_MODEL=builtin), TICK_INTERVAL_SEC 1, HEARTBEAT_SEC 1, and W real `chatgpu-worker`
 * processes; the example is submitted with "estimate pi with N samples" and timed from
 * createJob to SUCCEEDED (planning, the adaptation check, the shards, the merge). With one
 * worker the planner does not split (it says why) and the job is one RUN. Also printed: the
 * program run directly on this machine (no ChatGPU), and from the database the time spent in
 * the adaptation check and in the shards (or the run).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { gql, repoRoot, setUpOwner, startApi } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { round, sleep } from './lib/stats.js';
import { killWorker, startWorker, type WorkerProc } from './lib/workerProcess.js';

const DEFAULTS = { samples: 40_000_000, workers: '1,2,4', python: '/usr/bin/python3', sandbox: 'auto' };
const USAGE = `usage: node --import tsx bench/shards.ts [--samples 40000000] [--workers 1,2,4] [--python /usr/bin/python3] [--sandbox auto|bwrap|none]
                 [--pg postgres://postgres@127.0.0.1:5432/postgres]`;

interface Row {
  workers: number;
  shards: number;
  wallSec: number;
  checkSec: number | null;
  runSec: number;
  distinctWorkers: number;
  estimate: number;
}

export async function shards(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const { machine, startedAt } = await startBench(
    `shards (the Monte-Carlo example, ${o.samples} samples, unsharded vs sharded on ${o.workers} workers)`,
    o.pg,
  );
  const script = path.join(repoRoot, 'examples/montecarlo-pi/pi.py');
  const t0 = Date.now();
  const direct = JSON.parse(
    execFileSync(
      o.python,
      [script, '--samples', String(o.samples), '--out', path.join(mkdtempSync(path.join(tmpdir(), 'pi-')), 'r.json')],
      { encoding: 'utf8' },
    ),
  );
  const directSec = (Date.now() - t0) / 1000;
  console.log(`  direct: python pi.py --samples ${o.samples}: ${round(directSec, 2)} s, estimate ${direct.estimate}`);
  const rows: Row[] = [];
  for (const w of String(o.workers).split(',').map(Number)) {
    rows.push(await oneRun(o, w, readFileSync(script)));
    const r = rows.at(-1)!;
    console.log(
      `  ${w} worker(s): ${r.shards ? `${r.shards} shards on ${r.distinctWorkers} workers` : 'unsharded'}, wall ${r.wallSec} s (check ${r.checkSec ?? '—'} s, ${r.shards ? 'shards' : 'run'} ${r.runSec} s), estimate ${r.estimate}`,
    );
  }
  const table = [
    '| workers | how it ran | wall time, submit → succeeded (s) | adaptation check (s) | shards / run (s) | estimate |',
    '|---|---|---|---|---|---|',
    `| — | the program directly, no ChatGPU | ${round(directSec, 2)} | — | — | ${direct.estimate} |`,
    ...rows.map(
      (r) =>
        `| ${r.workers} | ${r.shards ? `${r.shards} shards on ${r.distinctWorkers} workers` : 'unsharded (1 RUN)'} | ${r.wallSec} | ${r.checkSec ?? '—'} | ${r.runSec} | ${r.estimate} |`,
    ),
  ].join('\n');
  console.log(`\n${table}\n`);
  const base = rows.find((r) => !r.shards);
  return {
    name: 'shards',
    command: commandFor('shards', o, { ...DEFAULTS, pg: o.pg }),
    machine,
    options: o,
    startedAt: startedAt.toISOString(),
    durationSec: round((Date.now() - startedAt.getTime()) / 1000),
    headline: rows.map((r) => `${r.workers} worker(s) ${r.wallSec} s`).join(', ') + ` (direct ${round(directSec, 2)} s)`,
    figures: Object.fromEntries([
      ['direct (s)', round(directSec, 2)],
      ...rows.map((r) => [`${r.workers} worker(s): wall (s)`, r.wallSec]),
      ...rows.map((r) => [`${r.workers} worker(s): shards`, r.shards]),
      ...(base
        ? rows.filter((r) => r.shards).map((r) => [`${r.workers} worker(s): speed-up over 1 worker`, round(base.wallSec / r.wallSec, 2)])
        : []),
    ]),
  };
}

async function oneRun(o: typeof DEFAULTS & { pg: string }, workers: number, pi: Buffer): Promise<Row> {
  const db = await createDatabase(o.pg, `shards${workers}`);
  const api = await startApi(db.url, { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', BENCH_MODEL: 'builtin' });
  const procs: WorkerProc[] = [];
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const owner = await setUpOwner(api, 1);
    for (let i = 0; i < workers; i++) procs.push(await startWorker(api.url, owner.workerTokens[0]!, `sh-${i}`, o));
    const sha = createHash('sha256').update(pi).digest('hex');
    await fetch(`${api.url}/blobs/${sha}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${owner.userToken}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(pi),
    });
    const started = Date.now();
    const j = await gql(
      api.url,
      `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } ... on Error { message } } }`,
      {
        i: { title: 'pi', request: `estimate pi with ${o.samples} samples`, files: [{ path: 'pi.py', sha256: sha }] },
      },
      owner.userToken,
    );
    const id = j.data?.createJob?.id as string;
    if (!id) throw new Error(`createJob failed: ${JSON.stringify(j)}`);
    let job: any;
    for (;;) {
      job = (
        await gql(api.url, `query($id: ID!) { job(id: $id) { status statusReason outputs { path sha256 } } }`, { id }, owner.userToken)
      ).data?.job;
      if (['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(job?.status)) break;
      if (Date.now() - started > 1_800_000) throw new Error('the job took over 30 minutes');
      await sleep(200);
    }
    const wallSec = round((Date.now() - started) / 1000, 2);
    if (job.status !== 'SUCCEEDED') throw new Error(`the job ended ${job.status}: ${job.statusReason}`);
    const jobId = Buffer.from(id, 'base64').toString('utf8').split(':').slice(1).join(':');
    const { rows: tasks } = await client.query<{ kind: string; name: string; createdAt: Date; finishedAt: Date; workerId: string | null }>(
      `SELECT t.kind, t.name, t."createdAt", t."finishedAt", a."workerId" FROM "Task" t LEFT JOIN "Attempt" a ON a.id = t."currentAttemptId" WHERE t."jobId" = $1`,
      [jobId],
    );
    const span = (ts: typeof tasks) =>
      ts.length
        ? round((Math.max(...ts.map((t) => t.finishedAt.getTime())) - Math.min(...ts.map((t) => t.createdAt.getTime()))) / 1000, 2)
        : null;
    const check = tasks.filter((t) => t.name.startsWith('adapt:'));
    const shardRows = tasks.filter((t) => t.kind === 'SHARD');
    const run = shardRows.length ? shardRows : tasks.filter((t) => t.kind === 'RUN');
    const result = job.outputs.find((x: { path: string }) => x.path === 'outputs/result.json');
    const res = await fetch(`${api.url}/blobs/${result.sha256}`, { headers: { authorization: `Bearer ${owner.userToken}` } });
    const merged = (await res.json()) as { estimate: number };
    return {
      workers,
      shards: shardRows.length,
      wallSec,
      checkSec: span(check),
      runSec: span(run)!,
      distinctWorkers: new Set(shardRows.map((t) => t.workerId)).size,
      estimate: merged.estimate,
    };
  } finally {
    await client.end();
    for (const p of procs) await killWorker(p, 'SIGTERM');
    await api.stop();
    await db.drop();
  }
}

if (isMain(import.meta)) runAsScript(shards);
