/**
 * (e) Subscription fan-out: D dashboards (default 1,000) subscribed over graphql-ws to one job's
 * events (`jobEvents`), split evenly over P API processes (default 2) on one PostgreSQL; E events
 * (default 30) emitted one at a time, each by a third process (the domain's createTask, as a
 * planner fanning out work does: one transaction, one NOTIFY). Warm-up events first, until every
 * dashboard has received one (its subscription is live). For each measured event, the time from
 * just before it is written to its arrival at each dashboard; every dashboard must receive every
 * event (missing deliveries are counted after a 10 s grace).
 *
 * The dashboards live in this process (one clock for sending and receiving); so does the load of
 * parsing D frames per event, which counts against the figure, as a browser's would not.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { cpuSeconds, setUpOwner, startApi, taskFactory, type BenchApi } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { postgresCpuSeconds } from './lib/machine.js';
import { round, sleep, summarize } from './lib/stats.js';

const DEFAULTS = { dashboards: 1000, processes: 2, events: 30, gapMs: 300 };
const USAGE = `usage: node --import tsx bench/fanout.ts [--dashboards 1000] [--processes 2] [--events 30] [--gap-ms 300]
                 [--pg postgres://postgres@127.0.0.1:5432/postgres]`;

const SUBSCRIPTION = `subscription($jobId: ID!) { jobEvents(jobId: $jobId) { __typename ... on JobEventEnvelope { event { id kind payload } } } }`;

export async function fanout(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const { machine, startedAt } = await startBench(
    `subscription fan-out (${o.dashboards} dashboards on ${o.processes} API processes, ${o.events} events)`,
    o.pg,
  );
  const db = await createDatabase(o.pg, 'fanout');
  const first = await startApi(db.url, {});
  const apis: BenchApi[] = [first];
  for (let i = 1; i < o.processes; i++) apis.push(await startApi(db.url, {}, { dataDir: first.dataDir }));
  const clients: Client[] = [];
  try {
    const owner = await setUpOwner(first, 1, { jobs: 1 });
    const jobId = owner.jobs[0]!.jobId;
    const gid = Buffer.from(`Job:${jobId}`).toString('base64');
    // Each dashboard: when a task.created event with a `name` it has not seen arrives, the time.
    const arrivals = new Map<string, number[]>();
    let subscribed = 0;
    const warmSeen = new Map<number, boolean>();
    console.log(`subscribing ${o.dashboards} dashboards …`);
    await Promise.all(
      Array.from({ length: o.dashboards }, (_, i) => {
        const api = apis[i % apis.length]!;
        const client = createClient({
          url: `${api.url.replace(/^http/, 'ws')}/graphql`,
          webSocketImpl: WebSocket,
          connectionParams: { authorization: `Bearer ${owner.userToken}` },
          retryAttempts: 0,
          lazy: false,
        });
        clients.push(client);
        return new Promise<void>((ready, fail) => {
          let connected = false;
          client.on('connected', () => {
            if (connected) return;
            connected = true;
            subscribed++;
            ready();
          });
          client.subscribe(
            { query: SUBSCRIPTION, variables: { jobId: gid } },
            {
              next: (v) => {
                const payload = (v.data as { jobEvents?: { event?: { payload?: { name?: string } } } } | undefined)?.jobEvents?.event
                  ?.payload;
                const name = payload?.name;
                if (name?.startsWith('warm-')) warmSeen.set(i, true);
                if (name?.startsWith('fanout-')) (arrivals.get(name) ?? arrivals.set(name, []).get(name)!).push(performance.now());
              },
              error: (e) => fail(e instanceof Error ? e : new Error(JSON.stringify(e))),
              complete: () => undefined,
            },
          );
        });
      }),
    );
    const f = await taskFactory(db.url, owner, 2);
    // Warm-up: events until every dashboard has received one (its subscription is registered
    // with its process's bus only after the connection is acknowledged and the job's owner checked).
    const warm = new Set<number>();
    const warmEnd = Date.now() + 60_000;
    for (let k = 0; warm.size < o.dashboards; k++) {
      if (Date.now() > warmEnd) throw new Error(`only ${warm.size} of ${o.dashboards} dashboards receive events after 60 s`);
      await f.create({ name: `warm-${k}` });
      await sleep(500);
      for (const [i, seen] of warmSeen) if (seen) warm.add(i);
    }
    const sent = new Map<string, number>();
    const [api0, pg0, me0] = [await Promise.all(apis.map((a) => a.stats())), await postgresCpuSeconds(), process.cpuUsage()];
    const w0 = performance.now();
    for (let k = 0; k < o.events; k++) {
      const name = `fanout-${k}`;
      sent.set(name, performance.now());
      await f.create({ name });
      await sleep(o.gapMs);
    }
    // The last event's stragglers.
    const end = Date.now() + 10_000;
    while (Date.now() < end && [...sent.keys()].some((n) => (arrivals.get(n)?.length ?? 0) < o.dashboards)) await sleep(50);
    const wallSec = (performance.now() - w0) / 1000;
    const [api1, pg1, me1] = [await Promise.all(apis.map((a) => a.stats())), await postgresCpuSeconds(), process.cpuUsage(me0)];
    await f.close();
    const latencies: number[] = [];
    let missing = 0;
    for (const [name, at] of sent) {
      const got = arrivals.get(name) ?? [];
      missing += Math.max(0, o.dashboards - got.length);
      for (const t of got) latencies.push(t - at);
    }
    const s = summarize(latencies);
    const apiCpu = apis.map((_, i) => cpuSeconds(api0[i]!, api1[i]!));
    const figures = {
      dashboards: subscribed,
      events: o.events,
      deliveries: latencies.length,
      missingDeliveries: missing,
      p50Ms: round(s.p50, 1),
      p99Ms: round(s.p99, 1),
      maxMs: round(s.max, 1),
      apiCpuMsPerEvent: round((apiCpu.reduce((a, b) => a + b, 0) * 1000) / o.events, 1),
      apiCpuMsPerDelivery: round((apiCpu.reduce((a, b) => a + b, 0) * 1000) / Math.max(1, latencies.length), 3),
      benchProcessCpuPercent: round(((me1.user + me1.system) / 1e6 / wallSec) * 100, 1),
      postgresCpuPercent: pg0 !== null && pg1 !== null ? round(((pg1 - pg0) / wallSec) * 100, 1) : null,
      apiRssMiB: round(Math.max(...api1.map((a) => a.rssMiB)), 0),
    };
    return {
      name: 'fanout',
      command: commandFor('fanout', o, DEFAULTS),
      machine,
      options: o,
      figures,
      headline: `(e) ${subscribed} dashboards on ${o.processes} API processes: p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms (goal ≤ 200 ms), ${missing} deliveries missing of ${o.events * o.dashboards}; API ${figures.apiCpuMsPerDelivery} ms CPU per delivery`,
      startedAt: startedAt.toISOString(),
      durationSec: round((Date.now() - startedAt.getTime()) / 1000, 1),
    };
  } finally {
    await Promise.all(clients.map((c) => c.dispose()));
    for (const a of apis) await a.stop();
    await db.drop();
  }
}

if (isMain(import.meta)) runAsScript(fanout);
