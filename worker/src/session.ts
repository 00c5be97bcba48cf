/**
 * A worker session: says hello with the probed capabilities, then runs two loops —
 * heartbeats (renew every lease in one call; obey orders: cancel an attempt, pause,
 * resume) and claims (long-poll for as many tasks as there are free slots). While the
 * API is unreachable the claim loop backs off and retries and the heartbeat loop keeps its
 * beat; running tasks keep running, and their leases are renewed as soon as the API answers
 * again (if they have not expired).
 *
 * Heartbeats are fire-and-forget on a fixed beat: each is one request with a time limit of its own
 * (HEARTBEAT_TIMEOUT_SHARE of the lease, under a third) and no retry — the next beat is the retry —
 * and a slow one never delays the next. One request stuck in the network (a proxy, a half-open
 * connection) used to hold the loop for its 60 s limit plus retries while leases are 12–30 s: every
 * lease was lost (api/test/worker-heartbeat-stall.test.ts). Answers may then arrive out of order:
 * an answer older than one already applied gives only its CANCEL orders.
 * A third loop checks the machine's prerequisites (health.ts): while they fail the worker
 * claims nothing and is UNHEALTHY with the reason (setWorkerHealth); it claims again once
 * they pass. A heartbeat whose status disagrees with the check makes it report again.
 */
import { hostname } from 'node:os';
import { ApiClient, ApiError, sleep, type Logger } from './client.js';
import { Completions } from './completions.js';
import { ClaimTaskDoc, DrainOwnWorkerDoc, HeartbeatDoc, SetPausedDoc, SetWorkerHealthDoc, WorkerHelloDoc } from './documents.js';
import { checkPrerequisites, HEALTH_CHECK_MS, type Health } from './health.js';
import { DEFAULT_DRAIN_GRACE_SEC } from './checkpoint.js';
import type { Capabilities } from './probe/types.js';
import { Run, type Assignment, type RunnerDeps, type TraceEvent } from './runner.js';
import { taskUserForSlot, type MemoryLimitPlan } from './sandbox.js';

export const WORKER_VERSION = '0.1.0';

/** A heartbeat request's time limit as a share of the lease: under a third, so two later beats still fit in it. */
export const HEARTBEAT_TIMEOUT_SHARE = 0.3;

export interface SessionOptions {
  server: string;
  token: string;
  name?: string;
  slots: number;
  dataDir: string;
  caps: Capabilities;
  sandbox: 'bwrap' | 'none';
  memoryLimit: (attemptId: string) => MemoryLimitPlan | null;
  log: Logger;
  span?: RunnerDeps['span'];
  trace?: RunnerDeps['trace'];
  refreshCaps?: () => Promise<Capabilities>;
  /** the setup phase's virtualenvs (null with --no-install) */
  envs?: RunnerDeps['envs'];
  /** a drained task's time to checkpoint and exit before it is killed (--drain-grace) */
  drainGraceSec?: number;
  /** the machine's prerequisites (default health.ts checkPrerequisites for this worker's sandbox, Python and data dir) */
  health?: () => Health;
  /** how often they are checked while nothing else asks (default HEALTH_CHECK_MS) */
  healthCheckMs?: number;
  /** the sandbox binary (default 'bwrap' on the launcher's PATH) */
  bwrap?: string;
  /** which tasks get the network (--allow-network) and the data-download cache (downloadCache.ts) */
  networkPolicy?: RunnerDeps['networkPolicy'];
  downloads?: RunnerDeps['downloads'];
}

export class Session {
  readonly client: ApiClient;
  /** Results of finished attempts, sent in batches (completions.ts). */
  private readonly completions: Completions;
  workerId: string | undefined;
  status = 'STARTING';
  /** Counts the owner's own pause/resume/drain requests, before and after each (see heartbeat). */
  private ownerChanges = 0;
  /** The owner's own status requests (pause, resume, drain) still awaiting the API's answer. */
  private ownerChangesInFlight = 0;
  private heartbeatSec = 5;
  private leaseSec = 30;
  /** Heartbeats sent, and the latest whose answer was applied (answers may come out of order). */
  private beatsSent = 0;
  private beatApplied = 0;
  /** Heartbeats failed in a row (logged once a streak, not at every beat). */
  private beatFailures = 0;
  private readonly runs = new Map<string, Run>();
  private readonly stopping = new AbortController();
  private claimAbort = new AbortController();
  private loops: Promise<void>[] = [];
  /** The latest prerequisite check, and the status the API last answered with. */
  private health: Health = { ok: true };
  private serverStatus = '';
  private healthReport: Promise<void> | null = null;
  /** The interpreter the worker started with (see prerequisites). */
  private readonly startPython: string | null;

  constructor(private readonly opts: SessionOptions) {
    this.client = new ApiClient(opts.server.replace(/\/+$/, ''), opts.token, opts.log);
    this.completions = new Completions(this.client);
    this.startPython = opts.caps.python ?? null;
  }

  get name(): string {
    return this.opts.name ?? hostname();
  }

  /** The attempts whose program is running now (its process exists): what `chatgpu-worker status` lists. */
  get running(): string[] {
    return [...this.runs.values()].filter((r) => r.phase === 'running').map((r) => r.attemptId);
  }

  /** What `chatgpu-worker status` says: UNHEALTHY or QUARANTINED win over the owner's states. */
  get shownStatus(): string {
    if (!this.health.ok) return 'UNHEALTHY';
    return this.serverStatus === 'QUARANTINED' ? 'QUARANTINED' : this.status;
  }

  /** Why it is UNHEALTHY (its check's reason); null otherwise. */
  get statusReason(): string | null {
    return this.health.ok ? null : this.health.reason;
  }

  async start(): Promise<void> {
    this.checkHealth();
    await this.hello();
    if (!this.health.ok) this.reportHealth();
    this.loops = [this.heartbeatLoop(), this.claimLoop(), this.refreshLoop(), this.healthLoop()];
  }

  private prerequisites(): Health {
    if (this.opts.health) return this.opts.health();
    const { sandbox, caps, dataDir } = this.opts;
    // A re-probe that finds no Python where there was one (the --python the owner chose, removed)
    // is a machine that lost it, not one without Python: the one it had is still checked.
    const python = caps.python ?? this.startPython;
    return checkPrerequisites({
      sandbox,
      python,
      dataDir,
      accelerators: caps.accelerators,
      ...(this.opts.bwrap ? { bwrap: this.opts.bwrap } : {}),
    });
  }

  /** Checks now; a change is logged, stops or resumes claiming, and is reported to the API. */
  private checkHealth(): Health {
    const was = this.health;
    const now = this.prerequisites();
    this.health = now;
    if (was.ok !== now.ok || (!was.ok && !now.ok && was.reason !== now.reason)) {
      if (!now.ok) {
        this.opts.log.warn(`UNHEALTHY: ${now.reason}; taking no tasks until this is fixed.`);
        this.claimAbort.abort();
      } else this.opts.log.info('healthy again: taking tasks.');
      if (this.workerId) this.reportHealth();
    }
    return now;
  }

  /** Tells the API (setWorkerHealth); one report at a time, the latest check's. */
  private reportHealth(): void {
    if (this.healthReport || this.stopping.signal.aborted) return;
    const h = this.health;
    this.healthReport = this.client
      .request(
        SetWorkerHealthDoc,
        { workerId: this.workerId!, healthy: h.ok, reason: h.ok ? null : h.reason },
        { signal: this.stopping.signal },
      )
      .then((r) => {
        const w = r.setWorkerHealth;
        if (w.__typename === 'Worker') this.serverStatus = w.status;
        else this.opts.log.warn(`health report refused: ${'message' in w ? w.message : 'unexpected answer'}`);
      })
      .catch((err) => this.opts.log.warn(`health report failed: ${(err as Error).message}`))
      .finally(() => {
        this.healthReport = null;
      });
  }

  private async healthLoop(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      await sleep(this.opts.healthCheckMs ?? HEALTH_CHECK_MS, this.stopping.signal);
      if (this.stopping.signal.aborted) break;
      this.checkHealth();
    }
  }

  private async hello(): Promise<void> {
    const r = await this.client.request(
      WorkerHelloDoc,
      { input: { name: this.name, version: WORKER_VERSION, slots: this.opts.slots, capabilities: this.opts.caps } },
      { signal: this.stopping.signal },
    );
    const h = r.workerHello;
    if (h.__typename !== 'WorkerHelloResult')
      throw new Error(`the API refused this worker: ${'message' in h ? h.message : 'unexpected answer'}`);
    this.workerId = h.workerId;
    this.heartbeatSec = h.heartbeatIntervalSec;
    this.leaseSec = h.leaseSec;
    this.status = h.worker.status;
    this.serverStatus = h.worker.status;
    this.opts.log.info(
      `connected to ${this.opts.server} as worker "${this.name}" (${this.status.toLowerCase()}), ${this.opts.slots} slot(s), workloads: ${this.opts.caps.workloads.join(', ')}`,
    );
  }

  /** One heartbeat each heartbeatSec from the last beat's start, whether or not earlier ones have answered. */
  private async heartbeatLoop(): Promise<void> {
    let next = Date.now();
    while (!this.stopping.signal.aborted) {
      next += this.heartbeatSec * 1000;
      await sleep(next - Date.now(), this.stopping.signal);
      if (this.stopping.signal.aborted) break;
      // Woken late (a suspended machine): beat now and keep the beat from here, no burst to catch up.
      next = Math.max(next, Date.now() - this.heartbeatSec * 1000);
      void this.beat();
    }
  }

  /** A heartbeat whose failure is logged, not thrown: the first of a streak, then every 12th, and the recovery. */
  private async beat(): Promise<void> {
    try {
      await this.heartbeat();
      if (this.beatFailures > 0) this.opts.log.info(`heartbeats answered again (after ${this.beatFailures} failed).`);
      this.beatFailures = 0;
    } catch (err) {
      if (this.stopping.signal.aborted) return;
      if (this.beatFailures++ % 12 === 0) this.opts.log.warn(`heartbeat failed: ${(err as Error).message}`);
    }
  }

  /**
   * A run's step, to telemetry; a program that has just started is reported at once (a
   * heartbeat: its attempt is RUNNING with its start time from now on, not from the next
   * heartbeat, up to heartbeatSec later).
   */
  private traced(a: Assignment, e: TraceEvent): void {
    this.opts.trace?.(a, e);
    if (e.event === 'start') void this.beat();
  }

  async heartbeat(): Promise<void> {
    const leases = [...this.runs.values()].map((r) => ({ attemptId: r.attemptId, fencingToken: r.assignment.fencingToken }));
    const ownerSeq = this.ownerChanges;
    const changingAtSend = this.ownerChangesInFlight > 0;
    const seq = ++this.beatsSent;
    const r = await this.client.request(
      HeartbeatDoc,
      { workerId: this.workerId!, leases, telemetry: { running: leases.length } },
      { signal: this.stopping.signal, retry: false, timeoutMs: this.leaseSec * 1000 * HEARTBEAT_TIMEOUT_SHARE },
    );
    const h = r.heartbeat;
    if (h.__typename !== 'HeartbeatResult') throw new Error('message' in h ? h.message : 'unexpected answer');
    // A later heartbeat's answer came first: this one's status is older; its cancels still hold.
    const outdated = seq < this.beatApplied;
    if (outdated) {
      for (const o of h.orders) if (o.kind === 'CANCEL' && o.attemptId) this.cancelOrder(o.attemptId, o.reason);
      return;
    }
    this.beatApplied = seq;
    this.serverStatus = h.status;
    // The API's status disagrees with the check (a report lost, a restart, a quarantine ended): say it again.
    if (this.health.ok ? h.status === 'UNHEALTHY' : h.status === 'ONLINE' || h.status === 'OFFLINE') this.reportHealth();
    // The owner paused, resumed or drained this worker from the machine while the heartbeat
    // was in flight — or such a request was itself still in flight when it was sent or answered,
    // so the API may have read the status before committing it: its status orders would undo
    // it (fix: a drain was undone by a RESUME from a heartbeat sent just before it, and from
    // one sent while the drain's request was on its way). The next heartbeat says.
    const statusOrdersStale = this.ownerChanges !== ownerSeq || changingAtSend || this.ownerChangesInFlight > 0;
    for (const o of h.orders) {
      if (statusOrdersStale && o.kind !== 'CANCEL') continue;
      if (o.kind === 'CANCEL' && o.attemptId) this.cancelOrder(o.attemptId, o.reason);
      else if (o.kind === 'PAUSE' && this.status !== 'PAUSED') {
        this.status = 'PAUSED';
        this.opts.log.info('paused by its owner: finishing current work, taking no new tasks.');
        this.claimAbort.abort();
      } else if (o.kind === 'DRAIN' && this.status !== 'DRAINING') {
        this.startDrain();
      } else if (o.kind === 'RESUME' && (this.status === 'PAUSED' || this.status === 'DRAINING')) {
        this.status = 'ONLINE';
        this.opts.log.info('resumed: taking new tasks again.');
      }
    }
  }

  private cancelOrder(attemptId: string, reason: string | null | undefined): void {
    this.runs.get(attemptId)?.stop(reason?.includes('cancel') ? 'cancel' : 'lease-lost', reason ?? 'cancelled');
  }

  /** Slot index per running attempt; the lowest free one goes to the next attempt. */
  private readonly slots = new Map<string, number>();
  private freeSlot(): number {
    const used = new Set(this.slots.values());
    let i = 0;
    while (used.has(i)) i++;
    return i;
  }

  private async claimLoop(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      const free = this.opts.slots - this.runs.size;
      // A machine that cannot run tasks claims none (it would fail each at once: a black hole).
      const idle = this.status === 'PAUSED' || this.status === 'DRAINING' || (free > 0 && !this.checkHealth().ok);
      if (idle || free <= 0) {
        await sleep(idle ? 1000 : 200, this.stopping.signal);
        continue;
      }
      this.claimAbort = new AbortController();
      const signal = AbortSignal.any([this.stopping.signal, this.claimAbort.signal]);
      try {
        const asked = Date.now();
        const r = await this.client.request(
          ClaimTaskDoc,
          { workerId: this.workerId!, waitMs: 25_000, max: free },
          { signal, timeoutMs: 40_000 },
        );
        const c = r.claimTask;
        // An empty answer before the wait ran out means the API woke us with orders (pause,
        // cancel): fetch them now rather than at the next heartbeat.
        if (c.__typename === 'MutationClaimTaskSuccess' && c.data.length === 0 && Date.now() - asked < 24_000) await this.beat();
        if (c.__typename !== 'MutationClaimTaskSuccess') {
          this.opts.log.warn(`claim refused: ${'message' in c ? c.message : 'unexpected answer'}`);
          await sleep(2000, this.stopping.signal);
          continue;
        }
        for (const a of c.data) {
          // Each concurrent attempt gets a slot of its own, and with it its own task uid.
          const slot = this.freeSlot();
          this.slots.set(a.attemptId, slot);
          const run = new Run(a, {
            client: this.client,
            completions: this.completions,
            dataDir: this.opts.dataDir,
            caps: this.opts.caps,
            sandbox: this.opts.sandbox,
            memoryLimit: this.opts.memoryLimit,
            log: this.opts.log,
            envs: this.opts.envs ?? null,
            ...(this.opts.networkPolicy ? { networkPolicy: this.opts.networkPolicy } : {}),
            downloads: this.opts.downloads ?? null,
            taskUser: taskUserForSlot(slot),
            slots: this.opts.slots,
            health: () => this.checkHealth(),
            ...(this.opts.bwrap ? { bwrap: this.opts.bwrap } : {}),
            ...(this.opts.span ? { span: this.opts.span } : {}),
            trace: (x, e) => this.traced(x, e),
          });
          this.runs.set(a.attemptId, run);
          void run.done.finally(() => {
            this.runs.delete(a.attemptId);
            this.slots.delete(a.attemptId);
          });
        }
      } catch (err) {
        if (signal.aborted) continue;
        if (err instanceof ApiError && err.code === 'UNAUTHENTICATED') {
          this.opts.log.warn('the API no longer accepts this worker token; stopping.');
          void this.stop();
          return;
        }
        this.opts.log.warn(`claim failed: ${(err as Error).message}`);
        await sleep(2000, this.stopping.signal);
      }
    }
  }

  /** Re-probes now and then (GPUs appear, drivers break) and says hello again. */
  private async refreshLoop(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      await sleep(10 * 60_000, this.stopping.signal);
      if (this.stopping.signal.aborted || !this.opts.refreshCaps) break;
      try {
        this.opts.caps = await this.opts.refreshCaps();
        await this.hello();
      } catch (err) {
        this.opts.log.warn(`capability refresh failed: ${(err as Error).message}`);
      }
    }
  }

  async setPaused(paused: boolean): Promise<string> {
    this.ownerChanges++;
    this.ownerChangesInFlight++;
    const r = await this.client.request(SetPausedDoc, { workerId: this.workerId!, paused }).finally(() => {
      this.ownerChanges++;
      this.ownerChangesInFlight--;
    });
    const w = r.setWorkerPaused;
    if (w.__typename !== 'Worker') throw new Error('message' in w ? w.message : 'unexpected answer');
    this.status = w.status;
    if (paused) this.claimAbort.abort();
    return w.status;
  }

  /**
   * Drain: no new work, and every running task is asked to checkpoint and is handed back
   * (Run.drain); what still runs after the grace period is killed. Resolves once the runs
   * are gone, with how long each took to free the machine.
   */
  async drain(): Promise<{
    status: string;
    graceSec: number;
    attempts: { attemptId: string; freeAfterSec: number | null; killed: boolean }[];
  }> {
    // The runs first: the API's answer also orders the drain (heartbeat), and would race this.
    this.ownerChanges++;
    this.ownerChangesInFlight++;
    const runs = this.startDrain();
    const r = await this.client.request(DrainOwnWorkerDoc, { workerId: this.workerId! }).finally(() => {
      this.ownerChanges++;
      this.ownerChangesInFlight--;
    });
    const w = r.drainOwnWorker;
    await Promise.allSettled(runs.map((x) => x.done));
    if (w.__typename !== 'Worker') throw new Error('message' in w ? w.message : 'unexpected answer');
    return {
      status: this.status,
      graceSec: this.drainGraceSec,
      attempts: runs.map((x) => ({
        attemptId: x.attemptId,
        freeAfterSec: x.drained?.freeAfterMs != null ? x.drained.freeAfterMs / 1000 : null,
        killed: x.drained?.killed ?? false,
      })),
    };
  }

  private get drainGraceSec(): number {
    return this.opts.drainGraceSec ?? DEFAULT_DRAIN_GRACE_SEC;
  }

  private startDrain(): Run[] {
    if (this.status !== 'DRAINING')
      this.opts.log.info(
        `draining: taking no new tasks; running tasks checkpoint and are handed back (killed after ${this.drainGraceSec}s).`,
      );
    this.status = 'DRAINING';
    this.claimAbort.abort();
    const runs = [...this.runs.values()];
    for (const run of runs) run.drain(this.drainGraceSec * 1000);
    return runs;
  }

  /** Stops claiming, stops running tasks (they will be retried elsewhere), exits the loops. */
  async stop(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    this.stopping.abort();
    this.claimAbort.abort();
    for (const r of this.runs.values()) r.stop('shutdown');
    await Promise.allSettled([...this.runs.values()].map((r) => r.done));
    await Promise.allSettled(this.loops);
  }
}
