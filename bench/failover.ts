/**
 * (d) Failover: time from a worker's SIGKILL to its task running on another worker.
 *
 * A real API (own process) with LEASE_SEC 5, TICK_INTERVAL_SEC 1, HEARTBEAT_SEC 1 and
 * RETRY_BASE_SEC 0 (no retry backoff: the figure is detection + hand-over, not policy),
 * and real `chatgpu-worker` processes (worker/bin/chatgpu-worker.mjs, --python
 * /usr/bin/python3). One task, `sleep 30` (workload shell). Each round: the worker
 * running it is W(i); a fresh worker W(i+1) is started and left idle in its long-poll;
 * W(i)'s process group gets SIGKILL. Measured from the kill to
 *   LOST     — the tick marks W(i)'s attempt lost (attempt.finishedAt),
 *   claimed  — W(i+1) holds a new attempt (attempt.createdAt),
 *   RUNNING  — W(i+1)'s first heartbeat confirms it started (attempt.startedAt),
 * all stamped by the API's clock on this machine. W(i+1) is the next round's victim.
 */
import { setUpOwner, startApi, taskFactory } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { quantile, round, sleep } from './lib/stats.js';
import { killWorker as kill, startWorker, type WorkerProc } from './lib/workerProcess.js';

const DEFAULTS = { rounds: 5, leaseSec: 5, tickSec: 1, heartbeatSec: 1, python: '/usr/bin/python3', sandbox: 'auto' };
const USAGE = `usage: node --import tsx bench/failover.ts [--rounds 5] [--lease-sec 5] [--tick-sec 1] [--heartbeat-sec 1]
                 [--python /usr/bin/python3] [--sandbox auto|bwrap|none] [--pg postgres://postgres@127.0.0.1:5432/postgres]`;

export async function failover(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const { machine, startedAt } = await startBench(
    `failover (SIGKILL → task running on another worker; lease ${o.leaseSec} s, tick ${o.tickSec} s)`,
    o.pg,
  );
  const db = await createDatabase(o.pg, 'failover');
  const api = await startApi(db.url, {
    LEASE_SEC: String(o.leaseSec),
    TICK_INTERVAL_SEC: String(o.tickSec),
    HEARTBEAT_SEC: String(o.heartbeatSec),
    RETRY_BASE_SEC: '0',
  });
  const procs: WorkerProc[] = [];
  let factory: Awaited<ReturnType<typeof taskFactory>> | undefined;
  try {
    const owner = await setUpOwner(api, 1);
    factory = await taskFactory(db.url, owner, 2);
    const prisma = factory.resources.prisma;
    const token = owner.workerTokens[0]!;

    const waitFor = async <T>(what: string, fn: () => Promise<T | null | undefined>, timeoutMs = 60_000): Promise<T> => {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const v = await fn();
        if (v) return v;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await sleep(20);
      }
    };

    let victim = await startWorker(api.url, token, 'fo-0', o);
    procs.push(victim);
    const task = await factory.create({
      name: 'sleeper',
      command: 'sleep 30',
      requirements: { workload: 'shell' },
      maxAttempts: o.rounds + 2,
    });
    let current = await waitFor('the first attempt RUNNING', () =>
      prisma.attempt.findFirst({ where: { taskId: task.id, status: 'RUNNING' } }),
    );

    const rounds: { lost: number; claimed: number; running: number }[] = [];
    for (let i = 1; i <= o.rounds; i++) {
      const next = await startWorker(api.url, token, `fo-${i}`, o);
      procs.push(next);
      await sleep(500); // parked in its long-poll
      const nextRow = await prisma.worker.findFirstOrThrow({ where: { name: next.name } });
      const killedAt = Date.now();
      await kill(victim);
      const lost = await waitFor(`round ${i}: attempt LOST`, () => prisma.attempt.findFirst({ where: { id: current.id, status: 'LOST' } }));
      const moved = await waitFor(`round ${i}: RUNNING on ${next.name}`, () =>
        prisma.attempt.findFirst({ where: { taskId: task.id, workerId: nextRow.id, status: 'RUNNING' } }),
      );
      const r = {
        lost: (lost.finishedAt!.getTime() - killedAt) / 1000,
        claimed: (moved.createdAt.getTime() - killedAt) / 1000,
        running: (moved.startedAt!.getTime() - killedAt) / 1000,
      };
      rounds.push(r);
      console.log(
        `  round ${i}: LOST after ${round(r.lost, 2)} s, claimed by ${next.name} after ${round(r.claimed, 2)} s, RUNNING after ${round(r.running, 2)} s`,
      );
      victim = next;
      current = moved;
    }

    const col = (k: keyof (typeof rounds)[number]) => rounds.map((r) => r[k]);
    const med = (k: keyof (typeof rounds)[number]) => round(quantile(col(k), 0.5), 2);
    const max = (k: keyof (typeof rounds)[number]) => round(Math.max(...col(k)), 2);
    return {
      name: 'failover',
      command: commandFor('failover', o, { ...DEFAULTS, pg: o.pg }),
      machine,
      options: o,
      startedAt: startedAt.toISOString(),
      durationSec: round((Date.now() - startedAt.getTime()) / 1000),
      headline: `SIGKILL → RUNNING elsewhere: median ${med('running')} s, max ${max('running')} s (lease ${o.leaseSec} s, tick ${o.tickSec} s, ${o.rounds} rounds)`,
      figures: {
        rounds: o.rounds,
        'SIGKILL → LOST median / max (s)': `${med('lost')} / ${max('lost')}`,
        'SIGKILL → claimed elsewhere median / max (s)': `${med('claimed')} / ${max('claimed')}`,
        'SIGKILL → RUNNING elsewhere median (s)': med('running'),
        'SIGKILL → RUNNING elsewhere max (s)': max('running'),
        'expected SIGKILL → LOST (lease − heartbeat … lease + tick, s)': `${o.leaseSec - o.heartbeatSec} … ${o.leaseSec + o.tickSec}`,
        'per round RUNNING (s)': col('running')
          .map((x) => round(x, 2))
          .join(', '),
        'API scheduler ticks skipped (overran)': api.tickOverruns(),
      },
    };
  } finally {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) await kill(p, 'SIGTERM');
    await factory?.close();
    await api.stop();
    await db.drop();
  }
}

if (isMain(import.meta)) runAsScript(failover);
