/**
 * (a) Task throughput, create → claim → complete, end to end.
 *
 * ChatGPU: a real API (own process, default config) and N simulated workers speaking
 * the worker protocol over GraphQL HTTP, each with S slots, so a worker with free slots
 * claims up to that many tasks in one claimTask (long-poll, waitMs 25 s) and completes
 * each at once (no-op). P producers create M tasks with the domain's createTask (one
 * transaction + NOTIFY each; there is no task-creating mutation: the planner creates
 * tasks in production), in J jobs of one user (default 1: a sweep is one job). Timed from the first create to the last accepted completion.
 *
 * graphile-worker (the reference), same PostgreSQL, its own database: a runner process
 * with concurrency N×S and a no-op task; P producers add M jobs with addJob; timed from
 * the first add to the queue being empty (it deletes completed jobs).
 *
 * Both get a warm-up round first, and 10 PostgreSQL connections on the consuming side.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { cpuSeconds, setUpOwner, startApi, taskFactory } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { startGraphile } from './lib/graphile.js';
import { postgresCpuSeconds } from './lib/machine.js';
import { SimWorker, type Lease } from './lib/simWorker.js';
import { mapLimit, round, sleep } from './lib/stats.js';

const DEFAULTS = {
  workers: 8,
  slots: 4,
  tasks: 2000,
  jobs: 1,
  warmup: 100,
  producers: 4,
  add: 'one',
  gwPool: 10,
  graphile: 1,
  timeoutSec: 300,
};
const USAGE = `usage: node --import tsx bench/throughput.ts [--workers N] [--slots S] [--tasks M] [--jobs J] [--warmup W] [--producers P]
                 [--add one|each] [--gw-pool 10] [--graphile 1|0] [--timeout-sec 300] [--pg postgres://postgres@127.0.0.1:5432/postgres]
  --add one (default): all M tasks added in one call before the clock's end — ChatGPU createTasks (one transaction, one
    NOTIFY), graphile-worker one INSERT … SELECT add_job(…) FROM generate_series (its own perfTest's method), so the producer
    is not what is measured; --add each: P producers add one at a time (createTask / addJob).`;

type Opts = typeof DEFAULTS & { pg: string };

interface Measured {
  perSec: number;
  seconds: number;
  createSeconds: number;
  consumerCpuSec: number;
  postgresCpuSec: number | null;
  extra: Record<string, number | string | null>;
}

async function waitUntil(what: string, cond: () => boolean | Promise<boolean>, deadline: number, stepMs = 5): Promise<void> {
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(stepMs);
  }
}

async function runChatGpu(o: Opts): Promise<Measured> {
  const db = await createDatabase(o.pg, 'throughput');
  const api = await startApi(db.url);
  const stop = new AbortController();
  let factory: Awaited<ReturnType<typeof taskFactory>> | undefined;
  const loops: Promise<void>[] = [];
  try {
    const owner = await setUpOwner(api, o.workers, { jobs: o.jobs });
    factory = await taskFactory(db.url, owner, o.producers);
    const workers = owner.workerTokens.map((t, i) => new SimWorker(api.url, t, `sim-${i}`));
    await Promise.all(workers.map((w) => w.hello(o.slots)));

    let completed = 0;
    let errors = 0;
    let claims = 0;
    let claimed = 0;
    const loop = async (w: SimWorker) => {
      const held = new Map<string, Lease>();
      let slotFreed: (() => void) | undefined;
      // Heartbeats as the real worker sends them (every HEARTBEAT_SEC, all its leases).
      const hb = setInterval(() => void w.heartbeat([...held.values()]).catch(() => errors++), 5000);
      try {
        while (!stop.signal.aborted) {
          const free = o.slots - held.size;
          if (free <= 0) {
            await new Promise<void>((r) => (slotFreed = r));
            continue;
          }
          let leases: Lease[];
          try {
            leases = await w.claim(25_000, free, stop.signal);
          } catch (err) {
            if (stop.signal.aborted) break;
            errors++;
            console.error(`claim: ${(err as Error).message}`);
            await sleep(100);
            continue;
          }
          claims++;
          claimed += leases.length;
          for (const l of leases) {
            held.set(l.attemptId, l);
            void w
              .complete(l)
              .then(
                () => void completed++,
                (err) => {
                  errors++;
                  console.error(`complete: ${(err as Error).message}`);
                },
              )
              .finally(() => {
                held.delete(l.attemptId);
                slotFreed?.();
                slotFreed = undefined;
              });
          }
        }
      } finally {
        clearInterval(hb);
        slotFreed?.();
      }
    };
    loops.push(...workers.map(loop));
    await sleep(200); // every worker parked in its long-poll

    const deadline = Date.now() + o.timeoutSec * 1000;
    const create = async (n: number) => {
      if (o.add === 'one') await factory!.createMany(n);
      else
        await mapLimit(
          Array.from({ length: n }, (_, i) => i),
          o.producers,
          () => factory!.create(),
        );
    };
    await create(o.warmup);
    await waitUntil('warm-up', () => completed >= o.warmup, deadline);

    const [cpu0, pg0] = [await api.stats(), await postgresCpuSeconds()];
    const [claims0, claimed0] = [claims, claimed];
    const t0 = performance.now();
    await create(o.tasks);
    const tCreated = performance.now();
    // A failed completion leaves its task to lease expiry and a retry, which the workers
    // then complete: the run still ends when every task has succeeded once.
    await waitUntil('all tasks completed', () => completed >= o.warmup + o.tasks || errors > 50, deadline);
    const t1 = performance.now();
    const [cpu1, pg1] = [await api.stats(), await postgresCpuSeconds()];
    if (errors > 50) throw new Error(`${errors} protocol errors during the run`);

    const succeeded = await factory.resources.prisma.task.count({ where: { status: 'SUCCEEDED' } });
    if (succeeded !== o.warmup + o.tasks) throw new Error(`expected ${o.warmup + o.tasks} SUCCEEDED tasks, found ${succeeded}`);
    const seconds = (t1 - t0) / 1000;
    return {
      perSec: o.tasks / seconds,
      seconds,
      createSeconds: (tCreated - t0) / 1000,
      consumerCpuSec: cpuSeconds(cpu0, cpu1),
      postgresCpuSec: pg0 === null || pg1 === null ? null : pg1 - pg0,
      extra: {
        'ChatGPU claimTask calls': claims - claims0,
        'ChatGPU tasks per claim (mean)': round((claimed - claimed0) / Math.max(claims - claims0, 1), 2),
        'ChatGPU failed claim/complete calls': errors,
        'ChatGPU API errors logged': cpu1.errors,
        'ChatGPU scheduler ticks skipped (overran)': api.tickOverruns(),
      },
    };
  } finally {
    stop.abort();
    await Promise.race([Promise.allSettled(loops), delay(5000)]);
    await factory?.close();
    await api.stop();
    await db.drop();
  }
}

async function runGraphile(o: Opts): Promise<Measured> {
  const db = await createDatabase(o.pg, 'throughput_gw');
  const gw = await startGraphile(db.url, { concurrency: o.workers * o.slots, pool: o.gwPool, mode: 'throughput' });
  try {
    const deadline = Date.now() + o.timeoutSec * 1000;
    const add = async (n: number) => {
      if (o.add === 'one') {
        // graphile-worker's perfTest: every job in one statement.
        await gw.utils.withPgClient((c) =>
          c.query(`SELECT graphile_worker.add_job('noop', json_build_object('i', i)) FROM generate_series(1, $1::int) i`, [n]),
        );
      } else
        await mapLimit(
          Array.from({ length: n }, (_, i) => i),
          o.producers,
          (i) => gw.utils.addJob('noop', { i }),
        );
    };
    await add(o.warmup);
    await waitUntil('warm-up', async () => (await gw.pending()) === 0, deadline, 20);
    const [cpu0, pg0] = [await gw.stats(), await postgresCpuSeconds()];
    const t0 = performance.now();
    await add(o.tasks);
    const tAdded = performance.now();
    await waitUntil('all jobs completed', async () => (await gw.pending()) === 0, deadline, 10);
    const t1 = performance.now();
    const [cpu1, pg1] = [await gw.stats(), await postgresCpuSeconds()];
    if (cpu1.errors > 0) throw new Error(`graphile-worker logged ${cpu1.errors} errors`);
    const seconds = (t1 - t0) / 1000;
    return {
      perSec: o.tasks / seconds,
      seconds,
      createSeconds: (tAdded - t0) / 1000,
      consumerCpuSec: cpuSeconds(cpu0, cpu1),
      postgresCpuSec: pg0 === null || pg1 === null ? null : pg1 - pg0,
      extra: {},
    };
  } finally {
    await gw.stop();
    await db.drop();
  }
}

export async function throughput(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const { machine, startedAt } = await startBench('throughput (create → claim → complete)', o.pg);
  const adding = o.add === 'one' ? 'added in one call' : `${o.producers} producers`;
  console.log(
    `ChatGPU: ${o.workers} simulated workers × ${o.slots} slots over GraphQL HTTP, ${o.tasks} tasks in ${o.jobs} job(s) (+${o.warmup} warm-up), ${adding} …`,
  );
  const c = await runChatGpu(o);
  console.log(`  ${round(c.perSec)} tasks/s (${round(c.seconds, 2)} s)`);
  let g: Measured | null = null;
  if (o.graphile) {
    console.log(
      `graphile-worker: concurrency ${o.workers * o.slots}, pool ${o.gwPool}, ${o.tasks} jobs (+${o.warmup} warm-up), ${adding} …`,
    );
    g = await runGraphile(o);
    console.log(`  ${round(g.perSec)} jobs/s (${round(g.seconds, 2)} s)`);
  }
  const ratio = g ? c.perSec / g.perSec : null;
  const pgCpu = (m: Measured) => (m.postgresCpuSec === null ? null : round((m.postgresCpuSec / m.seconds) * 100));
  return {
    name: 'throughput',
    command: commandFor('throughput', o, { ...DEFAULTS, pg: o.pg }),
    machine,
    options: o,
    startedAt: startedAt.toISOString(),
    durationSec: round((Date.now() - startedAt.getTime()) / 1000),
    headline: `ChatGPU ${round(c.perSec)} tasks/s` + (g ? `, graphile-worker ${round(g.perSec)} jobs/s, ratio ${round(ratio!, 2)}×` : ''),
    figures: {
      'ChatGPU tasks/s (end to end)': round(c.perSec),
      'ChatGPU create phase (s)': round(c.createSeconds, 2),
      'ChatGPU total (s)': round(c.seconds, 2),
      'ChatGPU API CPU ms/task': round((c.consumerCpuSec * 1000) / o.tasks, 2),
      'ChatGPU API CPU (% of one core)': round((c.consumerCpuSec / c.seconds) * 100),
      'ChatGPU PostgreSQL CPU (% of one core)': pgCpu(c),
      ...c.extra,
      'graphile-worker jobs/s (end to end)': g ? round(g.perSec) : null,
      'graphile-worker add phase (s)': g ? round(g.createSeconds, 2) : null,
      'graphile-worker total (s)': g ? round(g.seconds, 2) : null,
      'graphile-worker runner CPU ms/job': g ? round((g.consumerCpuSec * 1000) / o.tasks, 2) : null,
      'graphile-worker PostgreSQL CPU (% of one core)': g ? pgCpu(g) : null,
      'ratio ChatGPU / graphile-worker': ratio === null ? null : round(ratio, 2),
    },
  };
}

if (isMain(import.meta)) runAsScript(throughput);
