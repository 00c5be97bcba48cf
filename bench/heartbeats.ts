/**
 * (c) Heartbeat capacity: W simulated workers (default 10,000) each sending one
 * heartbeat every I seconds (default 10: 1,000/s in aggregate), for D seconds.
 *
 * A real API (own process; HEARTBEAT_SEC = I, otherwise default config). Every worker
 * first says hello (bounded concurrency; the hello rate is reported too). Heartbeats are
 * sent open-loop on a fixed schedule, the workers' phases spread evenly over the
 * interval, with at most `--max-in-flight` outstanding: if the API falls behind, they
 * queue here, and "lag" (scheduled time → answer) shows it while "latency" (sent →
 * answer) is the API's own time. Idle workers: each heartbeat names no leases (the
 * steady state of a volunteer fleet). API and PostgreSQL CPU are measured over the
 * heartbeat phase.
 *
 * --apis N (the scale-out figure): N API processes on the one database, the workers split
 * between them round-robin (as a load balancer would); CPU and RSS per process and in total.
 */
import { SIM_CAPS } from './lib/simWorker.js';
import { cpuSeconds, setUpOwner, startApi, taskFactory, type ApiStats, type BenchApi } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { postgresCpuSeconds } from './lib/machine.js';
import { SimWorker } from './lib/simWorker.js';
import { mapLimit, round, sleep, summarize } from './lib/stats.js';

const DEFAULTS = {
  apis: 1,
  workers: 10_000,
  tokens: 100,
  intervalSec: 10,
  warmupSec: 10,
  durationSec: 30,
  helloConcurrency: 32,
  maxInFlight: 256,
  setup: 'hello',
};
const USAGE = `usage: node --import tsx bench/heartbeats.ts [--apis 1] [--workers 10000] [--tokens 100] [--interval-sec 10] [--warmup-sec 10] [--duration-sec 30]
                 [--hello-concurrency 32] [--max-in-flight 256] [--setup hello|sql] [--pg postgres://postgres@127.0.0.1:5432/postgres]
  --warmup-sec: the same schedule runs this long first, unmeasured (a freshly started API compiles its hot code and opens its pool).
  --apis N: N API processes on the one database, the workers split between them (the scale-out figure).
  --setup sql inserts the worker rows hello would create directly (fast set-up on a slow machine; heartbeats still go over GraphQL).`;

export async function heartbeats(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const { machine, startedAt } = await startBench(
    `heartbeat capacity (${o.workers} workers, one heartbeat per ${o.intervalSec} s each)`,
    o.pg,
  );
  const db = await createDatabase(o.pg, 'heartbeats');
  const apis: BenchApi[] = [];
  try {
    for (let i = 0; i < Math.max(1, o.apis); i++) apis.push(await startApi(db.url, { HEARTBEAT_SEC: String(o.intervalSec) }));
    const api = apis[0]!;
    const owner = await setUpOwner(api, o.tokens);
    const workers = Array.from(
      { length: o.workers },
      (_, i) => new SimWorker(apis[i % apis.length]!.url, owner.workerTokens[i % o.tokens]!, `hb-${i}`),
    );

    let helloRate: number | null = null;
    if (o.setup === 'sql') {
      console.log(`inserting ${o.workers} worker rows directly (--setup sql) …`);
      const f = await taskFactory(db.url, owner, 2);
      try {
        const tokens = await f.resources.prisma.workerToken.findMany({ select: { id: true, name: true, userId: true } });
        const byName = new Map(tokens.map((t) => [t.name, t]));
        for (let from = 0; from < o.workers; from += 1000) {
          const rows = await f.resources.prisma.worker.createManyAndReturn({
            data: workers.slice(from, from + 1000).map((w, k) => {
              const t = byName.get(`bench-${(from + k) % o.tokens}`)!;
              return {
                ownerId: t.userId,
                tokenId: t.id,
                name: w.name,
                status: 'ONLINE' as const,
                capabilities: SIM_CAPS,
                workloads: SIM_CAPS.workloads,
                memoryMiB: SIM_CAPS.memoryMiB,
                cpuCores: SIM_CAPS.cpu.cores,
                slots: 1,
                version: 'bench',
              };
            }),
            select: { id: true, name: true },
          });
          const ids = new Map(rows.map((r) => [r.name, r.id]));
          for (const w of workers.slice(from, from + 1000)) w.workerId = ids.get(w.name)!;
        }
      } finally {
        await f.close();
      }
    } else {
      console.log(`hello × ${o.workers} (concurrency ${o.helloConcurrency}) …`);
      const h0 = performance.now();
      let helloDone = 0;
      const progress = setInterval(() => console.log(`  ${helloDone} / ${o.workers}`), 10_000);
      try {
        await mapLimit(workers, o.helloConcurrency, async (w) => {
          await w.hello(1);
          helloDone++;
        });
      } finally {
        clearInterval(progress);
      }
      helloRate = o.workers / ((performance.now() - h0) / 1000);
      console.log(`  ${round(helloRate)} hellos/s`);
    }

    const rate = o.workers / o.intervalSec;
    const total = Math.round(rate * (o.warmupSec + o.durationSec));
    console.log(
      `heartbeats: ${round(rate)}/s scheduled for ${o.warmupSec} s of warm-up, then ${o.durationSec} s measured (${Math.round(rate * o.durationSec)}) …`,
    );
    const latency: number[] = [];
    const byWindow: number[][] = []; // latencies by 5 s of the phase (when a slow stretch happened)
    const lag: number[] = [];
    let errors = 0;
    let firstError = '';
    let inFlight = 0;
    let maxInFlightSeen = 0;
    let sent = 0;
    let measuredSent = 0;
    const start = performance.now();
    const due = (n: number) => start + (n * 1000) / rate;
    // The measured phase: heartbeats sent from here on, and the CPU from here on.
    const measuredFrom = start + o.warmupSec * 1000;
    let measured!: Promise<[ApiStats[], number | null, NodeJS.CpuUsage]>;
    const startMeasuring = () =>
      (measured = Promise.all([Promise.all(apis.map((a) => a.stats())), postgresCpuSeconds(), process.cpuUsage()]));
    if (o.warmupSec > 0) setTimeout(startMeasuring, o.warmupSec * 1000);
    else startMeasuring();
    let stopped = false;
    let done!: () => void;
    const allDone = new Promise<void>((r) => (done = () => ((stopped = true), r())));
    let finished = 0;
    const send = (n: number) => {
      const w = workers[n % o.workers]!;
      const t = performance.now();
      if (t >= measuredFrom) measuredSent++;
      inFlight++;
      maxInFlightSeen = Math.max(maxInFlightSeen, inFlight);
      w.heartbeat([])
        .then(
          () => {
            if (t < measuredFrom) return;
            const now = performance.now();
            latency.push(now - t);
            lag.push(now - due(n));
            (byWindow[Math.floor((t - measuredFrom) / 5000)] ??= []).push(now - t);
          },
          (err) => {
            if (t < measuredFrom) return;
            errors++;
            firstError ||= (err as Error).message;
          },
        )
        .finally(() => {
          inFlight--;
          if (++finished === total) done();
          pump();
        });
    };
    const pump = () => {
      if (stopped) return;
      const now = performance.now();
      while (sent < total && due(sent) <= now && inFlight < o.maxInFlight) send(sent++);
    };
    const timer = setInterval(pump, 2);
    const deadline = setTimeout(done, (o.warmupSec + o.durationSec + 60) * 1000); // bounded even if the API stalls
    await allDone;
    clearInterval(timer);
    clearTimeout(deadline);
    const elapsed = (performance.now() - measuredFrom) / 1000;
    const [api0, pg0, me0] = await measured;
    if (finished < total) console.log(`  stopped at the time limit with ${total - sent} heartbeats never sent and ${inFlight} unanswered`);
    const [api1, pg1, me1] = [await Promise.all(apis.map((a) => a.stats())), await postgresCpuSeconds(), process.cpuUsage(me0)];
    await sleep(100);

    const l = summarize(latency);
    const g = summarize(lag);
    const cpuOf = apis.map((_, i) => cpuSeconds(api0[i]!, api1[i]!));
    const apiCpu = cpuOf.reduce((a, b) => a + b, 0);
    const sum = (f: (s: ApiStats) => number, of: ApiStats[]) => of.reduce((a, s) => a + f(s), 0);
    const perApi = (f: (i: number) => number) => apis.map((_, i) => f(i)).join(' / ');
    const achieved = latency.length / elapsed;
    if (firstError) console.error(`first heartbeat error: ${firstError}`);
    return {
      name: apis.length > 1 ? 'heartbeatsScaleOut' : 'heartbeats',
      command: commandFor('heartbeats', o, { ...DEFAULTS, pg: o.pg }),
      machine,
      options: o,
      startedAt: startedAt.toISOString(),
      durationSec: round((Date.now() - startedAt.getTime()) / 1000),
      headline:
        `${round(achieved)}/s of ${round(rate)}/s scheduled, latency p50 ${round(l.p50, 1)} ms / p99 ${round(l.p99, 1)} ms, ${errors} errors, ` +
        (apis.length > 1
          ? `${apis.length} API processes ${perApi((i) => round((cpuOf[i]! / elapsed) * 100))}% of a core`
          : `API ${round((apiCpu / elapsed) * 100)}% of a core`),
      figures: {
        'API processes': apis.length,
        workers: o.workers,
        'hello rate (/s)': helloRate === null ? 'not measured (--setup sql)' : round(helloRate),
        'heartbeats scheduled (/s)': round(rate),
        'heartbeats answered (/s)': round(achieved),
        'heartbeats sent / answered / errors': `${measuredSent} / ${latency.length} / ${errors}`,
        'latency p50 (ms)': round(l.p50, 2),
        'latency p99 (ms)': round(l.p99, 2),
        'latency max (ms)': round(l.max, 2),
        'lag behind schedule p99 (ms)': round(g.p99, 2),
        'latency p99 by 5 s window (ms)': byWindow.map((w) => round(summarize(w).p99)).join(' '),
        'max in flight': maxInFlightSeen,
        'API CPU (% of one core)':
          apis.length > 1
            ? `${round((apiCpu / elapsed) * 100)} (${perApi((i) => round((cpuOf[i]! / elapsed) * 100))})`
            : round((apiCpu / elapsed) * 100),
        'API CPU per heartbeat (ms)': round((apiCpu * 1000) / Math.max(latency.length, 1), 3),
        'of which in the kernel (ms)': round(
          (sum((s) => s.cpu.system, api1) - sum((s) => s.cpu.system, api0)) / 1000 / Math.max(latency.length, 1),
          3,
        ),
        'API event-loop utilization': perApi((i) =>
          round(
            (api1[i]!.elu.active - api0[i]!.elu.active) /
              (api1[i]!.elu.active + api1[i]!.elu.idle - api0[i]!.elu.active - api0[i]!.elu.idle || 1),
            2,
          ),
        ),
        'API RSS (MiB)': apis.length > 1 ? perApi((i) => round(api1[i]!.rssMiB)) : round(api1[0]!.rssMiB),
        'API errors logged': sum((s) => s.errors, api1),
        'API scheduler ticks skipped (overran)': apis.reduce((n, a) => n + a.tickOverruns(), 0),
        'PostgreSQL CPU (% of one core)': pg0 === null || pg1 === null ? null : round(((pg1 - pg0) / elapsed) * 100),
        'load generator CPU (% of one core)': round(((me1.user + me1.system) / 1e6 / elapsed) * 100),
        'phase length (s)': round(elapsed, 2),
      },
    };
  } finally {
    await Promise.all(apis.map((a) => a.stop()));
    await db.drop();
  }
}

if (isMain(import.meta)) runAsScript(heartbeats);
