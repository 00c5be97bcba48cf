/**
 * The chaos run shared by bench/chaos.ts (default 1,000 tasks, 20 workers) and
 * api/test/chaos.test.ts (CI size): N small Python tasks in several jobs, W real
 * `chatgpu-worker` processes split over two API processes on one database (one shared
 * data dir for blobs, fixed ports), and a seeded random schedule of faults while they run:
 *   kill     — SIGKILL a worker's process group (it and its task vanish); a replacement starts
 *   stop     — SIGSTOP a worker (busy if one is) for longer than its lease, then SIGCONT: it
 *              comes back with a lease the tick has expired and must be refused as stale
 *   restart  — one of the two API processes is killed (SIGKILL or a clean stop, by the seed)
 *              and started again on its port; its workers retry until it answers
 *   cut      — a worker's connection is dropped: every worker reaches its API through its own
 *              TCP proxy on 127.0.0.1, which closes its open connections and refuses new ones
 *              for longer than the lease, then lets it back (the worker's leases expire meanwhile;
 *              its late reports must be refused and recorded)
 *   break-env — one worker's machine breaks under it while it runs: the worker was started with
 *              --python pointing at a link to the run's Python in a folder of this run, and the
 *              folder is removed (its interpreter gone, as when a package is removed or a disk
 *              fails). Once per run; that worker is never killed, stopped or cut, so its end state
 *              can be checked: UNHEALTHY or QUARANTINED, and no task FAILED on it (invariant 13:
 *              what it could not start is an infrastructure error, retried elsewhere)
 *   pg-restart — PostgreSQL itself is stopped (a fast shutdown: open connections get 57P01,
 *              new ones are refused), stays down for a seeded few seconds, and starts again:
 *              both APIs answer 503/UNAVAILABLE meanwhile and reconnect, the workers retry their
 *              heartbeats, completions and uploads, the tick and the agent locks carry on. Only
 *              when the run is given its own cluster (`postgres`; bench/lib/throwawayPostgres.ts),
 *              never on a shared server.
 * The first faults are one of each kind (in seeded order), so even a short run exercises
 * all of them. Faults stop when every task is terminal (or at the deadline).
 * Then, from the database (docs/architecture.md §6 invariants):
 *   - every task terminal: SUCCEEDED, or FAILED with retries run out (never CANCELLED);
 *   - a SUCCEEDED task has exactly one SUCCEEDED attempt, is current on it, and its result
 *     is that attempt's (attempt id, outputs; the output file's bytes are the task's own);
 *   - no accepted result changed: results are snapshotted as they appear (polled) and compared;
 *   - every STALE attempt has its StaleReport, and no LOST attempt has one; a LOST attempt
 *     of a worker that was resumed and heard from again must have been reported late
 *     (LOST → STALE);
 *   - an accepted attempt's log chunks have seq 0..n-1, and each line the task printed is
 *     there exactly once;
 *   - Job.costCad = the sum of its billable usage entries, Job.lostCostCad the others;
 *   - stuck: tasks not terminal, attempts still LEASED/RUNNING at the end;
 *   - no API answered 500 (an unexpected error, logged; an outage is a 503 or UNAVAILABLE).
 * Nothing here times anything against a threshold: durations are reported, never asserted.
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { retryThroughOutage } from '../../api/src/db/unavailable.js';
import { mulberry32 } from '../../api/src/preparation/compareTimings.js';
import { setUpOwner, startApi, taskFactory, type BenchApi, type TaskFactory } from './api.js';
import { round, sleep } from './stats.js';
import { freePort, type ThrowawayPostgres } from './throwawayPostgres.js';
import { killWorker, signalWorker, startWorker, type WorkerProc } from './workerProcess.js';

export interface ChaosOptions {
  tasks: number;
  workers: number;
  jobs: number;
  seed: number;
  leaseSec: number;
  tickSec: number;
  heartbeatSec: number;
  offlineSec: number;
  maxAttempts: number;
  /** Seconds between faults: uniform in [faultMinSec, faultMaxSec]. */
  faultMinSec: number;
  faultMaxSec: number;
  /** How long a pg-restart keeps PostgreSQL down: uniform in [pgDownMinSec, pgDownMaxSec]. */
  pgDownMinSec: number;
  pgDownMaxSec: number;
  /** Give up waiting for the tasks after this long (what is left is counted stuck). */
  timeoutSec: number;
  python: string;
  sandbox: string;
  /** 1: the break-env fault is in the schedule (one worker's interpreter removed mid-run); 0: left out. */
  breakEnv: number;
}

export const CHAOS_DEFAULTS: ChaosOptions = {
  tasks: 1000,
  workers: 20,
  jobs: 5,
  seed: 1,
  leaseSec: 4,
  tickSec: 1,
  heartbeatSec: 1,
  offlineSec: 4,
  maxAttempts: 30,
  faultMinSec: 1,
  faultMaxSec: 4,
  pgDownMinSec: 1,
  pgDownMaxSec: 5,
  timeoutSec: 1800,
  python: '/usr/bin/python3',
  sandbox: 'auto',
  breakEnv: 1,
};

export type FaultKind = 'kill' | 'stop' | 'restart' | 'cut' | 'pg-restart' | 'break-env';

/** The worker whose environment the break-env fault broke, as the database has it at the end. */
export interface BrokenWorker {
  name: string;
  /** Its status at the end (UNHEALTHY or QUARANTINED expected) and why. */
  status: string;
  statusReason: string | null;
  /** Its attempts by how they ended after the break (FAILED ones by error class). */
  attemptsAfterBreak: Record<string, number>;
  /** Tasks FAILED whose last attempt was on it (0 expected). */
  tasksFailedByIt: number;
}

export interface ChaosReport {
  tasks: number;
  jobs: number;
  workers: number;
  seed: number;
  faults: Record<FaultKind, number>;
  succeeded: number;
  /** FAILED with retries run out (allowed by the invariants; not expected with a high maxAttempts). */
  failedRetriesOut: number;
  /** Attempts the tick expired (LOST, or STALE once their worker reported late). */
  lostAttempts: number;
  /** Of those, reported late by their worker (StaleReport rows, attempt STALE). */
  reportedLate: number;
  staleReports: number;
  /** The worker the break-env fault broke (null when the fault did not happen). */
  broken: BrokenWorker | null;
  /** Workers the scheduler's black-hole rule quarantined at some point, by name. */
  quarantined: string[];
  duplicated: number;
  stuck: number;
  /** Every breach found, in words; empty when all invariants hold. */
  violations: string[];
  durationSec: number;
  line: string;
}

/** The task program: prints its lines, sleeps, writes its output file. */
export const CHAOS_MAIN_PY = `import os, sys, time
i, lines, pause = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
for k in range(lines):
    print(f"chaos task {i} line {k}", flush=True)
time.sleep(pause)
with open(os.path.join(os.environ["CHATGPU_OUTPUT_DIR"], "result.txt"), "w") as f:
    f.write(f"chaos task {i} done\\n")
`;

const expectedOutput = (i: number) => createHash('sha256').update(`chaos task ${i} done\n`).digest('hex');

interface CutProxy {
  port: number;
  /** Drops every open connection and refuses new ones for `ms`. */
  cut(ms: number): void;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 to `targetPort` (an API), which the cut fault disconnects. */
async function startCutProxy(targetPort: number): Promise<CutProxy> {
  const sockets = new Set<Socket>();
  let downUntil = 0;
  const server: Server = createServer((client) => {
    if (Date.now() < downUntil) return void client.destroy();
    const upstream = connect(targetPort, '127.0.0.1');
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const sock of [client, upstream]) {
      sockets.add(sock);
      sock.on('error', drop);
      sock.on('close', drop);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as { port: number }).port,
    cut(ms) {
      downUntil = Date.now() + ms;
      for (const sock of sockets) sock.destroy();
      sockets.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const sock of sockets) sock.destroy();
        server.close(() => resolve());
      }),
  };
}

const stable = (v: unknown) =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x,
  );

interface Slot {
  w: WorkerProc;
  api: number;
  stopped: boolean;
  dead: boolean;
  /** When it was resumed after a SIGSTOP, and when that stop began. */
  resumes: { stoppedAt: number; resumedAt: number }[];
  /** When the current SIGSTOP began. */
  stoppedAt?: number;
  /** The TCP proxy between this worker and its API (the cut fault). */
  proxy: CutProxy;
  diedAt?: number;
  /** Started with the run's removable interpreter (the break-env fault's worker). */
  fragile?: boolean;
}

/** Cleanups of runs in progress (a test's afterAll calls stopAllChaos when a run is cut short). */
const running = new Set<() => Promise<void>>();
export async function stopAllChaos(): Promise<void> {
  await Promise.all([...running].map((c) => c()));
}

/** The run's own reads wait out the pg-restart fault like every other component (2 minutes at most). */
const throughOutage = <T>(fn: () => Promise<T>) => retryThroughOutage(fn, 120_000);

/**
 * One chaos run on `databaseUrl` (an empty database or a migrated clone). `log` gets
 * progress lines. Always stops every worker and API it started, also on failure.
 * `postgres`: the cluster `databaseUrl` is on, when it is the run's own — then PostgreSQL
 * restarts are among the faults (never pass the machine's shared server).
 */
export async function runChaos(
  databaseUrl: string,
  o: ChaosOptions,
  log: (line: string) => void = console.log,
  postgres?: Pick<ThrowawayPostgres, 'stop' | 'start'>,
): Promise<ChaosReport> {
  const started = Date.now();
  const rnd = mulberry32(o.seed); // the schedule and the tasks, replayable from the seed
  const between = (lo: number, hi: number) => lo + rnd() * (hi - lo);
  const env = {
    LEASE_SEC: String(o.leaseSec),
    TICK_INTERVAL_SEC: String(o.tickSec),
    HEARTBEAT_SEC: String(o.heartbeatSec),
    RETRY_BASE_SEC: '0',
    WORKER_OFFLINE_SEC: String(o.offlineSec),
  };
  const dataDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-chaos-'));
  const apiLines: string[] = [];
  // CHAOS_DUMP_DIR: every API output line (api.log) and each worker's output (<name>.log) go there, to read after a run.
  const dumpDir = process.env.CHAOS_DUMP_DIR;
  if (dumpDir) await mkdir(dumpDir, { recursive: true });
  // An answer the API masked as a 500 (an unexpected error, not an outage's 503) is a violation.
  const internalErrors: string[] = [];
  const onLine = (l: string) => {
    if (/^\[api\] (unexpected GraphQL error|request failed)\b/.test(l)) internalErrors.push(l.slice(0, 500));
    if (dumpDir) appendFileSync(path.join(dumpDir, 'api.log'), `${new Date().toISOString()} ${l}\n`);
    apiLines.push(l);
    if (apiLines.length > 200) apiLines.shift();
  };
  const ports = [await freePort(), await freePort()];
  const apis: (BenchApi | null)[] = [null, null];
  const slots: Slot[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let factory: TaskFactory | undefined;
  let cleaned = false;
  let pgDown = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    for (const t of timers) clearTimeout(t);
    if (dumpDir) for (const s of slots) await writeFile(path.join(dumpDir, `${s.w.name}.log`), s.w.output()).catch(() => {});
    if (pgDown) await postgres?.start().catch(() => {});
    await Promise.all(slots.filter((s) => !s.dead).map((s) => killWorker(s.w, 'SIGTERM').catch(() => {})));
    await Promise.all(slots.map((s) => s.proxy.close().catch(() => {})));
    await factory?.close().catch(() => {});
    await Promise.all(apis.map((a) => a?.stop().catch(() => {})));
    await rm(dataDir, { recursive: true, force: true }).catch(() => {});
  };
  running.add(cleanup);
  try {
    // The first API migrates an empty database; the second starts once it has.
    apis[0] = await startApi(databaseUrl, env, { port: ports[0]!, dataDir, onLine });
    apis[1] = await startApi(databaseUrl, env, { port: ports[1]!, dataDir, onLine });
    const owner = await setUpOwner(apis[0], 1, { jobs: o.jobs, mainPy: CHAOS_MAIN_PY });
    const token = owner.workerTokens[0]!;
    factory = await taskFactory(databaseUrl, owner, 4);
    const prisma = factory.resources.prisma;
    const jobIds = owner.jobs.map((j) => j.jobId);

    // Tasks: one line mostly, 3–20 lines for about one in six; a 0.2–2 s pause.
    const spec = new Map<string, { i: number; lines: number }>();
    for (let i = 0; i < o.tasks; i++) {
      const lines = rnd() < 0.15 ? 3 + Math.floor(rnd() * 18) : 1;
      const pause = between(0.2, 2).toFixed(2);
      const t = await factory.create({ name: `chaos-${i}`, command: `python main.py ${i} ${lines} ${pause}`, maxAttempts: o.maxAttempts });
      spec.set(t.id, { i, lines });
    }
    log(`chaos: ${o.tasks} tasks created in ${o.jobs} jobs; starting ${o.workers} workers on 2 API processes`);

    let named = 0;
    // The break-env fault's worker runs tasks with a Python reached through a link in a folder
    // of this run (the link's path is what it checks and binds), which the fault removes.
    const fragileDir = path.join(dataDir, 'fragile-python');
    const fragilePython = path.join(fragileDir, 'bin', 'python3');
    if (o.breakEnv) {
      await mkdir(path.dirname(fragilePython), { recursive: true });
      await symlink(o.python, fragilePython);
    }
    const launch = async (api: number, fragile = false) => {
      const proxy = await startCutProxy(ports[api]!);
      const w = await startWorker(
        `http://127.0.0.1:${proxy.port}`,
        token,
        `chaos-${named++}${fragile ? '-fragile' : ''}`,
        fragile ? { ...o, python: fragilePython } : o,
      );
      const s: Slot = { w, api, stopped: false, dead: false, resumes: [], proxy, fragile };
      slots.push(s);
      void w.exited.then(() => {
        s.dead = true;
        s.diedAt ??= Date.now();
      });
      return s;
    };
    for (let k = 0; k < o.workers; k += 4)
      await Promise.all(Array.from({ length: Math.min(4, o.workers - k) }, (_, j) => launch((k + j) % 2, o.breakEnv > 0 && k + j === 0)));

    // Accepted results as they appear; a later poll that differs is a changed result.
    const accepted = new Map<string, string>();
    const violations: string[] = [];
    const snapshot = async () => {
      const rows = await throughOutage(() =>
        prisma.task.findMany({ where: { jobId: { in: jobIds }, status: 'SUCCEEDED' }, select: { id: true, result: true } }),
      );
      for (const r of rows) {
        const v = stable(r.result);
        const before = accepted.get(r.id);
        if (before === undefined) accepted.set(r.id, v);
        else if (before !== v) violations.push(`task ${r.id}: accepted result changed from ${before} to ${v}`);
      }
    };
    const open = () =>
      throughOutage(() => prisma.task.count({ where: { jobId: { in: jobIds }, status: { in: ['QUEUED', 'LEASED', 'RUNNING'] } } }));

    const faults: Record<FaultKind, number> = { kill: 0, stop: 0, restart: 0, cut: 0, 'pg-restart': 0, 'break-env': 0 };
    const kinds: FaultKind[] = [
      ...(postgres ? (['kill', 'stop', 'restart', 'cut', 'pg-restart'] as const) : (['kill', 'stop', 'restart', 'cut'] as const)),
      ...(o.breakEnv ? (['break-env'] as const) : []),
    ];
    let brokenAt: Date | null = null;
    const firstKinds = kinds.sort(() => rnd() - 0.5);
    const pickKind = (): FaultKind => {
      const next = firstKinds.shift();
      if (next) return next;
      const x = rnd();
      if (!postgres) return x < 0.35 ? 'kill' : x < 0.65 ? 'stop' : x < 0.85 ? 'cut' : 'restart';
      return x < 0.3 ? 'kill' : x < 0.55 ? 'stop' : x < 0.75 ? 'cut' : x < 0.9 ? 'restart' : 'pg-restart';
    };
    const busyWorkerNames = async () => {
      const live = await throughOutage(() =>
        prisma.attempt.findMany({
          where: { status: { in: ['LEASED', 'RUNNING'] }, task: { jobId: { in: jobIds } } },
          select: { worker: { select: { name: true } } },
        }),
      );
      return new Set(live.map((a) => a.worker.name));
    };

    const inject = async (kind: FaultKind) => {
      // The broken worker stays as it is, to be checked at the end.
      const alive = slots.filter((s) => !s.dead && !s.fragile);
      if (kind === 'kill') {
        const s = alive[Math.floor(rnd() * alive.length)];
        if (!s) return;
        s.diedAt = Date.now();
        await killWorker(s.w, 'SIGKILL');
        log(`  fault kill ${s.w.name} (+${round((Date.now() - started) / 1000)} s)`);
        faults.kill++;
        await launch(s.api);
      } else if (kind === 'stop') {
        const candidates = alive.filter((s) => !s.stopped);
        if (candidates.length <= 1) return;
        const busy = await busyWorkerNames();
        const pool = candidates.some((s) => busy.has(s.w.name)) ? candidates.filter((s) => busy.has(s.w.name)) : candidates;
        const s = pool[Math.floor(rnd() * pool.length)]!;
        const forSec = between(o.leaseSec + 1, o.leaseSec + 4);
        signalWorker(s.w, 'SIGSTOP');
        s.stopped = true;
        const stoppedAt = Date.now();
        s.stoppedAt = stoppedAt;
        log(`  fault stop ${s.w.name} for ${round(forSec)} s (+${round((stoppedAt - started) / 1000)} s)`);
        faults.stop++;
        const t = setTimeout(() => {
          timers.delete(t);
          signalWorker(s.w, 'SIGCONT');
          s.stopped = false;
          s.resumes.push({ stoppedAt, resumedAt: Date.now() });
        }, forSec * 1000);
        timers.add(t);
      } else if (kind === 'cut') {
        const candidates = alive.filter((s) => !s.stopped);
        if (candidates.length === 0) return;
        const busy = await busyWorkerNames();
        const pool = candidates.some((s) => busy.has(s.w.name)) ? candidates.filter((s) => busy.has(s.w.name)) : candidates;
        const s = pool[Math.floor(rnd() * pool.length)]!;
        const forSec = between(o.leaseSec + 1, o.leaseSec + 4);
        s.proxy.cut(forSec * 1000);
        log(`  fault cut ${s.w.name}'s connection for ${round(forSec)} s (+${round((Date.now() - started) / 1000)} s)`);
        faults.cut++;
      } else if (kind === 'restart') {
        const i = rnd() < 0.5 ? 0 : 1;
        const hard = rnd() < 0.5;
        const t0 = Date.now();
        if (hard) await apis[i]!.kill();
        else await apis[i]!.stop();
        apis[i] = null;
        apis[i] = await startApi(databaseUrl, env, { port: ports[i]!, dataDir, onLine });
        log(
          `  fault restart API ${i} (${hard ? 'SIGKILL' : 'clean stop'}; back after ${round((Date.now() - t0) / 1000)} s) (+${round((t0 - started) / 1000)} s)`,
        );
        faults.restart++;
      } else if (kind === 'break-env') {
        const s = slots.find((x) => x.fragile && !x.dead);
        if (!s) return;
        brokenAt = new Date();
        await rm(fragileDir, { recursive: true, force: true });
        log(`  fault break-env: ${s.w.name}'s Python (${fragilePython}) removed (+${round((Date.now() - started) / 1000)} s)`);
        faults['break-env']++;
      } else if (kind === 'pg-restart') {
        if (!postgres) return;
        const downSec = between(o.pgDownMinSec, o.pgDownMaxSec);
        const t0 = Date.now();
        pgDown = true;
        await postgres.stop();
        await sleep(downSec * 1000);
        await postgres.start();
        pgDown = false;
        log(
          `  fault restart PostgreSQL (down ${round(downSec)} s; back after ${round((Date.now() - t0) / 1000)} s) (+${round((t0 - started) / 1000)} s)`,
        );
        faults['pg-restart']++;
      }
    };

    const deadline = started + o.timeoutSec * 1000;
    let remaining = await open();
    let lastReport = Date.now();
    while (remaining > 0 && Date.now() < deadline) {
      const waitUntil = Date.now() + between(o.faultMinSec, o.faultMaxSec) * 1000;
      while (Date.now() < waitUntil) {
        await sleep(Math.min(500, Math.max(0, waitUntil - Date.now())));
        await snapshot();
      }
      remaining = await open();
      if (remaining === 0) break;
      await inject(pickKind());
      if (Date.now() - lastReport > 30_000) {
        lastReport = Date.now();
        log(`  ${o.tasks - remaining}/${o.tasks} tasks terminal (+${round((Date.now() - started) / 1000)} s)`);
      }
    }
    // Resume whoever is still stopped, and give them a few heartbeats to report late.
    for (const t of timers) {
      clearTimeout(t);
      timers.delete(t);
    }
    for (const s of slots.filter((x) => x.stopped && !x.dead)) {
      signalWorker(s.w, 'SIGCONT');
      s.stopped = false;
      s.resumes.push({ stoppedAt: s.stoppedAt ?? 0, resumedAt: Date.now() });
    }
    await sleep(Math.max(3, 3 * o.heartbeatSec) * 1000);
    await snapshot();
    // The broken worker's end state, while it still runs (its status is what it reports now).
    const fragileSlot = slots.find((s) => s.fragile);
    const broken = brokenAt && fragileSlot ? await brokenWorkerState(prisma, jobIds, fragileSlot.w.name, brokenAt) : null;
    if (broken && !['UNHEALTHY', 'QUARANTINED'].includes(broken.status))
      violations.push(`worker ${broken.name}: its Python was removed, yet it is ${broken.status} (not UNHEALTHY or QUARANTINED)`);
    if (broken?.tasksFailedByIt)
      violations.push(`worker ${broken.name}: ${broken.tasksFailedByIt} tasks FAILED on it after its environment broke`);
    const quarantined = (
      await throughOutage(() => prisma.worker.findMany({ where: { quarantinedUntil: { not: null } }, select: { name: true } }))
    )
      .map((w) => w.name)
      .sort();
    // Workers and APIs stop before the checks: nothing changes under them.
    await Promise.all(slots.filter((s) => !s.dead).map((s) => killWorker(s.w, 'SIGTERM')));
    await Promise.all(apis.map((a) => a?.stop()));
    apis[0] = apis[1] = null;

    const report = await verify(prisma, jobIds, spec, accepted, slots, violations);
    for (const l of internalErrors) violations.push(`an API answered 500: ${l}`);
    const durationSec = round((Date.now() - started) / 1000);
    const f = faults;
    const line =
      `chaos: ${o.tasks} tasks in ${o.jobs} jobs, ${o.workers} workers, 2 API processes — faults ${f.kill + f.stop + f.restart + f.cut + f['pg-restart'] + f['break-env']} ` +
      `(${f.kill} SIGKILL+replace, ${f.stop} SIGSTOP past lease, ${f.cut} connection cut past lease, ${f.restart} API restart, ${f['pg-restart']} PostgreSQL restart, ${f['break-env']} environment broken) — ${report.succeeded} succeeded, ` +
      `${report.failedRetriesOut} failed (retries out), ${report.lostAttempts} lost attempts (${report.reportedLate} reported late), ` +
      `${report.duplicated} duplicated accepted results, ${report.stuck} stuck, ${violations.length} invariant violations` +
      (broken
        ? ` — broken worker ${broken.name}: ${broken.status}, attempts after the break ${JSON.stringify(broken.attemptsAfterBreak)}, ${broken.tasksFailedByIt} tasks failed by it`
        : '') +
      `${quarantined.length ? ` — quarantined: ${quarantined.join(', ')}` : ''} — seed ${o.seed}, ${durationSec} s`;
    if (violations.length) log(`violations:\n  ${violations.slice(0, 50).join('\n  ')}`);
    if (report.stuck || violations.length) log(`last API output:\n${apiLines.slice(-40).join('\n')}`);
    return {
      tasks: o.tasks,
      jobs: o.jobs,
      workers: o.workers,
      seed: o.seed,
      faults,
      ...report,
      broken,
      quarantined,
      violations,
      durationSec,
      line,
    };
  } catch (err) {
    log(`last API output:\n${apiLines.slice(-40).join('\n')}`);
    throw err;
  } finally {
    await cleanup();
    running.delete(cleanup);
  }
}

type Prisma = TaskFactory['resources']['prisma'];

/** The broken worker as the database has it: its status, its attempts since the break, the tasks it failed. */
async function brokenWorkerState(prisma: Prisma, jobIds: string[], name: string, brokenAt: Date): Promise<BrokenWorker> {
  const w = await throughOutage(() =>
    prisma.worker.findFirstOrThrow({ where: { name }, select: { id: true, status: true, statusReason: true } }),
  );
  const after = await throughOutage(() =>
    prisma.attempt.findMany({
      where: { workerId: w.id, createdAt: { gte: brokenAt }, task: { jobId: { in: jobIds } } },
      select: { status: true, errorClass: true },
    }),
  );
  const attemptsAfterBreak: Record<string, number> = {};
  for (const a of after) {
    const k = a.status === 'FAILED' ? `FAILED ${a.errorClass}` : a.status;
    attemptsAfterBreak[k] = (attemptsAfterBreak[k] ?? 0) + 1;
  }
  const failed = await throughOutage(() =>
    prisma.task.findMany({
      where: { jobId: { in: jobIds }, status: 'FAILED' },
      select: { currentAttempt: { select: { workerId: true } } },
    }),
  );
  return {
    name,
    status: w.status,
    statusReason: w.statusReason,
    attemptsAfterBreak,
    tasksFailedByIt: failed.filter((t) => t.currentAttempt?.workerId === w.id).length,
  };
}

async function verify(
  prisma: Prisma,
  jobIds: string[],
  spec: Map<string, { i: number; lines: number }>,
  accepted: Map<string, string>,
  slots: Slot[],
  violations: string[],
) {
  const tasks = await prisma.task.findMany({
    where: { jobId: { in: jobIds } },
    select: { id: true, status: true, statusReason: true, result: true, currentAttemptId: true, attemptCount: true, maxAttempts: true },
  });
  const attempts = await prisma.attempt.findMany({
    where: { task: { jobId: { in: jobIds } } },
    select: {
      id: true,
      taskId: true,
      status: true,
      outputs: true,
      startedAt: true,
      finishedAt: true,
      createdAt: true,
      worker: { select: { name: true, lastSeenAt: true } },
      _count: { select: { staleReports: true } },
    },
  });
  const byTask = new Map<string, typeof attempts>();
  for (const a of attempts) byTask.set(a.taskId, [...(byTask.get(a.taskId) ?? []), a]);

  let succeeded = 0;
  let failedRetriesOut = 0;
  let duplicated = 0;
  let stuck = 0;
  const acceptedAttempts: { attemptId: string; taskId: string }[] = [];
  for (const t of tasks) {
    const own = byTask.get(t.id) ?? [];
    const ok = own.filter((a) => a.status === 'SUCCEEDED');
    if (t.status === 'QUEUED' || t.status === 'LEASED' || t.status === 'RUNNING') {
      stuck++;
      violations.push(`task ${t.id} (${spec.get(t.id)?.i}): not terminal (${t.status}; ${t.statusReason ?? ''})`);
      continue;
    }
    if (ok.length > 1) {
      duplicated += ok.length - 1;
      violations.push(`task ${t.id}: ${ok.length} accepted (SUCCEEDED) attempts`);
    }
    if (t.status === 'CANCELLED') violations.push(`task ${t.id}: CANCELLED (nothing cancels in this run)`);
    if (t.status === 'FAILED') {
      if (t.attemptCount >= t.maxAttempts && /attempt|retr/i.test(t.statusReason ?? '')) failedRetriesOut++;
      else violations.push(`task ${t.id}: FAILED without running out of retries (${t.attemptCount}/${t.maxAttempts}: ${t.statusReason})`);
      if (ok.length) violations.push(`task ${t.id}: FAILED but has an accepted attempt`);
    }
    if (t.status !== 'SUCCEEDED') continue;
    succeeded++;
    const a = ok[0];
    if (!a) {
      violations.push(`task ${t.id}: SUCCEEDED without a SUCCEEDED attempt`);
      continue;
    }
    acceptedAttempts.push({ attemptId: a.id, taskId: t.id });
    const result = t.result as { attemptId?: string; outputs?: unknown } | null;
    if (t.currentAttemptId !== a.id) violations.push(`task ${t.id}: current attempt ${t.currentAttemptId} is not the accepted ${a.id}`);
    if (result?.attemptId !== a.id) violations.push(`task ${t.id}: result names attempt ${result?.attemptId}, the accepted one is ${a.id}`);
    if (stable(result?.outputs ?? []) !== stable(a.outputs ?? []))
      violations.push(`task ${t.id}: result outputs ${stable(result?.outputs)} differ from the attempt's ${stable(a.outputs)}`);
    const outs = (result?.outputs ?? []) as { path: string; sha256: string }[];
    const want = expectedOutput(spec.get(t.id)!.i);
    if (!outs.some((x) => x.path.endsWith('result.txt') && x.sha256 === want))
      violations.push(`task ${t.id}: no result.txt with the task's own bytes in ${stable(outs)}`);
    const snap = accepted.get(t.id);
    if (snap !== undefined && snap !== stable(t.result)) violations.push(`task ${t.id}: accepted result changed since it was first seen`);
  }
  for (const a of attempts) {
    if (a.status === 'LEASED' || a.status === 'RUNNING') {
      stuck++;
      violations.push(`attempt ${a.id}: still ${a.status} at the end`);
    }
    if (a.status === 'STALE' && a._count.staleReports === 0) violations.push(`attempt ${a.id}: STALE without a StaleReport`);
  }
  // Reported late ⇒ STALE: a LOST attempt with a StaleReport is one the late report and the
  // tick raced on (fixed: recordStale locks the attempt; the tick marks reported ones STALE).
  for (const a of attempts.filter((x) => x.status === 'LOST' && x._count.staleReports > 0))
    violations.push(`attempt ${a.id}: LOST although its worker reported on it late`);
  // A LOST attempt of a worker frozen while it was lost, that knew the attempt (its first
  // heartbeat made it RUNNING) and that the API heard from again after it resumed, must have
  // been reported late (its heartbeat names it). Evidence from the database, not from timing.
  for (const a of attempts.filter((x) => x.status === 'LOST' && x.startedAt)) {
    const s = slots.find((x) => x.w.name === a.worker.name);
    const r = s?.resumes.find((x) => a.finishedAt && x.stoppedAt <= a.finishedAt.getTime() && a.finishedAt.getTime() <= x.resumedAt);
    const heardAfter = r && a.worker.lastSeenAt && a.worker.lastSeenAt.getTime() > r.resumedAt + 1000;
    if (s && r && heardAfter)
      violations.push(
        `attempt ${a.id}: lost while ${s.w.name} was stopped, not reported late although the API heard from it after it resumed`,
      );
  }
  const lostAttempts = attempts.filter((a) => a.status === 'LOST' || a.status === 'STALE').length;
  const reportedLate = attempts.filter((a) => a.status === 'STALE').length;
  const staleReports = await prisma.staleReport.count({ where: { attempt: { task: { jobId: { in: jobIds } } } } });

  // Logs of accepted attempts: seq 0..n-1 (the key forbids repeats), each printed line once.
  const chunks = await prisma.logChunk.findMany({
    where: { attemptId: { in: acceptedAttempts.map((x) => x.attemptId) } },
    select: { attemptId: true, seq: true, stream: true, text: true },
    orderBy: [{ attemptId: 'asc' }, { seq: 'asc' }],
  });
  const perAttempt = new Map<string, typeof chunks>();
  for (const c of chunks) perAttempt.set(c.attemptId, [...(perAttempt.get(c.attemptId) ?? []), c]);
  for (const { attemptId, taskId } of acceptedAttempts) {
    const cs = perAttempt.get(attemptId) ?? [];
    if (cs.some((c, k) => c.seq !== k))
      violations.push(`attempt ${attemptId}: log seq ${cs.map((c) => c.seq).join(',')} is not 0..${cs.length - 1}`);
    const printed = cs.filter((c) => c.stream === 'stdout').map((c) => c.text); // one row per line, without its newline
    const { i, lines } = spec.get(taskId)!;
    for (let k = 0; k < lines; k++) {
      const n = printed.filter((x) => x === `chaos task ${i} line ${k}`).length;
      if (n !== 1) violations.push(`attempt ${attemptId}: line ${k} of task ${i} appears ${n} times in its logs`);
    }
  }

  // Costs: exact to the entries' decimals.
  const jobs = await prisma.job.findMany({ where: { id: { in: jobIds } }, select: { id: true, costCad: true, lostCostCad: true } });
  const usage = await prisma.usageEntry.groupBy({ by: ['jobId', 'billable'], where: { jobId: { in: jobIds } }, _sum: { costCad: true } });
  for (const j of jobs) {
    const sum = (billable: boolean) => usage.find((u) => u.jobId === j.id && u.billable === billable)?._sum.costCad?.toString() ?? '0';
    if (!j.costCad.equals(sum(true))) violations.push(`job ${j.id}: costCad ${j.costCad} ≠ billable usage ${sum(true)}`);
    if (!j.lostCostCad.equals(sum(false))) violations.push(`job ${j.id}: lostCostCad ${j.lostCostCad} ≠ non-billable usage ${sum(false)}`);
  }
  return { succeeded, failedRetriesOut, duplicated, stuck, lostAttempts, reportedLate, staleReports };
}
