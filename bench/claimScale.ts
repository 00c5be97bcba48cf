/**
 * (d) The claim as the queue grows: claim latency with Q queued tasks (default 10k, 100k, 1M)
 * spread over J jobs of U users (default 1,000 jobs, 100 users), all eligible for the one idle
 * worker that claims.
 *
 * A real API (own process). Users and jobs over the public API; the queue is filled with one
 * INSERT … SELECT FROM generate_series per size, cloning a task made by the domain's createTask
 * (every column as it writes it; jobs and owners round-robin, ages spread), then ANALYZE. Per
 * size, R claims over GraphQL (`claimTask`, waitMs 0, max S: the worker's free slots) are timed
 * one at a time; each claimed task is completed (not timed), so the queue stays at its size and
 * the worker's slots free. Also the claim statement's own time in PostgreSQL (EXPLAIN ANALYZE of
 * the claim CTE's candidate selection is not printed: the API's latency is the figure).
 */
import pg from 'pg';
import { loadConfig } from '../api/src/config.js';
import { claimTasks } from '../api/src/db/sql/claimTasks.js';
import { setUpOwner, startApi, taskFactory, type Owner } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { SimWorker } from './lib/simWorker.js';
import { mapLimit, round, summarize } from './lib/stats.js';

const DEFAULTS = { sizes: '10000,100000,1000000', users: 100, jobs: 1000, claims: 60, slots: 4, explain: 0 };
const USAGE = `usage: node --import tsx bench/claimScale.ts [--sizes 10000,100000,1000000] [--users 100] [--jobs 1000] [--claims 60] [--slots 4]
                 [--explain 1] [--pg postgres://postgres@127.0.0.1:5432/postgres]
  --explain 1 prints the claim statement's EXPLAIN (ANALYZE, BUFFERS) at each size (run in a transaction rolled back).`;

export async function claimScale(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const sizes = String(o.sizes)
    .split(',')
    .map(Number)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  const { machine, startedAt } = await startBench(
    `claim latency vs queue size (${sizes.join(', ')} queued; ${o.jobs} jobs of ${o.users} users)`,
    o.pg,
  );
  const db = await createDatabase(o.pg, 'claimscale');
  const api = await startApi(db.url, {});
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    console.log(`${o.users} users with ${o.jobs} jobs …`);
    const perUser = Math.max(1, Math.round(o.jobs / o.users));
    const owners: Owner[] = await mapLimit(Array.from({ length: o.users }), 8, (_, i) =>
      setUpOwner(api, i === 0 ? 1 : 0, { jobs: perUser, concurrency: 1 }),
    );
    const jobs = owners.flatMap((w) => w.jobs);
    const jobOwner = await client.query<{ id: string; userId: string }>(
      `SELECT id, "ownerId" AS "userId" FROM "Job" WHERE id = ANY($1::uuid[])`,
      [jobs.map((j) => j.jobId)],
    );
    const ownerOf = new Map(jobOwner.rows.map((r) => [r.id, r.userId]));
    // The template: a task exactly as the domain writes it.
    const f = await taskFactory(db.url, owners[0]!, 2);
    const template = await f.create();
    await f.close();
    const columns = (
      await client.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'Task' ORDER BY ordinal_position`,
      )
    ).rows.map((r) => r.column_name);
    const over: Record<string, string> = {
      id: 'gen_random_uuid()',
      jobId: `($2::uuid[])[1 + (g % $5)]`,
      ownerId: `($3::uuid[])[1 + (g % $5)]`,
      codeVersionId: `($4::uuid[])[1 + (g % $5)]`,
      createdAt: `t."createdAt" - make_interval(secs => g * 0.001)`,
      runAfter: `t."runAfter" - interval '1 hour'`,
    };
    const fill = `INSERT INTO "Task" (${columns.map((c) => `"${c}"`).join(', ')})
      SELECT ${columns.map((c) => over[c] ?? `t."${c}"`).join(', ')}
      FROM generate_series(1, $6::int) g, "Task" t WHERE t.id = $1::uuid`;
    const args = (n: number) => [
      template.id,
      jobs.map((j) => j.jobId),
      jobs.map((j) => ownerOf.get(j.jobId)!),
      jobs.map((j) => j.codeVersionId),
      jobs.length,
      n,
    ];

    const worker = new SimWorker(api.url, owners[0]!.workerTokens[0]!, 'claimer');
    await worker.hello(o.slots);
    const figures: Record<string, number> = {};
    const rows: string[] = [];
    let queued = 1;
    for (const size of sizes) {
      const t0 = performance.now();
      for (let left = size - queued; left > 0; left -= 100_000) await client.query(fill, args(Math.min(left, 100_000)));
      queued = size;
      await client.query('ANALYZE "Task"');
      const filledSec = (performance.now() - t0) / 1000;
      // Warm-up, then R timed claims; each claimed task is completed so the slots are free.
      for (const l of await worker.claim(0, o.slots)) await worker.completeOne(l);
      const samples: number[] = [];
      let got = 0;
      for (let i = 0; i < o.claims; i++) {
        const c0 = performance.now();
        const leases = await worker.claim(0, o.slots);
        samples.push(performance.now() - c0);
        got += leases.length;
        for (const l of leases) await worker.completeOne(l);
      }
      if (o.explain) console.log(await explainClaim(client, worker.workerId!, o.slots));
      const s = summarize(samples);
      figures[`p50Ms_${size}`] = round(s.p50, 2);
      figures[`p99Ms_${size}`] = round(s.p99, 2);
      figures[`tasksPerClaim_${size}`] = round(got / o.claims, 2);
      rows.push(
        `${size.toLocaleString('en')} queued: claim p50 ${round(s.p50, 1)} ms, p99 ${round(s.p99, 1)} ms, ${round(got / o.claims, 2)} tasks per claim (filled in ${round(filledSec, 1)} s)`,
      );
      console.log(rows.at(-1));
    }
    const first = figures[`p50Ms_${sizes[0]}`]!;
    const last = figures[`p50Ms_${sizes.at(-1)}`]!;
    figures.ratioLargestToSmallest = round(last / first, 2);
    return {
      name: 'claimScale',
      command: commandFor('claimScale', o, DEFAULTS),
      machine,
      options: o,
      figures,
      headline: `(d) claim p50 ${sizes.map((n) => `${figures[`p50Ms_${n}`]} ms @ ${n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`}`).join(', ')} — largest/smallest ${figures.ratioLargestToSmallest}× (goal ≤ 2×)`,
      startedAt: startedAt.toISOString(),
      durationSec: round((Date.now() - startedAt.getTime()) / 1000, 1),
    };
  } finally {
    await client.end();
    await api.stop();
    await db.drop();
  }
}

/** The claim statement exactly as the API sends it, under EXPLAIN ANALYZE, rolled back. */
async function explainClaim(client: pg.Client, workerId: string, max: number): Promise<string> {
  let captured: { text: string; values: unknown[] } | null = null;
  const capture = { $queryRawUnsafe: (text: string, ...values: unknown[]) => ((captured = { text, values }), Promise.resolve([])) };
  const config = loadConfig({});
  const tokenId = (await client.query<{ tokenId: string }>(`SELECT "tokenId" FROM "Worker" WHERE id = $1::uuid`, [workerId])).rows[0]!
    .tokenId;
  await claimTasks(
    capture as never,
    workerId,
    tokenId,
    max,
    new Date(),
    config.scheduler.leaseSec,
    config.rates,
    config.trust.minReputation,
  );
  const q = captured as unknown as { text: string; values: unknown[] };
  await client.query('BEGIN');
  try {
    await client.query('SET LOCAL jit = off'); // as the API's connections (db/client.ts)
    const r = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${q.text}`,
      q.values.map((v) => (v instanceof Date ? v.toISOString() : v)),
    );
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  } finally {
    await client.query('ROLLBACK');
  }
}

if (isMain(import.meta)) runAsScript(claimScale);
