/**
 * (b) Dispatch latency: from the moment a task is inserted to an idle long-polling
 * worker receiving it.
 *
 * ChatGPU: a real API (own process, default config); K idle simulated workers (default
 * 1, slots 1) each parked in claimTask(waitMs 25000, max 1) over GraphQL HTTP. Each
 * sample calls the domain's createTask (transaction + NOTIFY) and stops the clock when
 * the claimTask response carrying that task arrives at a worker. The worker then
 * completes it (not timed) and parks again before the next sample.
 *
 * graphile-worker (the reference), same PostgreSQL, its own database: a runner with
 * concurrency K and an idle queue; each sample calls addJob and stops the clock when
 * the task function starts (timestamped in the runner process).
 */
import { setUpOwner, startApi, taskFactory } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { startGraphile } from './lib/graphile.js';
import { SimWorker } from './lib/simWorker.js';
import { round, sleep, summarize, wallMs } from './lib/stats.js';

const DEFAULTS = { samples: 200, warmup: 20, pollers: 1, gapMs: 50, graphile: 1 };
const USAGE = `usage: node --import tsx bench/dispatchLatency.ts [--samples 200] [--warmup 20] [--pollers K] [--gap-ms 50] [--graphile 1|0]
                 [--pg postgres://postgres@127.0.0.1:5432/postgres]`;

type Opts = typeof DEFAULTS & { pg: string };
const TIMEOUT_MS = 30_000;

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<T>((_, rej) => (t = setTimeout(() => rej(new Error(`timed out: ${what}`)), TIMEOUT_MS)))]).finally(
    () => clearTimeout(t),
  );
}

/** Per sample: the whole dispatch, and of it the insert (its call returned: committed, NOTIFY sent). */
interface Samples {
  total: number[];
  insert: number[];
}

async function runChatGpu(o: Opts): Promise<Samples> {
  const db = await createDatabase(o.pg, 'dispatch');
  const api = await startApi(db.url);
  const stop = new AbortController();
  let factory: Awaited<ReturnType<typeof taskFactory>> | undefined;
  const loops: Promise<void>[] = [];
  try {
    const owner = await setUpOwner(api, o.pollers);
    factory = await taskFactory(db.url, owner, 2);
    const workers = owner.workerTokens.map((t, i) => new SimWorker(api.url, t, `idle-${i}`));
    await Promise.all(workers.map((w) => w.hello(1)));

    const received = new Map<string, number>();
    let waiter: (() => void) | undefined;
    let parked = 0;
    for (const w of workers) {
      loops.push(
        (async () => {
          while (!stop.signal.aborted) {
            parked++;
            waiter?.();
            let leases;
            try {
              leases = await w.claim(25_000, 1, stop.signal);
            } catch (err) {
              if (stop.signal.aborted) return;
              throw err;
            } finally {
              parked--;
            }
            const at = wallMs();
            for (const l of leases) {
              received.set(l.taskId, at);
              waiter?.();
              await w.complete(l);
            }
          }
        })(),
      );
    }
    const until = async (cond: () => boolean, what: string) => {
      await withTimeout(
        (async () => {
          while (!cond()) await new Promise<void>((r) => (waiter = r));
        })(),
        what,
      );
    };

    const samples: Samples = { total: [], insert: [] };
    for (let i = 0; i < o.warmup + o.samples; i++) {
      await until(() => parked === workers.length, 'workers parked');
      await sleep(o.gapMs + Math.random() * o.gapMs); // the long-poll is registered server-side
      const t0 = wallMs();
      const task = await factory.create();
      const inserted = wallMs();
      await until(() => received.has(task.id), `task ${i} received`);
      if (i >= o.warmup) {
        samples.total.push(received.get(task.id)! - t0);
        samples.insert.push(inserted - t0);
      }
    }
    return samples;
  } finally {
    stop.abort();
    await Promise.allSettled(loops);
    await factory?.close();
    await api.stop();
    await db.drop();
  }
}

async function runGraphile(o: Opts): Promise<Samples> {
  const db = await createDatabase(o.pg, 'dispatch_gw');
  const gw = await startGraphile(db.url, { concurrency: o.pollers, pool: 10, mode: 'latency' });
  try {
    const started = new Map<number, number>();
    let waiter: (() => void) | undefined;
    gw.onStart = (i, at) => {
      started.set(i, at);
      waiter?.();
    };
    const samples: Samples = { total: [], insert: [] };
    for (let i = 0; i < o.warmup + o.samples; i++) {
      await sleep(o.gapMs + Math.random() * o.gapMs);
      const t0 = wallMs();
      await gw.utils.addJob('noop', { i });
      const inserted = wallMs();
      await withTimeout(
        (async () => {
          while (!started.has(i)) await new Promise<void>((r) => (waiter = r));
        })(),
        `job ${i} started`,
      );
      if (i >= o.warmup) {
        samples.total.push(started.get(i)! - t0);
        samples.insert.push(inserted - t0);
      }
    }
    return samples;
  } finally {
    await gw.stop();
    await db.drop();
  }
}

export async function dispatchLatency(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const { machine, startedAt } = await startBench('dispatch latency (task inserted → idle long-polling worker has it)', o.pg);
  console.log(`ChatGPU: ${o.pollers} idle worker(s) in claimTask(waitMs 25000), ${o.samples} samples (+${o.warmup} warm-up) …`);
  const cs = await runChatGpu(o);
  const [c, ci] = [summarize(cs.total), summarize(cs.insert)];
  console.log(`  p50 ${round(c.p50, 2)} ms, p99 ${round(c.p99, 2)} ms (of which the insert call: p50 ${round(ci.p50, 2)} ms)`);
  let g: ReturnType<typeof summarize> | null = null;
  let gi: ReturnType<typeof summarize> | null = null;
  if (o.graphile) {
    console.log(`graphile-worker: concurrency ${o.pollers}, idle, ${o.samples} samples (+${o.warmup} warm-up) …`);
    const gs = await runGraphile(o);
    [g, gi] = [summarize(gs.total), summarize(gs.insert)];
    console.log(`  p50 ${round(g.p50, 2)} ms, p99 ${round(g.p99, 2)} ms (of which addJob: p50 ${round(gi.p50, 2)} ms)`);
  }
  return {
    name: 'dispatchLatency',
    command: commandFor('dispatchLatency', o, { ...DEFAULTS, pg: o.pg }),
    machine,
    options: o,
    startedAt: startedAt.toISOString(),
    durationSec: round((Date.now() - startedAt.getTime()) / 1000),
    headline:
      `ChatGPU p50 ${round(c.p50, 1)} ms / p99 ${round(c.p99, 1)} ms` +
      (g ? `; graphile-worker p50 ${round(g.p50, 1)} ms / p99 ${round(g.p99, 1)} ms; ratio (p50) ${round(c.p50 / g.p50, 2)}×` : ''),
    figures: {
      'ChatGPU p50 (ms)': round(c.p50, 2),
      'ChatGPU p99 (ms)': round(c.p99, 2),
      'ChatGPU max (ms)': round(c.max, 2),
      'ChatGPU mean (ms)': round(c.mean, 2),
      // The split: the insert call (createTask: committed, NOTIFY sent) and the rest (LISTEN, wake, claim, answer).
      'ChatGPU insert p50 (ms)': round(ci.p50, 2),
      'graphile-worker p50 (ms)': g ? round(g.p50, 2) : null,
      'graphile-worker p99 (ms)': g ? round(g.p99, 2) : null,
      'graphile-worker max (ms)': g ? round(g.max, 2) : null,
      'graphile-worker mean (ms)': g ? round(g.mean, 2) : null,
      'graphile-worker addJob p50 (ms)': gi ? round(gi.p50, 2) : null,
      'ratio ChatGPU / graphile-worker (p50; <1 = ChatGPU faster)': g ? round(c.p50 / g.p50, 2) : null,
      'ratio ChatGPU / graphile-worker (p99)': g ? round(c.p99 / g.p99, 2) : null,
    },
  };
}

if (isMain(import.meta)) runAsScript(dispatchLatency);
