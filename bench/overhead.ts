/**
 * The platform's own cost: the same program run directly and as a ChatGPU job on the same
 * machine, alternating (direct, job, job, direct, …) so that the load of other work on the
 * machine hits both, at least three pairs per workload.
 *
 * ChatGPU side: a real API (its own process, the builtin planner, the default tick and heartbeat)
 * on a fresh database of the local PostgreSQL, and one real `chatgpu-worker` (the sandbox it
 * detects: bwrap with the seccomp filter when it can). Each job is `chatgpu submit DIR -m … --wait
 * --out DIR`, the user's own command, timed from its start to its exit (the outputs on disk).
 *
 * Printed per workload: the direct time, the job time, the run's own time inside the worker
 * (usage.runSeconds: the sandboxed process from spawn to exit), and the job's time split from its
 * recorded timestamps (all on this machine's clock):
 *   submit         CLI start → job created (the CLI's start, the uploads, createJob)
 *   planning       job created → its first task created
 *   smoke          the smoke run / adaptation check tasks, claim to completion
 *   queueing       each task created → claimed (and gaps between one task's end and the next's creation)
 *   setup          claimed → the program spawned (downloads, environment, sandbox set-up)
 *   run            the full run's program, spawn → exit (includes the sandbox's own start)
 *   uploads        the program's exit → the attempt completed (outputs hashed and uploaded, the completion)
 *   validation     evaluation tasks, and the last task's end → the job SUCCEEDED
 *   download       job SUCCEEDED → the CLI exited (outputs downloaded and checked)
 *
 *   node --import tsx bench/overhead.ts                 # all workloads, 3 pairs each
 *   node --import tsx bench/overhead.ts --quick         # 1 pair, smaller sizes (for iteration)
 *   node --import tsx bench/overhead.ts --workloads torch,numpy --pairs 5
 *   node --import tsx bench/overhead.ts --quick --workloads torch --timeline 1   # each job's events and attempts, in ms from submit
 *   node --import tsx bench/overhead.ts --cli /tmp/old/api/bin/chatgpu.mjs   # another checkout's CLI against this API (before/after)
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { repoRoot, setUpOwner, startApi, type ApiStats } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { workloads, type Workload } from './lib/overheadWorkloads.js';
import { quantile, round, wallMs } from './lib/stats.js';
import { killWorker, startWorker } from './lib/workerProcess.js';
import { sandboxStartCost } from './sandboxCost.js';

const DEFAULTS = {
  pairs: 3,
  workloads: 'torch,numpy,lines,output,sweep',
  epochs: 1000,
  numpyIters: 300,
  lineSeconds: 20,
  outputMib: 512,
  sweepIters: 30,
  checkpointMib: 256,
  python: '/usr/bin/python3',
  sandbox: 'auto',
  quick: 0,
  timeline: 0,
  cli: '',
};
const QUICK = {
  pairs: 1,
  workloads: 'torch,numpy,lines,output,sweep',
  epochs: 150,
  numpyIters: 60,
  lineSeconds: 5,
  outputMib: 128,
  sweepIters: 5,
  checkpointMib: 64,
};
const USAGE = `usage: node --import tsx bench/overhead.ts [--quick] [--pairs 3] [--workloads torch,numpy,lines,output,sweep,checkpoint]
                 [--epochs 1000] [--numpy-iters 300] [--line-seconds 20] [--output-mib 512] [--sweep-iters 30] [--checkpoint-mib 256]
                 [--python /usr/bin/python3] [--sandbox auto|bwrap|none] [--timeline 1] [--cli PATH/chatgpu.mjs] [--pg postgres://postgres@127.0.0.1:5432/postgres]`;

const PHASES = ['submit', 'planning', 'smoke', 'queueing', 'setup', 'run', 'uploads', 'validation', 'download'] as const;
type Phase = (typeof PHASES)[number];

interface JobSample {
  jobSec: number;
  runSec: number;
  /** CPU seconds the platform's own processes used during the job: the API, the worker (its own process, not the task), PostgreSQL. */
  cpu: { api: number; worker: number; postgres: number };
  phases: Record<Phase, number>;
  tasks: string;
}

/**
 * Runs argv to its end in `cwd`; seconds from spawn to exit. Throws on a non-zero exit. In a session
 * of its own (setsid), as a program started from its owner's terminal is and as the worker's sandbox
 * starts a task (bwrap --new-session): with the kernel's autogroup scheduling (Debian's default) each
 * session shares the CPU as one group, so a direct run left in this benchmark's session would share
 * one group's time with it and with the API it started, and look slower than the same run in a job.
 */
function timed(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ sec: number; out: string }> {
  const t0 = wallMs();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
    child.stderr.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
    child.once('error', reject);
    child.once('close', (code) => {
      const sec = (wallMs() - t0) / 1000;
      if (code === 0) resolve({ sec, out });
      else reject(new Error(`${argv.join(' ')} exited ${code}:\n${out.slice(-3000)}`));
    });
  });
}

export async function overhead(argv: string[]): Promise<BenchResult> {
  // `--quick` alone (no value) means --quick 1.
  const args = argv.flatMap((a, i) =>
    a === '--quick' && (argv[i + 1] === undefined || argv[i + 1]!.startsWith('--')) ? ['--quick', '1'] : [a],
  );
  const given = parseOptions(args, DEFAULTS, USAGE);
  const o = given.quick
    ? {
        ...given,
        ...Object.fromEntries(
          Object.entries(QUICK).filter(([k]) => !args.includes(`--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`)),
        ),
      }
    : given;
  const { machine, startedAt } = await startBench(
    `overhead (the same program directly and through ChatGPU, alternating, ${o.pairs} pair(s) each)`,
    o.pg,
  );
  const chosen = String(o.workloads)
    .split(',')
    .map((s) => s.trim());
  const all = workloads({
    epochs: Number(o.epochs),
    numpyIters: Number(o.numpyIters),
    lineSeconds: Number(o.lineSeconds),
    outputMiB: Number(o.outputMib),
    sweepIters: Number(o.sweepIters),
    checkpointMiB: Number(o.checkpointMib),
  });
  const unknown = chosen.filter((c) => !all.some((w) => w.name === c));
  if (unknown.length) throw new Error(`unknown workload(s) ${unknown.join(', ')}; one of ${all.map((w) => w.name).join(', ')}`);
  const selected = all.filter((w) => chosen.includes(w.name));

  const sandboxStart = await sandboxStartCost({ python: String(o.python), trials: 5 });
  console.log(
    `  sandbox start (bwrap + seccomp + prlimit + setpriv, python -c pass): +${round(sandboxStart.extraMs, 1)} ms a start (plain ${round(sandboxStart.plainMs, 1)} ms, sandboxed ${round(sandboxStart.sandboxedMs, 1)} ms)`,
  );

  const db = await createDatabase(o.pg, 'overhead');
  const api = await startApi(db.url, { BENCH_MODEL: 'builtin' });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const work = await mkdtemp(path.join(tmpdir(), 'overhead-'));
  const rows: { w: Workload; direct: number[]; jobs: JobSample[] }[] = [];
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  try {
    const owner = await setUpOwner(api, 1);
    worker = await startWorker(api.url, owner.workerTokens[0]!, 'overhead', { python: String(o.python), sandbox: String(o.sandbox) });
    const cliEnv = { ...process.env, CHATGPU_URL: api.url, CHATGPU_TOKEN: owner.userToken, CHATGPU_RETRY_SEC: '0' };
    const directEnv = {
      ...process.env,
      PYTHONPATH: path.join(repoRoot, 'worker/python'),
      PYTHONUNBUFFERED: '1',
      PYTHONDONTWRITEBYTECODE: '1',
    };
    const workerPid = worker.child.pid!;
    const platformCpu = async () => ({
      api: apiSeconds(await api.stats()),
      worker: await processCpuSeconds(workerPid),
      postgres: await backendsCpu(),
    });
    /** The CPU of this database's backends (the server is shared with other work on the machine). */
    const backendCpu = new Map<number, number>();
    const backendsCpu = async () => {
      const { rows: b } = await client.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      for (const { pid } of b) backendCpu.set(pid, await processCpuSeconds(pid));
      return [...backendCpu.values()].filter(Number.isFinite).reduce((a, x) => a + x, 0);
    };
    let seed = 0;
    for (const w of selected) {
      const row = { w, direct: [] as number[], jobs: [] as JobSample[] };
      rows.push(row);
      console.log(`\n  ${w.label}`);
      const runDirect = async () => {
        const s = ++seed;
        const dir = path.join(work, `${w.name}-direct-${s}`);
        await w.write(dir);
        let sec = 0;
        for (const cmd of w.direct(s))
          sec += (
            await timed(
              cmd.map((a) => (a === 'python' ? String(o.python) : a)),
              dir,
              directEnv,
            )
          ).sec;
        await rm(dir, { recursive: true, force: true });
        row.direct.push(sec);
        console.log(`    direct ${round(sec, 2)} s`);
      };
      const runJob = async () => {
        const s = ++seed;
        const dir = path.join(work, `${w.name}-job-${s}`);
        const out = path.join(work, `${w.name}-out-${s}`);
        await w.write(dir);
        const cpu0 = await platformCpu();
        const t0 = wallMs();
        const r = await timed(
          [
            process.execPath,
            String(o.cli) || path.join(repoRoot, 'api/bin/chatgpu.mjs'),
            'submit',
            dir,
            '-m',
            w.request(s),
            '--wait',
            '--out',
            out,
            '--json',
          ],
          repoRoot,
          cliEnv,
        );
        const t1 = wallMs();
        const cpu1 = await platformCpu();
        const summary = JSON.parse(
          r.out
            .trim()
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .at(-1) ?? '{}',
        ) as { id?: string };
        if (!summary.id) throw new Error(`no job id in the CLI's output:\n${r.out.slice(-2000)}`);
        const sample: JobSample = {
          ...(await split(client, summary.id, t0, t1)),
          cpu: { api: cpu1.api - cpu0.api, worker: cpu1.worker - cpu0.worker, postgres: cpu1.postgres - cpu0.postgres },
        };
        await rm(dir, { recursive: true, force: true });
        await rm(out, { recursive: true, force: true });
        row.jobs.push(sample);
        if (Number(o.timeline)) console.log(await timeline(client, summary.id, t0, t1));
        console.log(
          `    job    ${round(sample.jobSec, 2)} s (run ${round(sample.runSec, 2)} s; ${PHASES.map((p) => `${p} ${round(sample.phases[p], 2)}`).join(', ')}) [${sample.tasks}]; platform CPU: API ${round(sample.cpu.api, 2)} s, worker ${round(sample.cpu.worker, 2)} s, PostgreSQL ${round(sample.cpu.postgres, 2)} s`,
        );
      };
      for (let i = 0; i < Number(o.pairs); i++) {
        // Alternating order: direct first in even pairs, the job first in odd ones.
        if (i % 2 === 0) {
          await runDirect();
          await runJob();
        } else {
          await runJob();
          await runDirect();
        }
      }
    }
  } finally {
    await client.end();
    if (worker) await killWorker(worker, 'SIGTERM');
    await api.stop();
    await db.drop();
    await rm(work, { recursive: true, force: true });
  }

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const figures: Record<string, number | string | null> = { 'sandbox start, extra ms a start': round(sandboxStart.extraMs, 1) };
  const table = [
    `| workload | direct (s) | job, submit → outputs on disk (s) | job ÷ direct: mean; median | run inside the worker (s) | run ÷ direct: mean; median | ${PHASES.join(' | ')} | platform CPU during the job: API / worker / PostgreSQL (s) |`,
    `|---|---|---|---|---|---|${PHASES.map(() => '---').join('|')}|---|`,
  ];
  for (const r of rows) {
    const d = mean(r.direct);
    const j = mean(r.jobs.map((x) => x.jobSec));
    const run = mean(r.jobs.map((x) => x.runSec));
    // Ratios pair by pair (each pair ran back to back, under the same load), then their mean.
    const jobRatios = r.jobs.map((x, i) => x.jobSec / r.direct[i]!);
    const runRatios = r.jobs.map((x, i) => x.runSec / r.direct[i]!);
    const jobRatio = mean(jobRatios);
    const runRatio = mean(runRatios);
    // The median pair too: one pair hit by a burst of other work moves the mean of three a lot.
    const pairs = (xs: number[]) => `${round(quantile(xs, 0.5), 3)}× (pairs ${xs.map((x) => round(x, 2)).join(', ')})`;
    table.push(
      `| ${r.w.label} | ${round(d, 2)} | ${round(j, 2)} | ${round(jobRatio, 3)}×; ${pairs(jobRatios)} | ${round(run, 2)} | ${round(runRatio, 3)}×; ${pairs(runRatios)} | ${PHASES.map((p) => round(mean(r.jobs.map((x) => x.phases[p])), 2)).join(' | ')} | ${(['api', 'worker', 'postgres'] as const).map((k) => round(mean(r.jobs.map((x) => x.cpu[k])), 2)).join(' / ')} |`,
    );
    figures[`${r.w.name}: direct (s)`] = round(d, 2);
    figures[`${r.w.name}: job (s)`] = round(j, 2);
    figures[`${r.w.name}: job ÷ direct`] = round(jobRatio, 3);
    figures[`${r.w.name}: run in worker (s)`] = round(run, 2);
    figures[`${r.w.name}: run ÷ direct`] = round(runRatio, 3);
    figures[`${r.w.name}: job ÷ direct, median pair`] = round(quantile(jobRatios, 0.5), 3);
    figures[`${r.w.name}: run ÷ direct, median pair`] = round(quantile(runRatios, 0.5), 3);
    figures[`${r.w.name}: platform CPU (s) API/worker/PostgreSQL`] = (['api', 'worker', 'postgres'] as const)
      .map((k) => round(mean(r.jobs.map((x) => x.cpu[k])), 2))
      .join(' / ');
  }
  console.log(`\n${table.join('\n')}\n`);
  const torch = rows.find((r) => r.w.name === 'torch');
  return {
    name: 'overhead',
    command: commandFor('overhead', given, { ...DEFAULTS, pg: given.pg }),
    machine,
    options: o,
    startedAt: startedAt.toISOString(),
    durationSec: round((Date.now() - startedAt.getTime()) / 1000),
    headline: torch
      ? `torch training: job ${figures['torch: job ÷ direct']}× direct, run in the worker ${figures['torch: run ÷ direct']}× (direct ${figures['torch: direct (s)']} s)`
      : rows.map((r) => `${r.w.name} job ${figures[`${r.w.name}: job ÷ direct`]}×`).join(', '),
    figures,
  };
}

const apiSeconds = (s: ApiStats) => (s.cpu.user + s.cpu.system) / 1e6;

/** CPU seconds (user + system) of one process, not its children; NaN when /proc cannot tell. */
async function processCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.length > 12 ? (Number(fields[11]) + Number(fields[12])) / 100 : NaN;
}

/** The job's time split (see the file comment) from its tasks, attempts and events. */
async function split(client: pg.Client, globalId: string, t0: number, t1: number): Promise<Omit<JobSample, 'cpu'>> {
  const jobId = Buffer.from(globalId, 'base64').toString('utf8').split(':').slice(1).join(':') || globalId;
  const job = (
    await client.query<{ createdAt: Date; finishedAt: Date | null; status: string }>(
      `SELECT "createdAt", "finishedAt", status FROM "Job" WHERE id = $1`,
      [jobId],
    )
  ).rows[0];
  if (!job) throw new Error(`no job ${jobId}`);
  if (job.status !== 'SUCCEEDED') throw new Error(`job ${jobId} ended ${job.status}`);
  const { rows: tasks } = await client.query<{
    kind: string;
    name: string;
    tcreated: Date;
    acreated: Date;
    afinished: Date;
    usage: { runSeconds?: number; runStartedAt?: number } | null;
  }>(
    `SELECT t.kind, t.name, t."createdAt" AS tcreated, a."createdAt" AS acreated, a."finishedAt" AS afinished, a.usage
       FROM "Task" t JOIN "Attempt" a ON a.id = t."currentAttemptId" WHERE t."jobId" = $1 ORDER BY t."createdAt"`,
    [jobId],
  );
  const ms = (d: Date) => d.getTime();
  const p: Record<Phase, number> = Object.fromEntries(PHASES.map((x) => [x, 0])) as Record<Phase, number>;
  p.submit = (ms(job.createdAt) - t0) / 1000;
  p.planning = tasks.length ? (ms(tasks[0]!.tcreated) - ms(job.createdAt)) / 1000 : 0;
  let runSec = 0;
  let lastEnd = tasks.length ? ms(tasks[0]!.tcreated) : ms(job.createdAt);
  for (const t of tasks) {
    // Time between the previous task's end and this one's creation: the job engine moving on.
    const gap = Math.max(0, ms(t.tcreated) - lastEnd) / 1000;
    const queue = (ms(t.acreated) - ms(t.tcreated)) / 1000 + gap;
    const total = (ms(t.afinished) - ms(t.acreated)) / 1000;
    const full = t.kind === 'RUN' || t.kind === 'SHARD';
    if (full) {
      const start = t.usage?.runStartedAt ?? ms(t.acreated);
      const run = t.usage?.runSeconds ?? 0;
      p.queueing += queue;
      p.setup += (start - ms(t.acreated)) / 1000;
      p.run += run;
      p.uploads += (ms(t.afinished) - start) / 1000 - run;
      runSec += run;
    } else if (t.kind === 'EVALUATE') p.validation += queue + total;
    else p.smoke += queue + total; // REFERENCE / CANDIDATE / BENCHMARK: the smoke run and preparation checks
    lastEnd = Math.max(lastEnd, ms(t.afinished));
  }
  const finished = job.finishedAt ? ms(job.finishedAt) : lastEnd;
  p.validation += Math.max(0, finished - lastEnd) / 1000;
  p.download = (t1 - finished) / 1000;
  return { jobSec: (t1 - t0) / 1000, runSec, phases: p, tasks: tasks.map((t) => `${t.kind}:${t.name}`).join(' ') };
}

/**
 * One job's story in ms from the CLI's start: its events (status changes, tasks, attempts) and
 * each attempt's claim, program start and end, and completion — where the fixed costs sit.
 */
async function timeline(client: pg.Client, globalId: string, t0: number, t1: number): Promise<string> {
  const jobId = Buffer.from(globalId, 'base64').toString('utf8').split(':').slice(1).join(':') || globalId;
  const at = (d: Date | number) => `${String(Math.round((typeof d === 'number' ? d : d.getTime()) - t0)).padStart(7)} ms`;
  const lines: [number, string][] = [];
  const { rows: events } = await client.query<{ kind: string; payload: Record<string, unknown>; createdAt: Date }>(
    `SELECT kind, payload, "createdAt" FROM "JobEvent" WHERE "jobId" = $1 ORDER BY id`,
    [jobId],
  );
  for (const e of events) {
    const p = e.payload ?? {};
    const what = [p.status, p.name, p.kind, p.step, p.agent].filter((x) => typeof x === 'string').join(' ');
    lines.push([e.createdAt.getTime(), `event ${e.kind}${what ? ` (${what})` : ''}`]);
  }
  const { rows: attempts } = await client.query<{
    name: string;
    acreated: Date;
    astarted: Date | null;
    afinished: Date | null;
    usage: { runSeconds?: number; runStartedAt?: number } | null;
  }>(
    `SELECT t.name, a."createdAt" AS acreated, a."startedAt" AS astarted, a."finishedAt" AS afinished, a.usage
       FROM "Attempt" a JOIN "Task" t ON t.id = a."taskId" WHERE t."jobId" = $1`,
    [jobId],
  );
  for (const a of attempts) {
    lines.push([a.acreated.getTime(), `${a.name}: claimed`]);
    if (a.usage?.runStartedAt) {
      lines.push([a.usage.runStartedAt, `${a.name}: program started`]);
      if (a.usage.runSeconds !== undefined) lines.push([a.usage.runStartedAt + a.usage.runSeconds * 1000, `${a.name}: program ended`]);
    }
    if (a.afinished) lines.push([a.afinished.getTime(), `${a.name}: attempt completed`]);
  }
  lines.push([t1, 'CLI exited (outputs on disk)']);
  return lines
    .sort((a, b) => a[0] - b[0])
    .map(([t, s]) => `      ${at(t)}  ${s}`)
    .join('\n');
}

if (isMain(import.meta)) runAsScript(overhead);
