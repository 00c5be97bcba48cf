/**
 * Trust-weighted validation (issue 17 part 3, api/src/domain/trust): how much is replicated, and
 * how many wrong results are caught, with real worker processes of several owners, one or more of
 * them planted liars.
 *
 * A fresh database, a real API (own process) with the builtin planner (BENCH_MODEL=builtin),
 * TICK_INTERVAL_SEC 1, HEARTBEAT_SEC 1; H honest owners and L lying owners with one real
 * `chatgpu-worker` each (a liar is a copy of worker/ whose Python start-up nudges the numbers its
 * tasks write in a share `--lie-rate` of its runs: bench/lib/lyingWorker.ts). J small
 * deterministic programs (each its own constant) are submitted as jobs, C at a time; the planner
 * marks them checkable. The right answer of each is computed by running it directly on this
 * machine. Printed, from the database: the share of checkable results replicated (overall, in the
 * first and the last third of the jobs, for honest workers and for liars), the wrong results
 * returned, caught (a tie-breaker outvoted them) and escaped (never replicated), honest workers
 * wrongly accused, wrong outputs delivered to users, the liars' final reputation and the
 * checkable work they got after falling under the threshold, and what replication cost (share
 * of the users' cost).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { DEFAULT_TRUST_POLICY } from '../api/src/domain/trust/reputation.js';
import { gql, startApi } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { lyingWorkerCheckout } from './lib/lyingWorker.js';
import { round, sleep } from './lib/stats.js';
import { killWorker, startWorker, type WorkerProc } from './lib/workerProcess.js';

const DEFAULTS = { jobs: 60, honest: 4, liars: 1, lieRate: 1, concurrency: 3, python: '/usr/bin/python3', sandbox: 'auto' };
const USAGE = `usage: node --import tsx bench/trust.ts [--jobs 60] [--honest 4] [--liars 1] [--lie-rate 1] [--concurrency 3]
                 [--python /usr/bin/python3] [--sandbox auto|bwrap|none] [--pg postgres://postgres@127.0.0.1:5432/postgres]`;

/** A small deterministic program; `k` makes each job's answer its own. */
const program = (k: number) => `import json, os
os.makedirs("outputs", exist_ok=True)
K = ${k}
xs = [((i * 7919) % 1000) / 7.0 for i in range(1, 20001)]
result = {"k": K, "sum": sum(x * K for x in xs), "max": max(xs) * K}
with open("outputs/result.json", "w") as f:
    json.dump(result, f)
`;

/** The API's default TRUST_MIN_REPUTATION (config.ts), which the benchmark's API runs with. */
const THRESHOLD = DEFAULT_TRUST_POLICY.minReputation;

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

async function owner(url: string, label: string) {
  const s = await gql(url, `mutation($i: SignUpInput!) { signUp(input: $i) { __typename ... on AuthPayload { token } } }`, {
    i: { email: `trust-${label}-${Date.now()}@example.com`, password: 'benchmark password 1' },
  });
  const token = s.data?.signUp?.token as string | undefined;
  if (!token) throw new Error(`signUp failed: ${JSON.stringify(s)}`);
  const w = await gql(
    url,
    `mutation { createWorkerToken(input: {name: "w"}) { __typename ... on CreatedWorkerToken { token } } }`,
    {},
    token,
  );
  return { token, workerToken: w.data.createWorkerToken.token as string };
}

export async function trust(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  if (o.lieRate > 1) throw new Error(`--lie-rate is a share of runs, 0 to 1\n${USAGE}`);
  if (o.honest < 3) throw new Error(`--honest must be at least 3: a mismatch needs a third owner's worker as tie-breaker\n${USAGE}`);
  const { machine, startedAt } = await startBench(
    `trust (${o.jobs} checkable jobs, ${o.honest} honest owners, ${o.liars} lying owner(s) at lie rate ${o.lieRate})`,
    o.pg,
  );
  // The right answers: each program run directly here (its bytes are what an honest worker returns).
  const dir = mkdtempSync(path.join(tmpdir(), 'trust-bench-'));
  const expected = new Map<number, string>();
  for (let k = 1; k <= o.jobs; k++) {
    writeFileSync(path.join(dir, 'p.py'), program(k));
    execFileSync(o.python, ['p.py'], { cwd: dir });
    expected.set(k, sha256(execFileSync('cat', ['outputs/result.json'], { cwd: dir })));
  }
  const db = await createDatabase(o.pg, 'trust');
  const api = await startApi(db.url, { BENCH_MODEL: 'builtin', TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '10' });
  const procs: WorkerProc[] = [];
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const user = await owner(api.url, 'user');
    const liarNames: string[] = [];
    for (let i = 0; i < o.honest; i++)
      procs.push(await startWorker(api.url, (await owner(api.url, `h${i}`)).workerToken, `honest-${i + 1}`, o));
    for (let i = 0; i < o.liars; i++) {
      const name = `liar-${i + 1}`;
      liarNames.push(name);
      procs.push(
        await startWorker(api.url, (await owner(api.url, `l${i}`)).workerToken, name, { ...o, root: lyingWorkerCheckout(o.lieRate) }),
      );
    }
    console.log(
      `  ${procs.length} workers online (${o.honest} honest, ${o.liars} lying), submitting ${o.jobs} jobs, ${o.concurrency} at a time`,
    );

    const jobs: {
      k: number;
      id: string;
      jobId: string;
      status?: string;
      delivered?: string | null;
      submittedAt: number;
      finishedAt?: number;
    }[] = [];
    const wallStart = Date.now();
    let next = 1;
    await Promise.all(
      Array.from({ length: Math.min(o.concurrency, o.jobs) }, async () => {
        while (next <= o.jobs) {
          const k = next++;
          const content = program(k);
          const put = await fetch(`${api.url}/blobs/${sha256(content)}`, {
            method: 'PUT',
            headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
            body: content,
          });
          if (put.status !== 201 && put.status !== 200) throw new Error(`blob upload failed: HTTP ${put.status}`);
          const r = await gql(
            api.url,
            `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } ... on Error { message } } }`,
            { i: { title: `trust ${k}`, request: `compute the sums for k=${k}`, files: [{ path: 'sums.py', sha256: sha256(content) }] } },
            user.token,
          );
          if (r.data?.createJob?.__typename !== 'Job') throw new Error(`createJob failed: ${JSON.stringify(r)}`);
          const id = r.data.createJob.id as string;
          const job: (typeof jobs)[number] = { k, id, jobId: Buffer.from(id, 'base64').toString().split(':')[1]!, submittedAt: Date.now() };
          jobs.push(job);
          const deadline = Date.now() + 300_000;
          for (;;) {
            const q = await gql(
              api.url,
              `query($id: ID!) { job(id: $id) { status statusReason outputs { path sha256 } } }`,
              { id },
              user.token,
            );
            const j = q.data?.job;
            if (['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(j?.status)) {
              job.status = j.status;
              job.delivered =
                (j.outputs as { path: string; sha256: string }[]).find((f) => f.path === 'outputs/result.json')?.sha256 ?? null;
              job.finishedAt = Date.now();
              if (j.status !== 'SUCCEEDED') console.log(`  job k=${k}: ${j.status}: ${j.statusReason}`);
              break;
            }
            if (Date.now() > deadline) throw new Error(`job k=${k} did not finish within 300 s: ${JSON.stringify(j)}`);
            await sleep(200);
          }
          if (jobs.filter((j) => j.status).length % 10 === 0) console.log(`  ${jobs.filter((j) => j.status).length}/${o.jobs} jobs done`);
        }
      }),
    );
    const wallSec = (Date.now() - wallStart) / 1000;

    // What the trust checks decided, in the order the results arrived.
    const checks = (
      await client.query(`
        SELECT c.status, c.share, c."replicaTaskId" IS NOT NULL AS replicated, c."wrongWorkerIds", c."createdAt",
               w.name AS worker, t."jobId", t.result AS result
        FROM "ResultCheck" c JOIN "Worker" w ON w.id = c."workerId" JOIN "Task" t ON t.id = c."taskId"
        ORDER BY c."createdAt"`)
    ).rows as {
      status: string;
      share: number;
      replicated: boolean;
      wrongWorkerIds: string[];
      createdAt: Date;
      worker: string;
      jobId: string;
      result: { outputs?: { path: string; sha256: string }[] };
    }[];
    const workers = (await client.query(`SELECT id, name, reputation, "validatedCount", "mismatchCount" FROM "Worker" ORDER BY name`))
      .rows as { id: string; name: string; reputation: number; validatedCount: number; mismatchCount: number }[];
    const nameOf = new Map(workers.map((w) => [w.id, w.name]));
    const kOf = new Map(jobs.map((j) => [j.jobId, j.k]));
    const isLiar = (name: string) => liarNames.includes(name);
    const returned = (c: { result: { outputs?: { path: string; sha256: string }[] } | null }) =>
      c.result?.outputs?.find((f) => f.path === 'outputs/result.json')?.sha256 ?? null;
    // Every result a worker returned for a checkable run: the original, its replica, its tie-breaker.
    const runs = (
      await client.query(`
        SELECT t."jobId", t.name AS task, w.id AS "workerId", w.name AS worker, a.outputs AS outputs
        FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId" JOIN "Worker" w ON w.id = a."workerId"
        WHERE a.status = 'SUCCEEDED' AND t.requirements ? 'checkable' AND (t.name = 'run' OR t.name LIKE 'replica:%' OR t.name LIKE 'tiebreak:%')`)
    ).rows as { jobId: string; task: string; workerId: string; worker: string; outputs: { path: string; sha256: string }[] | null }[];
    const checkOfJob = new Map(checks.map((c) => [c.jobId, c]));
    const wrong = runs.filter((a) => returned({ result: { outputs: a.outputs ?? [] } }) !== expected.get(kOf.get(a.jobId)!));
    const caught = wrong.filter((a) => {
      const c = checkOfJob.get(a.jobId);
      return c?.status === 'RESOLVED' && c.wrongWorkerIds.includes(a.workerId);
    });
    // A wrong original accepted without a replica (not sampled, or no independent worker).
    const escaped = checks.filter((c) => !c.replicated && returned(c) !== expected.get(kOf.get(c.jobId)!));
    const accused = checks
      .filter((c) => c.status === 'RESOLVED')
      .flatMap((c) => c.wrongWorkerIds.map((id) => nameOf.get(id)!))
      .filter((n) => !isLiar(n));
    const delivered = jobs.filter((j) => j.status === 'SUCCEEDED');
    const deliveredWrong = delivered.filter((j) => j.delivered !== expected.get(j.k));
    const share = (cs: typeof checks) => (cs.length ? round(cs.filter((c) => c.replicated).length / cs.length, 3) : null);
    const third = Math.max(1, Math.floor(checks.length / 3));
    // Checkable work a worker got after it fell under the threshold (the claim must refuse it): its
    // attempts on checkable tasks leased after its last mismatch settled (reputation falls only on a
    // mismatch, so a worker under the threshold now has been under it since then).
    const excludedAfter = (
      await client.query(
        `SELECT count(*)::int AS n FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId" JOIN "Worker" w ON w.id = a."workerId"
         WHERE w.reputation < $1 AND t.requirements ? 'checkable'
           AND a."createdAt" > (SELECT max(c."settledAt") FROM "ResultCheck" c WHERE w.id = ANY (c."wrongWorkerIds") AND c.status = 'RESOLVED')`,
        [THRESHOLD],
      )
    ).rows[0].n as number;
    const cost = (await client.query(`SELECT sum("costCad")::float AS cost, sum("lostCostCad")::float AS lost FROM "Job"`)).rows[0] as {
      cost: number;
      lost: number;
    };
    const replicationCost = (
      await client.query(`SELECT COALESCE(sum(u."costCad"), 0)::float AS c FROM "UsageEntry" u JOIN "Attempt" a ON a.id = u."attemptId" JOIN "Task" t ON t.id = a."taskId"
                          WHERE u.billable AND t.kind = 'PROBE' AND (t.name LIKE 'replica:%' OR t.name LIKE 'tiebreak:%')`)
    ).rows[0].c as number;
    const tiebreaks = checks.filter((c) => ['RESOLVED', 'UNRESOLVED'].includes(c.status) || c.status === 'TIEBREAK').length;
    for (const w of workers)
      console.log(`  ${w.name.padEnd(10)} reputation ${round(w.reputation, 3)} (${w.validatedCount} confirmed, ${w.mismatchCount} wrong)`);

    const pct = (x: number | null) => (x === null ? '—' : `${round(x * 100, 1)} %`);
    return {
      name: 'trust',
      command: commandFor('trust', o, { ...DEFAULTS, pg: o.pg }),
      machine,
      options: o,
      startedAt: startedAt.toISOString(),
      durationSec: round((Date.now() - startedAt.getTime()) / 1000),
      headline: `${pct(share(checks))} of ${checks.length} checkable results replicated; ${caught.length} of ${wrong.length} wrong results caught, ${escaped.length} wrong originals escaped; ${deliveredWrong.length} wrong outputs delivered`,
      figures: {
        'jobs (succeeded / submitted)': `${delivered.length} / ${o.jobs}`,
        'checkable results checked': checks.length,
        'share replicated (all)': pct(share(checks)),
        'share replicated (first third / last third)': `${pct(share(checks.slice(0, third)))} / ${pct(share(checks.slice(-third)))}`,
        "share replicated (honest / liars' results)": `${pct(share(checks.filter((c) => !isLiar(c.worker))))} / ${pct(share(checks.filter((c) => isLiar(c.worker))))}`,
        'tie-breakers run': tiebreaks,
        'wrong results returned (originals, replicas, tie-breakers)': `${wrong.length} (${wrong.filter((a) => a.task === 'run').length} originals)`,
        'mismatches caught (the wrong worker outvoted)': caught.length,
        'wrong originals escaped (not replicated)': escaped.length,
        'honest workers wrongly accused': accused.length,
        'wrong outputs delivered to users': deliveredWrong.length,
        "liars' final reputation": workers
          .filter((w) => isLiar(w.name))
          .map((w) => round(w.reputation, 3))
          .join(', '),
        'checkable attempts leased under the threshold': excludedAfter,
        "users' cost (CAD)": round(cost.cost, 6),
        'of which replication (CAD)': `${round(replicationCost, 6)} (${pct(cost.cost ? replicationCost / cost.cost : null)})`,
        "contributors' loss, not charged (CAD)": round(cost.lost, 6),
        'wall time (s)': round(wallSec, 1),
        'jobs per minute': round((delivered.length / wallSec) * 60, 2),
      },
    };
  } finally {
    await client.end();
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) await killWorker(p, 'SIGTERM');
    await api.stop();
    await db.drop();
  }
}

if (isMain(import.meta)) runAsScript(trust);
