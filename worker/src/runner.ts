/**
 * Runs one attempt: prepares its directory with the code version's files (blobs cached
 * by sha256 across tasks), runs the command (sandboxed when possible) with an environment
 * built from scratch, streams its output, enforces the time limit, uploads declared outputs
 * and completes the attempt. Cancel and lease loss kill the whole process group.
 *
 * Outputs are the task's own files only: collected with lstat, never through a symbolic link,
 * each opened with O_NOFOLLOW and checked to lie inside the attempt directory, within a size
 * limit per file and in total; whatever is skipped is logged with the reason.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants as fsc, createReadStream } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, open, readdir, realpath, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { minimatch } from 'minimatch';
import { chownTree } from './chownTree.js';
import { ApiError, sleep, type ApiClient } from './client.js';
import type { CompletionAnswer, Completions } from './completions.js';
import type { CompleteAttemptInput } from './gql/graphql.js';
import { CHECKPOINT_POLL_MS, CheckpointWatcher, checkpointPath, programProcesses, type SavedCheckpoint } from './checkpoint.js';
import { AppendLogsDoc, CompleteAttemptDoc, ReleaseDrainedAttemptDoc, ReportMetricsDoc, SaveCheckpointDoc } from './documents.js';
import type { ClaimTaskMutation } from './gql/graphql.js';
import { launcherFailure, type Health } from './health.js';
import { trackRun, untrackRun } from './leftovers.js';
import { LogStream } from './logStream.js';
import { figuresEnvironment, requestedOutputs } from './requestedOutputs.js';
import { StdoutFile } from './stdoutFile.js';
import { threadEnv } from './threadEnv.js';
import { prepareService, type ServiceRuntime } from './service.js';
import type { Capabilities } from './probe/types.js';
import type { EnvCache, PreparedEnv } from './setupEnv.js';
import { watchPeakMemory } from './peakMemory.js';
import { RecentOutputs } from './recentOutputs.js';
import { DEFAULT_NETWORK_POLICY, downloadKey, downloadOf, networkFor, type DownloadCache, type NetworkPolicy } from './downloadCache.js';
import { simulatedTaskEnv } from './probe/simulateAccelerator.js';
import {
  buildSandboxedCommand,
  DEFAULT_PIDS_LIMIT,
  defaultTaskUser,
  deviceGroups,
  gpuDeviceNodes,
  interpreterBinds,
  noSandboxNotice,
  sandboxPaths,
  spawnSandboxed,
  writeIdentityFiles,
  type MemoryLimitPlan,
} from './sandbox.js';

export type Assignment = Extract<ClaimTaskMutation['claimTask'], { __typename: 'MutationClaimTaskSuccess' }>['data'][number];

const PYTHON_HELPERS = fileURLToPath(new URL('../python', import.meta.url));
const MAX_OUTPUT_FILES = 500;
/** The API refuses blobs over 2 GiB (BLOB_MAX_BYTES); a bigger file could not be uploaded anyway. */
export const DEFAULT_OUTPUT_LIMITS = { maxFileBytes: 2 * 1024 ** 3, maxTotalBytes: 8 * 1024 ** 3 } as const;

export interface RunnerDeps {
  client: ApiClient;
  dataDir: string;
  caps: Capabilities;
  sandbox: 'bwrap' | 'none';
  memoryLimit: (attemptId: string) => MemoryLimitPlan | null;
  log: { info(m: string): void; warn(m: string): void };
  /** Wraps the execution in a telemetry span (Sentry when configured). */
  span?: <T>(a: Assignment, fn: () => Promise<T>) => Promise<T>;
  /** A structured log of one step of the attempt (Sentry when configured). */
  trace?: (a: Assignment, e: TraceEvent) => void;
  /** the worker's Python helpers (worker/python by default) */
  helpersDir?: string;
  /** the unprivileged user tasks run as; default TASK_USER when the worker is root, else its own uid */
  taskUser?: { uid: number; gid: number } | null;
  /** RLIMIT_NPROC for tasks run as `taskUser` (default DEFAULT_PIDS_LIMIT) */
  pidsLimit?: number | null;
  outputLimits?: { maxFileBytes?: number; maxTotalBytes?: number };
  /** the setup phase's virtualenvs; null: this worker installs nothing (--no-install) */
  envs?: EnvCache | null;
  /** batches this worker's completions (completions.ts); absent: one completeAttempt call each */
  completions?: Completions;
  /** how often the checkpoint folder is looked at while the program runs (checkpoint.ts) */
  checkpointPollMs?: number;
  /** unsent log bytes kept on disk before the program's output is paused (logStream.ts; default SPOOL_LIMIT) */
  logSpoolLimit?: number;
  /** the worker's prerequisites now (health.ts): checked before the run, and after a launch that failed */
  health?: () => Health;
  /** the sandbox binary (default 'bwrap' on the launcher's PATH) */
  bwrap?: string;
  /** how many tasks this worker runs at once: each gets its share of the cores' threads (threadEnv.ts); default 1 */
  slots?: number;
  /** which tasks get the network (--allow-network; downloadCache.ts); default 'downloads' */
  networkPolicy?: NetworkPolicy;
  /** data-download steps' outputs kept by URL and command (downloadCache.ts); absent: nothing cached */
  downloads?: DownloadCache | null;
}

/** A drain of this run: when it began, its grace period, and when the program's processes were gone. */
interface DrainState {
  startedAt: number;
  graceMs: number;
  killed: boolean;
  freeAfterMs: number | null;
}

export type StopReason = 'cancel' | 'lease-lost' | 'shutdown';

/** The steps of an attempt that telemetry records (telemetry.ts), each with the four ids. */
export interface TraceEvent {
  event: 'download' | 'setup' | 'start' | 'timeout' | 'exit' | 'upload' | 'complete' | 'stale' | 'cancel' | 'error';
  message: string;
  level?: 'info' | 'warn' | 'error';
  errorClass?: string | null;
}

export class Run {
  private child: ChildProcess | undefined;
  private stopReason: StopReason | undefined;
  readonly done: Promise<void>;
  private readonly abort = new AbortController();
  private readonly recent: RecentOutputs;
  private drainState: DrainState | undefined;
  private drainTimer: NodeJS.Timeout | undefined;
  private runDir = '';

  constructor(
    readonly assignment: Assignment,
    private readonly deps: RunnerDeps,
  ) {
    this.recent = new RecentOutputs(deps.dataDir);
    this.done = (deps.span ? deps.span(assignment, () => this.execute()) : this.execute()).catch((err) => {
      deps.log.warn(`attempt ${assignment.attemptId}: ${(err as Error).message}`);
    });
  }

  get attemptId(): string {
    return this.assignment.attemptId;
  }

  private trace(e: TraceEvent): void {
    try {
      this.deps.trace?.(this.assignment, e);
    } catch {
      /* telemetry never stops a run */
    }
  }

  /**
   * Drain (checkpoint.ts has the convention): the drain file, then SIGTERM to the program's
   * processes (not its sandbox or shell, which would take it down with them), then SIGKILL
   * of the whole group after `graceMs`. The run then uploads the checkpoint and hands the
   * attempt back as DRAINED.
   */
  drain(graceMs: number): void {
    if (this.drainState || this.stopReason) return;
    this.drainState = { startedAt: Date.now(), graceMs, killed: false, freeAfterMs: null };
    this.deps.log.info(`attempt ${this.attemptId}: draining (checkpoint, then hand it back; killed after ${graceMs / 1000}s)`);
    const child = this.child;
    if (!child?.pid || child.exitCode !== null) return; // not started yet: it never will be
    const pid = child.pid;
    if (this.runDir) void writeFile(path.join(this.runDir, '.chatgpu', 'drain'), `${new Date().toISOString()}\n`).catch(() => {});
    // Not the sandbox or the shell around the program: either would end the run at once.
    for (const t of programProcesses(pid)) {
      try {
        process.kill(t, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
    this.drainTimer = setTimeout(() => {
      this.drainState!.killed = true;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, graceMs);
    this.drainTimer.unref();
  }

  /** The drain state, read afresh (TypeScript would otherwise keep an earlier narrowing across awaits). */
  private drainNow(): DrainState | undefined {
    return this.drainState;
  }

  /** After a drain: how long the program took to be gone and whether it had to be killed. */
  get drained(): { freeAfterMs: number | null; killed: boolean } | null {
    return this.drainState ? { freeAfterMs: this.drainState.freeAfterMs, killed: this.drainState.killed } : null;
  }

  /** Where the attempt is: its program not started yet, running (its process exists), or ended (its results being sent). */
  get phase(): 'preparing' | 'running' | 'finishing' {
    const c = this.child;
    if (!c?.pid) return 'preparing';
    if (c.exitCode !== null || c.signalCode !== null) return 'finishing';
    try {
      process.kill(c.pid, 0);
      return 'running';
    } catch {
      return 'finishing';
    }
  }

  /** Kills the run's whole process group. */
  stop(reason: StopReason, why?: string): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    if (reason !== 'shutdown') this.deps.log.warn(`stopping attempt ${this.attemptId}: ${why ?? reason}`);
    if (reason !== 'shutdown')
      this.trace({ event: reason === 'cancel' ? 'cancel' : 'stale', message: `stopping the attempt: ${why ?? reason}`, level: 'warn' });
    this.abort.abort();
    const pid = this.child?.pid;
    if (pid && this.child?.exitCode === null) {
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
      setTimeout(() => {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, 3000).unref();
    }
  }

  private async execute(): Promise<void> {
    const { client, log } = this.deps;
    const a = this.assignment;
    const dir = path.join(this.deps.dataDir, 'attempts', a.attemptId);
    const outDir = path.join(dir, 'outputs');
    const spoolDir = path.join(this.deps.dataDir, 'spool');
    const snapshotDir = path.join(spoolDir, `${a.attemptId}.checkpoint`);
    const stream = new LogStream(
      {
        sendLogs: async (lines) => {
          const r = await client.request(
            AppendLogsDoc,
            { attemptId: a.attemptId, fencingToken: a.fencingToken, lines },
            { signal: this.abort.signal },
          );
          if (r.appendLogs.__typename === 'StaleAttemptError')
            this.stop('lease-lost', `the API refused its logs as stale (${r.appendLogs.reason})`);
          else if (r.appendLogs.__typename !== 'AppendResult')
            throw new Error(`logs refused: ${'message' in r.appendLogs ? r.appendLogs.message : ''}`);
        },
        sendMetrics: async (points) => {
          const r = await client.request(
            ReportMetricsDoc,
            { attemptId: a.attemptId, fencingToken: a.fencingToken, points },
            { signal: this.abort.signal },
          );
          if (r.reportMetrics.__typename === 'StaleAttemptError')
            this.stop('lease-lost', `the API refused its metrics as stale (${r.reportMetrics.reason})`);
        },
      },
      { spoolPath: path.join(spoolDir, `${a.attemptId}.log`), spoolLimit: this.deps.logSpoolLimit },
    );
    const started = Date.now();
    let exitCode: number | null = null;
    let errorClass: string | null = null;
    let errorMessage: string | null = null;
    let outputs: { path: string; sha256: string; mode: number }[] = [];
    let pyEnv: PreparedEnv | null = null;
    let runSeconds: number | null = null;
    let runStartedAt: number | null = null; // ms since the epoch, the worker's clock (as the task's metric timestamps)
    let peakMemoryMiB: number | null = null;
    let watcher: CheckpointWatcher | null = null;
    let stdoutFile: StdoutFile | null = null;
    // Without a sandbox the attempt's first log line says so, before anything else happens.
    if (this.deps.sandbox === 'none') stream.system(`worker: ${noSandboxNotice(this.deps.caps)}`);
    try {
      // A worker whose machine broke under it never starts the task: an infrastructure error.
      const pre = this.deps.health?.();
      if (pre && !pre.ok) {
        errorClass = pre.errorClass;
        throw new Error(`this worker cannot run tasks now: ${pre.reason}`);
      }
      await rm(dir, { recursive: true, force: true });
      await mkdir(outDir, { recursive: true });
      await mkdir(spoolDir, { recursive: true, mode: 0o700 });
      this.runDir = dir;
      const req = (a.task.requirements ?? {}) as {
        network?: boolean;
        download?: unknown;
        timeoutSec?: number;
        outputs?: string[];
        workload?: string;
        setup?: { pip?: unknown };
        service?: ServiceRuntime;
        checkpoint?: { path?: unknown };
      };
      // The owner's network policy first: a refused data download stops here, naming its URLs and the policy.
      const policy = this.deps.networkPolicy ?? DEFAULT_NETWORK_POLICY;
      const net = networkFor(req, policy);
      if (net.refused !== undefined) {
        errorClass = 'NETWORK_REFUSED';
        throw new Error(net.refused);
      }
      const download = downloadOf(req);
      const cpRel = checkpointPath(req);
      await mkdir(path.join(dir, cpRel), { recursive: true });
      try {
        // The task's latest checkpoint (an earlier attempt's) is restored at its paths first.
        const reused = await this.materialize(dir, [...a.task.files, ...a.task.inputs, ...(a.task.checkpoint?.files ?? [])]);
        if (reused.length)
          stream.system(
            `worker: ${reused.slice(0, 5).join(', ')}${reused.length > 5 ? ` and ${reused.length - 5} more` : ''}: this worker's own output of a recent attempt, copied here, not downloaded again`,
          );
      } catch (err) {
        errorClass = 'DOWNLOAD_FAILED';
        throw err;
      }
      this.trace({
        event: 'download',
        message: `downloaded ${a.task.files.length + a.task.inputs.length} file(s)${a.task.checkpoint ? ' and a checkpoint' : ''}`,
      });
      // A data download this worker already made (same URLs, command and script): its outputs restored, nothing run.
      const downloadCache = download ? (this.deps.downloads ?? null) : null;
      const cacheKey = download && downloadCache ? downloadKey(download, a.task.command, a.task.files) : null;
      const cached = cacheKey ? await downloadCache!.restore(cacheKey, dir).catch(() => null) : null;
      if (cached)
        stream.system(
          `worker: data download found in this worker's cache (key ${cacheKey!.slice(0, 12)}, kept by attempt ${cached.attemptId} at ${cached.savedAt}): restored ${cached.paths.join(', ')} instead of running \`${a.task.command}\`; nothing downloaded from ${download!.urls.join(', ') || 'its URLs'}.`,
        );
      else if (download)
        stream.system(
          `worker: data download: this step gets the network (--allow-network ${policy}) to fetch ${download.urls.join(', ') || 'the URLs its code builds'}; its outputs are cached on this worker.`,
        );
      const command = cached ? 'true' : a.task.command;
      const resume = a.task.checkpoint ?? null;
      if (resume)
        stream.system(
          `worker: restored the checkpoint of attempt ${resume.attemptNumber}${resume.step !== null && resume.step !== undefined ? ` (step ${resume.step})` : ''} into ${cpRel}/; the program resumes from it (CHATGPU_RESUME=1).`,
        );
      const sandbox = this.deps.sandbox;
      const helpersDir = this.deps.helpersDir ?? PYTHON_HELPERS;
      const taskUser = sandbox === 'bwrap' ? (this.deps.taskUser === undefined ? defaultTaskUser() : this.deps.taskUser) : null;
      const identityFiles = sandbox === 'bwrap' ? await this.identityFiles(taskUser) : null;
      const pipLines = Array.isArray(req.setup?.pip) ? req.setup.pip.filter((l): l is string => typeof l === 'string') : [];
      if (pipLines.length && !cached) {
        try {
          pyEnv = await this.setupPhase(pipLines, stream, taskUser, identityFiles);
          this.trace({ event: 'setup', message: `environment ready (${pipLines.length} requirement line(s))` });
        } catch (err) {
          errorClass = 'DEPENDENCY';
          throw err;
        }
      }
      // A venv's python is found through PATH (its bin first), never through a link: a link to
      // bin/python would start the base interpreter without the venv's packages.
      const interpreter = interpreterBinds(pyEnv?.python ?? this.deps.caps.python, [this.deps.dataDir, homedir()]);
      const env = await this.environment(dir, helpersDir, req.workload, interpreter.binds, pyEnv);
      const inside = sandboxPaths(sandbox, dir, helpersDir).workDir;
      // Outputs the plan asked the worker to make: figures shown, the program's stdout (requestedOutputs.ts).
      const requested = requestedOutputs(a.task.environment);
      for (const p of requested.problems) stream.system(`worker: ${p}`);
      figuresEnvironment(env, requested.figures, inside, sandboxPaths(sandbox, dir, helpersDir).helpersDir);
      Object.assign(env, {
        CHATGPU_CHECKPOINT_DIR: `${inside}/${cpRel}`,
        CHATGPU_DRAIN_FILE: `${inside}/.chatgpu/drain`,
        ...(resume
          ? {
              CHATGPU_RESUME: '1',
              ...(resume.step !== null && resume.step !== undefined ? { CHATGPU_RESUME_STEP: String(resume.step) } : {}),
            }
          : {}),
      });
      // A hosted service: its port, the bridge into its sandbox, its readiness checks and tunnel (service.ts).
      const service =
        a.task.kind === 'SERVICE' && req.service
          ? await prepareService({
              dir,
              insideDir: sandboxPaths(sandbox, dir, helpersDir).workDir,
              env,
              runtime: req.service,
              server: client.server,
              token: client.token,
              attemptId: a.attemptId,
              fencingToken: a.fencingToken,
              note: (l) => stream.system(l),
            })
          : null;
      // The task's uid must own its directory (it runs as an unprivileged user when the worker is root).
      if (sandbox === 'bwrap' && taskUser) await chownTree(dir, taskUser.uid, taskUser.gid);
      const memory = this.deps.memoryLimit(a.attemptId);
      const devices = req.workload && /cuda|rocm|cxx/.test(req.workload) ? gpuDeviceNodes() : [];
      const cmd = buildSandboxedCommand({
        sandbox,
        command: service ? service.command(a.task.command) : ['sh', '-c', command],
        workDir: dir,
        env,
        helpersDir,
        readOnly: interpreter.binds,
        allowNetwork: net.network && !cached,
        devices,
        memory,
        pidsLimit: this.deps.pidsLimit === undefined ? DEFAULT_PIDS_LIMIT : this.deps.pidsLimit,
        runAs: taskUser && { ...taskUser, groups: deviceGroups(devices) },
        identityFiles,
        ...(this.deps.bwrap ? { bwrap: this.deps.bwrap } : {}),
      });
      const ap = cmd.applied;
      stream.system(
        `worker: running \`${command}\`${cached ? ` in place of \`${a.task.command}\` (its outputs came from the download cache)` : ''} (attempt ${a.number}; sandbox ${ap.sandbox}, network ${ap.network}, ${ap.memory}, processes ${ap.pids}, user ${ap.user}, ${ap.syscalls})`,
      );
      this.trace({ event: 'start', message: `running ${a.task.command}`.slice(0, 500) });
      const sim = this.deps.caps.simulatedAccelerator;
      if (sim)
        stream.system(
          `worker: SIMULATED ACCELERATOR ${sim.spec} — scheduled as ${sim.vendor === 'nvidia' ? 'NVIDIA' : 'AMD'} ${sim.name} (${sim.runtime}); the numerics of this run execute on the CPU (CHATGPU_DEVICE=cpu)`,
        );
      if (sandbox === 'bwrap' && interpreter.refused.length) {
        stream.system(
          `worker: not binding interpreter prefix ${interpreter.refused.join(', ')} into the sandbox (it would expose the owner's files); choose another interpreter with --python`,
        );
      }
      log.info(`attempt ${a.attemptId}: ${a.task.name} — ${a.task.command}`);
      const cpLimits = { ...DEFAULT_OUTPUT_LIMITS, ...this.deps.outputLimits };
      const cpNote = (m: string) => stream.system(`worker: checkpoint ${m}`);
      watcher = new CheckpointWatcher({
        dir,
        rel: cpRel,
        collect: (root) =>
          collectOutputs({
            dir: root,
            declared: [cpRel],
            walkOutputs: false,
            limits: cpLimits,
            note: cpNote,
            upload: (file) => client.upload(file, this.abort.signal, a.attemptId),
          }),
        snapshot: () => snapshotCheckpoint(dir, cpRel, snapshotDir, cpLimits, cpNote),
        save: (cp) => this.saveCheckpoint(cp),
        note: (l) => stream.system(l),
      });
      await watcher.start(this.deps.checkpointPollMs ?? CHECKPOINT_POLL_MS);
      if (this.drainState) throw new Error('drained before its program started');
      const child = spawnSandboxed(cmd, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      this.child = child;
      trackRun(this.deps.dataDir, a.attemptId, child);
      service?.host.start(child);
      const runStarted = Date.now();
      runStartedAt = runStarted;
      const memoryWatch = child.pid ? watchPeakMemory(child.pid) : null;
      // A service's lines about its readiness checks are left out (service.ts).
      stream.attach(service ? service.host.quiet(child.stdout!) : child.stdout!, 'stdout');
      stream.attach(service ? service.host.quiet(child.stderr!) : child.stderr!, 'stderr');
      if (requested.stdoutFile) {
        const file = new StdoutFile(path.join(spoolDir, `${a.attemptId}.stdout`), cpLimits.maxFileBytes);
        stdoutFile = file;
        child.stdout!.on('data', (d: Buffer) => file.write(d));
      }
      // The end of stderr tells a task that ran out of memory from one that failed otherwise.
      let stderrTail = '';
      let stderrHead = ''; // a launcher's own complaint comes first (health.ts launcherFailure)
      child.stderr!.on('data', (d: Buffer) => {
        if (stderrHead.length < 512) stderrHead = (stderrHead + d.toString('utf8')).slice(0, 512);
        stderrTail = (stderrTail + d.toString('utf8')).slice(-8192);
      });
      const timeoutSec = req.timeoutSec ?? 24 * 3600;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        stream.system(`worker: time limit of ${timeoutSec}s reached; stopping the run.`);
        this.trace({ event: 'timeout', message: `time limit of ${timeoutSec}s reached`, level: 'warn' });
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, timeoutSec * 1000);
      const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (c, s) => resolve({ code: c, signal: s }));
      });
      clearTimeout(timer);
      clearTimeout(this.drainTimer);
      const drain = this.drainNow();
      if (drain) drain.freeAfterMs = Date.now() - drain.startedAt;
      await watcher.stop();
      await service?.host.stop();
      runSeconds = (Date.now() - runStarted) / 1000;
      peakMemoryMiB = memoryWatch?.stop() ?? null;
      const oomKilled = memory?.oomKilled?.() ?? false;
      memory?.cleanup();
      exitCode = code ?? (signal ? 128 : null);
      if (this.stopReason) {
        stream.system(`worker: run stopped (${this.stopReason}).`);
        await stream.close().catch(() => {});
        return; // a cancelled or stale attempt reports nothing more
      }
      if (drain) {
        const d = drain;
        stream.system(
          `worker: drained: the program ${d.killed ? `was killed after the grace period of ${d.graceMs / 1000}s` : `exited with ${signal ? `signal ${signal}` : `code ${code}`}`} ${((d.freeAfterMs ?? 0) / 1000).toFixed(1)}s after the drain began.`,
        );
        await watcher.flush();
        return await this.release(stream, watcher.latest, {
          wallSeconds: (Date.now() - started) / 1000,
          runSeconds,
          runStartedAt,
          peakMemoryMiB,
          logLines: stream.totalLines,
        });
      }
      // A service's time limit is its duration: reaching it, having been ready, is success; any
      // other end is its failure, with the app's last lines (a cause named below stays).
      const serviceFailure = service?.host.failure({ code, signal, timedOut }) ?? null;
      if (service && !serviceFailure) {
        exitCode = 0;
        stream.system('worker: the service ran for its whole duration.');
      } else if (serviceFailure && (timedOut || service!.host.startTimedOut || code === 0)) ({ errorClass, errorMessage } = serviceFailure);
      else if (timedOut) errorClass = 'TIMEOUT';
      else if (code !== 0) {
        // A launcher (sandbox, interpreter) that vanished under the run is the worker's failure.
        const broken = launcherFailure({ code, stderrHead }, this.deps.health?.() ?? { ok: true });
        const failure = broken.ok
          ? classifyFailure({ code, signal, memory, oomKilled, stderrTail })
          : { errorClass: broken.errorClass, errorMessage: `the worker could not start the program (exit code ${code}): ${broken.reason}` };
        ({ errorClass, errorMessage } = serviceFailure && failure.errorClass === 'EXIT_NONZERO' ? serviceFailure : failure);
      }
      // A data download that failed (the host unreachable, refused, a bad URL) says which URLs and under which policy.
      // Its own class: EXIT_NONZERO's reason is only the exit code, and this one must name the URLs and the policy.
      if (download && errorClass === 'EXIT_NONZERO') errorClass = 'DATA_DOWNLOAD_FAILED';
      if (download && errorClass && errorClass !== 'TIMEOUT')
        errorMessage = `the data download from ${download.urls.join(', ') || 'the URLs its code builds'} failed (this worker's network policy: --allow-network ${policy}, which gave this step the network); the run does not start without its data${errorMessage ? `: ${errorMessage}` : ''}`;
      if (download && !errorClass && !cached && downloadCache && cacheKey) {
        const paths = (req.outputs ?? []).filter((o) => !/[*?[\]{}]/.test(o));
        const kept = await downloadCache
          .save(cacheKey, dir, paths, { urls: download.urls, attemptId: a.attemptId })
          .catch((err: Error) => ({ skipped: err.message }));
        stream.system(
          'kept' in kept
            ? `worker: kept ${paths.join(', ')} (${kept.kept.bytes} bytes) in this worker's download cache (key ${cacheKey.slice(0, 12)}): the same download is not made again here.`
            : `worker: not cached: ${kept.skipped}`,
        );
      }
      stream.system(
        `worker: the command exited with ${signal ? `signal ${signal}` : `code ${code}`} after ${((Date.now() - started) / 1000).toFixed(1)}s${errorClass === 'OOM' ? ` (${errorMessage})` : ''}.`,
      );
      this.trace({
        event: 'exit',
        message: `exited with ${signal ? `signal ${signal}` : `code ${code}`}${errorMessage ? ` (${errorMessage})` : ''}`.slice(0, 1000),
        level: errorClass ? 'warn' : 'info',
        errorClass,
      });
      const kept = stdoutFile?.close();
      if (kept?.cut)
        stream.system(
          `worker: ${requested.stdoutFile} holds the first ${kept.bytes} bytes of the program's output (the per-file output limit).`,
        );
      if (kept?.error) stream.system(`worker: ${requested.stdoutFile} stopped after ${kept.bytes} bytes: ${kept.error}`);
      try {
        const declared = [...(req.outputs ?? []), ...(requested.figures ? [requested.figures] : [])];
        const extra = stdoutFile && requested.stdoutFile ? [{ path: requested.stdoutFile, file: stdoutFile.path }] : [];
        outputs = await this.uploadOutputs(dir, declared, (m) => stream.system(`worker: ${m}`), extra);
        if (outputs.length) stream.system(`worker: uploaded ${outputs.length} output file(s).`);
        this.trace({ event: 'upload', message: `uploaded ${outputs.length} output file(s)` });
      } catch (err) {
        if (!errorClass) errorClass = 'UPLOAD_FAILED';
        errorMessage = (err as Error).message;
      }
    } catch (err) {
      if (this.stopReason) return;
      // Drained before the program ran (downloading, setting up): handed back as it is.
      if (this.drainState) return await this.release(stream, null, { wallSeconds: (Date.now() - started) / 1000 });
      errorClass ??= 'WORKER_ERROR';
      errorMessage = (err as Error).message;
      stream.system(`worker: ${errorClass}: ${errorMessage}`);
      this.trace({ event: 'error', message: `${errorClass}: ${errorMessage}`, level: 'error', errorClass });
    } finally {
      untrackRun(this.deps.dataDir, a.attemptId, this.child?.pid);
      // A spawn that failed leaves it polling otherwise; the checkpoint copy goes with it.
      void watcher
        ?.stop()
        .then(() => rm(snapshotDir, { recursive: true, force: true }))
        .catch(() => {});
      if (stdoutFile) {
        stdoutFile.close();
        await rm(stdoutFile.path, { force: true }).catch(() => {});
      }
      pyEnv?.release();
    }
    await stream.close();
    if (stream.error && !this.stopReason) log.warn(`attempt ${a.attemptId}: some log lines could not be sent: ${stream.error.message}`);
    if (this.stopReason) return;
    const result = {
      exitCode,
      errorClass,
      errorMessage,
      outputs,
      metrics: stream.lastMetrics,
      // runSeconds: the command alone (no download, setup or upload): what a smoke run measures.
      usage: { wallSeconds: (Date.now() - started) / 1000, runSeconds, runStartedAt, peakMemoryMiB, logLines: stream.totalLines },
    };
    // Transport failures are retried inside request(); an internal server error is retried
    // here too (completion is fenced, so a repeat after success is refused, not applied twice).
    let answer: CompletionAnswer | undefined;
    for (let i = 0; ; i++) {
      try {
        answer = await this.sendCompletion(a, result);
        break;
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 'INTERNAL_SERVER_ERROR') || i >= 4) throw err;
        await sleep(500 * 2 ** i);
      }
    }
    this.trace(
      answer.accepted
        ? { event: 'complete', message: `completed: ${(answer.status ?? '').toLowerCase()}`, errorClass }
        : {
            event: 'stale',
            message: `completion refused (${answer.error?.code ?? 'unknown'}): ${answer.error?.message ?? ''}`,
            level: 'warn',
            errorClass,
          },
    );
    if (answer.accepted) log.info(`attempt ${a.attemptId}: ${(answer.status ?? '').toLowerCase()}`);
    else log.warn(`attempt ${a.attemptId}: completion refused (${answer.error?.code ?? 'unknown'}): ${answer.error?.message ?? ''}`);
    // Keep the directory of a failed run for its owner to inspect; clean successful ones.
    if (answer.accepted && answer.status === 'SUCCEEDED') await rm(dir, { recursive: true, force: true });
  }

  /** Through the session's batching Completions (completions.ts), else one completeAttempt call. */
  private async sendCompletion(a: Assignment, result: CompleteAttemptInput): Promise<CompletionAnswer> {
    if (this.deps.completions) return this.deps.completions.complete(a.attemptId, a.fencingToken, result);
    const res = (await this.deps.client.request(CompleteAttemptDoc, { attemptId: a.attemptId, fencingToken: a.fencingToken, result }))
      .completeAttempt;
    if (res.__typename === 'Attempt') return { accepted: true, status: res.status, error: null };
    return { accepted: false, status: null, error: { code: res.__typename, message: 'message' in res ? res.message : '' } };
  }

  private async saveCheckpoint(cp: SavedCheckpoint): Promise<void> {
    const a = this.assignment;
    const r = await this.deps.client.request(
      SaveCheckpointDoc,
      { attemptId: a.attemptId, fencingToken: a.fencingToken, checkpoint: cp },
      { signal: this.abort.signal },
    );
    const res = r.saveCheckpoint;
    if (res.__typename === 'StaleAttemptError') {
      this.stop('lease-lost', `the API refused its checkpoint as stale (${res.reason})`);
      throw new Error(`stale: ${res.reason}`);
    }
    if (res.__typename !== 'TaskCheckpoint') throw new Error('message' in res ? res.message : 'refused');
  }

  /** Hands the drained attempt back with its last checkpoint (releaseDrainedAttempt). */
  private async release(stream: LogStream, cp: SavedCheckpoint | null, usage: Record<string, unknown>): Promise<void> {
    const a = this.assignment;
    stream.system(
      cp
        ? `worker: handing the attempt back with its checkpoint${cp.step !== null ? ` (step ${cp.step})` : ''}; the task resumes on another worker.`
        : 'worker: handing the attempt back without a checkpoint; the task starts over on another worker.',
    );
    await stream.close().catch(() => {});
    const r = await this.deps.client.request(ReleaseDrainedAttemptDoc, {
      attemptId: a.attemptId,
      fencingToken: a.fencingToken,
      checkpoint: cp,
      usage,
      reason: 'its owner drained the worker',
    });
    const res = r.releaseDrainedAttempt;
    if (res.__typename === 'Attempt')
      this.deps.log.info(
        `attempt ${a.attemptId}: ${res.status.toLowerCase()}${cp ? ` (checkpoint${cp.step !== null ? ` step ${cp.step}` : ''})` : ''}`,
      );
    else this.deps.log.warn(`attempt ${a.attemptId}: hand-back refused (${res.__typename}): ${'message' in res ? res.message : ''}`);
    await rm(this.runDir, { recursive: true, force: true }).catch(() => {});
  }

  /**
   * The setup phase (setupEnv.ts): the task's virtualenv, found in the cache or built now with the
   * network, its output streamed as this attempt's logs. Throws when there is none; the caller
   * completes the attempt with error class DEPENDENCY.
   */
  private async setupPhase(
    lines: string[],
    stream: LogStream,
    taskUser: { uid: number; gid: number } | null,
    identityFiles: { passwd: string; group: string } | null,
  ): Promise<PreparedEnv> {
    const { envs, caps } = this.deps;
    if (!envs || !caps.install.enabled || !caps.python) {
      throw new Error(
        `this worker installs no packages (${!caps.python ? 'it has no Python' : !envs ? 'started with --no-install' : 'its Python cannot make a virtualenv with pip'}); the task needs ${lines.join(', ')}`,
      );
    }
    const memory = this.deps.memoryLimit(`${this.attemptId}-setup`);
    try {
      const r = await envs.setup({
        python: caps.python,
        pip: lines,
        attemptId: this.attemptId,
        sandbox: {
          sandbox: this.deps.sandbox,
          runAs: taskUser,
          identityFiles,
          memory,
          pidsLimit: this.deps.pidsLimit === undefined ? DEFAULT_PIDS_LIMIT : this.deps.pidsLimit,
        },
        log: (l) => stream.system(l),
        signal: this.abort.signal,
      });
      if (!r.ok) throw new Error(r.message);
      return r.env;
    } finally {
      memory?.cleanup();
    }
  }

  /**
   * Puts the files in place: from the blob cache, else from this worker's recent outputs
   * (recentOutputs.ts), else downloaded into the cache. Returns the paths that came from recent outputs.
   */
  private async materialize(dir: string, files: { path: string; sha256: string; mode: number }[]): Promise<string[]> {
    const cache = path.join(this.deps.dataDir, 'cache');
    const reused: string[] = [];
    for (const f of files) {
      let cached = path.join(cache, f.sha256.slice(0, 2), f.sha256);
      try {
        await stat(cached);
      } catch {
        const kept = await this.recent.find(f.sha256);
        if (kept) {
          cached = kept;
          reused.push(f.path);
        } else await this.deps.client.download(f.sha256, cached, this.abort.signal);
      }
      const dest = path.join(dir, f.path);
      if (!dest.startsWith(dir + path.sep)) throw new ApiError(`refusing path ${f.path}`, 'WORKER_ERROR');
      await mkdir(path.dirname(dest), { recursive: true });
      // Always a copy, never a hard link: the task owns and may rewrite its files, and a link would
      // let it change the cached blob every later task reads.
      await copyFile(cached, dest);
      await chmod(dest, f.mode & 0o111 ? 0o755 : 0o644);
    }
    return reused;
  }

  /**
   * The task's environment, from scratch: nothing of the worker's own (its token, the owner's
   * variables) reaches the task. Paths are the ones the task sees (`sandboxPaths`).
   */
  private async environment(
    dir: string,
    helpersDir: string,
    workload: string | undefined,
    interpreterDirs: string[],
    pyEnv: PreparedEnv | null,
  ): Promise<Record<string, string>> {
    const a = this.assignment;
    const caps = this.deps.caps;
    const sandbox = this.deps.sandbox;
    await mkdir(path.join(dir, '.chatgpu', 'bin'), { recursive: true });
    await mkdir(path.join(dir, '.chatgpu', 'home'), { recursive: true });
    // `python` and `python3` in the task's command mean the interpreter the probe chose
    // (on many machines the first python3 on PATH lacks PyTorch). Its prefix is bound at the same path.
    if (caps.python && !pyEnv) {
      await symlink(caps.python, path.join(dir, '.chatgpu', 'bin', 'python')).catch(() => {});
      await symlink(caps.python, path.join(dir, '.chatgpu', 'bin', 'python3')).catch(() => {});
    }
    const seen = sandboxPaths(sandbox, dir, helpersDir);
    // The host's PATH entries that exist inside (under /usr, or an interpreter's prefix: a CUDA
    // toolkit in /usr/local/cuda/bin stays reachable); without a sandbox, all of them.
    const inside = (e: string) => /^\/(usr|bin|sbin)(\/|$)/.test(e) || interpreterDirs.some((d) => e === d || e.startsWith(`${d}/`));
    const hostPath = (process.env.PATH ?? '').split(':').filter((e) => path.isAbsolute(e) && (sandbox === 'none' || inside(e)));
    const pathDirs = [
      ...new Set([...(pyEnv ? [pyEnv.bin] : []), `${seen.workDir}/.chatgpu/bin`, ...hostPath, '/usr/local/bin', '/usr/bin', '/bin']),
    ];
    // A simulated accelerator is only advertised: the task's numerics run on the CPU.
    const device = caps.simulatedAccelerator
      ? 'cpu'
      : workload === 'torch-cuda' || workload === 'torch-rocm'
        ? 'cuda'
        : workload === 'torch-mps'
          ? 'mps'
          : 'cpu';
    const taskEnv = Object.fromEntries(
      Object.entries((a.task.environment ?? {}) as Record<string, unknown>)
        .filter(([k, v]) => /^[A-Z_][A-Z0-9_]*$/.test(k) && ['string', 'number', 'boolean'].includes(typeof v))
        .map(([k, v]) => [k, String(v)]),
    );
    return {
      PATH: pathDirs.join(':'),
      HOME: `${seen.workDir}/.chatgpu/home`,
      XDG_CACHE_HOME: `${seen.workDir}/.chatgpu/home/.cache`,
      USER: 'task',
      LOGNAME: 'task',
      LANG: 'C.UTF-8',
      PYTHONUNBUFFERED: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONPATH: seen.helpersDir,
      MPLBACKEND: 'Agg',
      // Several slots: each task's numerical libraries get its share of the cores (threadEnv.ts).
      ...threadEnv(caps.cpu?.cores ?? 0, this.deps.slots ?? 1, taskEnv),
      ...taskEnv,
      CHATGPU_JOB_ID: a.task.jobId,
      CHATGPU_TASK_ID: a.task.id,
      CHATGPU_ATTEMPT_ID: a.attemptId,
      CHATGPU_OUTPUT_DIR: `${seen.workDir}/outputs`,
      CHATGPU_DEVICE: device,
      ...simulatedTaskEnv(caps.simulatedAccelerator),
      ...(pyEnv ? { VIRTUAL_ENV: pyEnv.dir } : {}),
      ...(device === 'mps' ? { PYTORCH_ENABLE_MPS_FALLBACK: '1' } : {}),
    };
  }

  /**
   * /etc/passwd and /etc/group for the sandbox, kept outside the attempt directory (the task may not
   * rewrite them) and written once per user: a rename, so a concurrent run never binds a half file.
   */
  private async identityFiles(user: { uid: number; gid: number } | null): Promise<{ passwd: string; group: string }> {
    const u = user ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
    const dir = path.join(this.deps.dataDir, 'sandbox', `etc-${u.uid}-${u.gid}`);
    const passwd = path.join(dir, 'passwd');
    if (
      await stat(passwd).then(
        () => true,
        () => false,
      )
    )
      return { passwd, group: path.join(dir, 'group') };
    const tmp = `${dir}.${process.pid}.${this.attemptId}`;
    writeIdentityFiles(tmp, u);
    await rename(tmp, dir).catch(() => rm(tmp, { recursive: true, force: true }));
    return { passwd, group: path.join(dir, 'group') };
  }

  private async uploadOutputs(dir: string, declared: string[], note: (m: string) => void, extra: { path: string; file: string }[]) {
    // Only a sandboxed run's outputs are kept for the next task here: its processes are all gone, so nothing changes a file once hashed.
    const keep = this.deps.sandbox === 'bwrap';
    const task = this.assignment.task;
    const outputs = await collectOutputs({
      dir,
      declared,
      extra,
      // An evaluation's inputs left as they were (the checkpoint it reloads) are the run's outputs already, not
      // the evaluation's: not hashed and uploaded again (a 256 MiB checkpoint: ≈ 4 s at load 10 on 2 cores).
      inputs: task.kind === 'EVALUATE' ? [...task.files, ...task.inputs] : task.files,
      limits: { ...DEFAULT_OUTPUT_LIMITS, ...this.deps.outputLimits },
      note,
      upload: async (file, rel) => {
        const r = await this.deps.client.upload(file, this.abort.signal, this.attemptId);
        // The file by its path (a /proc/self/fd link cannot be hard-linked); the task that could swap it is gone.
        if (keep) await this.recent.keep(this.attemptId, file.startsWith('/proc/') ? path.join(dir, rel) : file, r.sha256);
        return r;
      },
    });
    if (keep) await this.recent.prune();
    return outputs;
  }
}

/**
 * Regular files in outputs/, plus the task's declared output paths (relative to the run directory),
 * each handed to `upload` and listed with its sha256. Nothing is read through a symbolic link: a
 * task could otherwise point outputs/x at /etc/passwd, at another attempt's file or at the worker's
 * data, and have the worker upload it. What is skipped is passed to `note` with the reason.
 * A file of the task's code (`inputs`) that the program left as it was is not an output, whatever
 * pattern matched it: one note lists them.
 */
export async function collectOutputs(opts: {
  dir: string;
  declared: string[];
  /** outputs/ as well as the declared paths (default true) */
  walkOutputs?: boolean;
  /** files the worker wrote itself, outside `dir` (the stdout file), listed at `path`; they replace the task's file there */
  extra?: { path: string; file: string }[];
  /** the task's input files (its code manifest): one found unchanged at its path is not an output */
  inputs?: { path: string; sha256: string; size: number }[];
  limits: { maxFileBytes: number; maxTotalBytes: number };
  note: (m: string) => void;
  /** `file` is what to read (the opened file itself on Linux), `rel` its path in `dir` */
  upload: (file: string, rel: string) => Promise<{ sha256: string }>;
}): Promise<{ path: string; sha256: string; mode: number }[]> {
  const { dir, declared, limits } = opts;
  const files = new Map<string, string>();
  const inputs = new Map((opts.inputs ?? []).map((f) => [f.path, f]));
  const unchanged: string[] = [];
  const skip = (rel: string, why: string) => opts.note(`output ${rel} skipped: ${why}`);
  // readdir's Dirent types come from lstat: a symbolic link is neither a file nor a directory here.
  const walk = async (rel: string) => {
    for (const e of await readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => [])) {
      const r = `${rel}/${e.name}`;
      if (e.isSymbolicLink()) skip(r, 'symbolic link (not followed)');
      else if (e.isDirectory()) await walk(r);
      else if (e.isFile()) files.set(r, path.join(dir, r));
      else skip(r, 'not a regular file');
    }
  };
  if (opts.walkOutputs !== false) await walk('outputs');
  // A glob (`predict*.npy`, `plots/*.png`): matched one path segment at a time (`*`, `?`, `[…]`
  // within a segment; no `**`), hidden names only when the pattern names them; links not followed.
  const expand = async (rel: string, segs: string[]) => {
    const [seg, ...rest] = segs;
    for (const e of await readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => [])) {
      if (!minimatch(e.name, seg!)) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) skip(r, 'symbolic link (not followed)');
      else if (e.isDirectory()) await (rest.length ? expand(r, rest) : walk(r));
      else if (e.isFile() && rest.length === 0) files.set(r, path.join(dir, r));
    }
  };
  for (const d of declared) {
    const clean = path.posix
      .normalize(d)
      .replace(/^(\.\/)+/, '')
      .replace(/\/+$/, '');
    if (!clean || clean === '.' || clean.startsWith('..') || path.isAbsolute(clean)) {
      skip(d, 'path outside the attempt directory');
      continue;
    }
    if (/[*?[]/.test(clean)) {
      await expand('', clean.split('/'));
      continue;
    }
    // Every component, from the attempt directory down, must be a real directory or file.
    let st = null;
    let link = false;
    for (let i = 1, parts = clean.split('/'); i <= parts.length; i++) {
      st = await lstat(path.join(dir, ...parts.slice(0, i))).catch(() => null);
      if (!st) break;
      if (st.isSymbolicLink()) {
        link = true;
        break;
      }
    }
    if (link) skip(clean, 'symbolic link (not followed)');
    else if (st?.isFile()) files.set(clean, path.join(dir, clean));
    else if (st?.isDirectory()) await walk(clean);
  }
  const extra = new Map((opts.extra ?? []).map((e) => [e.path, e.file]));
  for (const rel of extra.keys())
    if (files.delete(rel)) opts.note(`output ${rel}: the program's own file at this path is replaced by the worker's`);
  if (files.size + extra.size > MAX_OUTPUT_FILES)
    throw new Error(`too many output files (${files.size + extra.size} > ${MAX_OUTPUT_FILES})`);
  const root = await realpath(dir);
  const out: { path: string; sha256: string; mode: number }[] = [];
  let total = 0;
  // The worker's own files first: the outputs the plan asked the worker to make are not crowded out by the total limit.
  for (const [rel, file] of [...extra].sort(([x], [y]) => (x < y ? -1 : 1))) {
    const st = await lstat(file).catch(() => null);
    if (!st?.isFile()) skip(rel, 'the worker did not make it');
    else if (st.size > limits.maxFileBytes) skip(rel, `${st.size} bytes, over the per-file limit of ${limits.maxFileBytes}`);
    else if (total + st.size > limits.maxTotalBytes)
      skip(rel, `would bring the outputs over their total limit of ${limits.maxTotalBytes} bytes`);
    else {
      total += st.size;
      const { sha256 } = await opts.upload(file, rel);
      out.push({ path: rel, sha256, mode: 0o644 });
    }
  }
  for (const [rel, full] of [...files].sort(([x], [y]) => (x < y ? -1 : 1))) {
    // O_NOFOLLOW and a check of what was actually opened: a file swapped for a link after the
    // walk is refused too (in the sandbox every task process is gone by now; without it, maybe not).
    const fh = await open(full, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK).catch(() => null);
    if (!fh) {
      skip(rel, 'cannot be opened without following a link');
      continue;
    }
    try {
      const st = await fh.stat();
      const viaFd = process.platform === 'linux' ? `/proc/self/fd/${fh.fd}` : null;
      const real = await realpath(viaFd ?? full).catch(() => null);
      if (!st.isFile()) skip(rel, 'not a regular file');
      else if (!real || !real.startsWith(root + path.sep)) skip(rel, 'resolves outside the attempt directory');
      else if (st.size > limits.maxFileBytes) skip(rel, `${st.size} bytes, over the per-file limit of ${limits.maxFileBytes}`);
      else if (await sameAsInput(inputs.get(rel), st.size, viaFd ?? full)) unchanged.push(rel);
      else if (total + st.size > limits.maxTotalBytes)
        skip(rel, `would bring the outputs over their total limit of ${limits.maxTotalBytes} bytes`);
      else {
        total += st.size;
        const { sha256 } = await opts.upload(viaFd ?? full, rel);
        out.push({ path: rel, sha256, mode: st.mode & 0o111 ? 0o755 : 0o644 });
      }
    } finally {
      await fh.close();
    }
  }
  if (unchanged.length) {
    const shown = unchanged.slice(0, 10).join(', ') + (unchanged.length > 10 ? ` and ${unchanged.length - 10} more` : '');
    opts.note(
      `${unchanged.length} input file(s) matched the outputs but were not changed by the program, so they are not outputs: ${shown}`,
    );
  }
  return out.sort((x, y) => (x.path < y.path ? -1 : 1));
}

/** Whether the file at `file` has the input's content (its size, then its sha256). */
async function sameAsInput(input: { sha256: string; size: number } | undefined, size: number, file: string): Promise<boolean> {
  if (!input || input.size !== size) return false;
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex') === input.sha256;
}

/**
 * Copies the checkpoint folder `rel` of `dir` into `to` (emptied first; the worker's spool folder,
 * outside the sandbox) and returns `to`: what CheckpointWatcher uploads while the program saves on.
 * The copy goes through collectOutputs — no link followed, nothing that resolves outside `dir`, the
 * size limits — so the copy holds nothing an upload of the folder itself would not.
 */
export async function snapshotCheckpoint(
  dir: string,
  rel: string,
  to: string,
  limits: { maxFileBytes: number; maxTotalBytes: number },
  note: (m: string) => void,
): Promise<string> {
  await rm(to, { recursive: true, force: true });
  await mkdir(to, { recursive: true, mode: 0o700 });
  await collectOutputs({
    dir,
    declared: [rel],
    walkOutputs: false,
    limits,
    note,
    upload: async (file, fileRel) => {
      await mkdir(path.dirname(path.join(to, fileRel)), { recursive: true, mode: 0o700 });
      await copyFile(file, path.join(to, fileRel));
      return { sha256: '' };
    },
  });
  return to;
}

/**
 * Why a run that exited non-zero failed. Out of memory is the task's own failure, but it gets its
 * own class (OOM) so the owner and the planner see "needs more memory", not a bare exit code:
 * - the cgroup says it OOM-killed something;
 * - the end of stderr shows an allocation failure (RLIMIT_DATA makes Python raise MemoryError,
 *   PyTorch's allocator throw "can't allocate memory", C++ std::bad_alloc);
 * - a memory limit was applied and the task died of SIGKILL (137 through sh/bwrap): nothing else
 *   sends SIGKILL to a run the worker did not stop itself (time limit and cancel are told apart before).
 * A `ModuleNotFoundError` at the end of stderr is DEPENDENCY, naming the module.
 */
export function classifyFailure(r: {
  code: number | null;
  signal: NodeJS.Signals | null;
  memory: MemoryLimitPlan | null;
  oomKilled: boolean;
  stderrTail: string;
}): { errorClass: string; errorMessage: string } {
  const limited = r.memory && r.memory.kind !== 'none';
  const how = r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`;
  const limitText = limited ? `memory limit: ${r.memory!.description}` : 'no memory limit set by the worker';
  if (r.oomKilled) return { errorClass: 'OOM', errorMessage: `out of memory: killed by the kernel (${limitText})` };
  if (/\bMemoryError\b|can't allocate memory|std::bad_alloc|Cannot allocate memory/.test(r.stderrTail)) {
    return { errorClass: 'OOM', errorMessage: `out of memory: ${how} after an allocation failed (${limitText})` };
  }
  if (limited && (r.signal === 'SIGKILL' || r.code === 137)) {
    return { errorClass: 'OOM', errorMessage: `out of memory: ${how} with the ${limitText}` };
  }
  // A module the program imports is not installed: a dependency problem, named, not the
  // code's own failure (the supervisor asks or stops with it instead of retrying blindly).
  const missing = /ModuleNotFoundError: No module named '([^']+)'/.exec(r.stderrTail);
  if (missing)
    return {
      errorClass: 'DEPENDENCY',
      errorMessage: `missing module: ${missing[1]} (ModuleNotFoundError: No module named '${missing[1]}'; ${how})`,
    };
  return { errorClass: 'EXIT_NONZERO', errorMessage: how };
}
