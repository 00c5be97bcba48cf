/**
 * Runs one attempt: prepares its directory with the code version's files (blobs cached
 * by sha256 across tasks), runs the command (sandboxed when possible) with the task's
 * environment, streams its output, enforces the time limit, uploads declared outputs
 * and completes the attempt. Cancel and lease loss kill the whole process group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, link, mkdir, readdir, rm, stat, symlink, chmod } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError, sleep, type ApiClient } from './client.js';
import { AppendLogsDoc, CompleteAttemptDoc, ReportMetricsDoc } from './documents.js';
import type { ClaimTaskMutation } from './gql/graphql.js';
import { LogStream } from './logStream.js';
import type { Capabilities } from './probe/types.js';
import { buildSandboxedCommand, gpuDeviceNodes, type MemoryLimitPlan } from './sandbox.js';

export type Assignment = Extract<ClaimTaskMutation['claimTask'], { __typename: 'MutationClaimTaskSuccess' }>['data'][number];

const PYTHON_HELPERS = fileURLToPath(new URL('../python', import.meta.url));
const MAX_OUTPUT_FILES = 500;

export interface RunnerDeps {
  client: ApiClient;
  dataDir: string;
  caps: Capabilities;
  sandbox: 'bwrap' | 'none';
  memoryLimit: (attemptId: string) => MemoryLimitPlan | null;
  log: { info(m: string): void; warn(m: string): void };
  /** Wraps the execution in a telemetry span (Sentry when configured). */
  span?: <T>(a: Assignment, fn: () => Promise<T>) => Promise<T>;
}

export type StopReason = 'cancel' | 'lease-lost' | 'shutdown';

export class Run {
  private child: ChildProcess | undefined;
  private stopReason: StopReason | undefined;
  readonly done: Promise<void>;
  private readonly abort = new AbortController();

  constructor(
    readonly assignment: Assignment,
    private readonly deps: RunnerDeps,
  ) {
    this.done = (deps.span ? deps.span(assignment, () => this.execute()) : this.execute()).catch((err) => {
      deps.log.warn(`attempt ${assignment.attemptId}: ${(err as Error).message}`);
    });
  }

  get attemptId(): string {
    return this.assignment.attemptId;
  }

  /** Kills the run's whole process group. */
  stop(reason: StopReason, why?: string): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    if (reason !== 'shutdown') this.deps.log.warn(`stopping attempt ${this.attemptId}: ${why ?? reason}`);
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
    const stream = new LogStream({
      sendLogs: async (lines) => {
        const r = await client.request(AppendLogsDoc, { attemptId: a.attemptId, fencingToken: a.fencingToken, lines }, { signal: this.abort.signal });
        if (r.appendLogs.__typename === 'StaleAttemptError') this.stop('lease-lost', `the API refused its logs as stale (${r.appendLogs.reason})`);
        else if (r.appendLogs.__typename !== 'AppendResult') throw new Error(`logs refused: ${'message' in r.appendLogs ? r.appendLogs.message : ''}`);
      },
      sendMetrics: async (points) => {
        const r = await client.request(ReportMetricsDoc, { attemptId: a.attemptId, fencingToken: a.fencingToken, points }, { signal: this.abort.signal });
        if (r.reportMetrics.__typename === 'StaleAttemptError') this.stop('lease-lost', `the API refused its metrics as stale (${r.reportMetrics.reason})`);
      },
    });
    const started = Date.now();
    let exitCode: number | null = null;
    let errorClass: string | null = null;
    let errorMessage: string | null = null;
    let outputs: { path: string; sha256: string; mode: number }[] = [];
    try {
      await rm(dir, { recursive: true, force: true });
      await mkdir(outDir, { recursive: true });
      try {
        await this.materialize(dir, [...a.task.files, ...a.task.inputs]);
      } catch (err) {
        errorClass = 'DOWNLOAD_FAILED';
        throw err;
      }
      const req = (a.task.requirements ?? {}) as { network?: boolean; timeoutSec?: number; outputs?: string[]; workload?: string };
      const env = await this.environment(dir, outDir, req.workload);
      const memory = this.deps.memoryLimit(a.attemptId);
      const cmd = buildSandboxedCommand({
        sandbox: this.deps.sandbox,
        command: ['sh', '-c', a.task.command],
        workDir: dir,
        allowNetwork: req.network === true,
        devices: req.workload && /cuda|rocm|cxx/.test(req.workload) ? gpuDeviceNodes() : [],
        memory,
        readWrite: [],
      });
      stream.system(`worker: running \`${a.task.command}\` (attempt ${a.number}; sandbox ${cmd.applied.sandbox}, network ${cmd.applied.network}, ${cmd.applied.memory})`);
      log.info(`attempt ${a.attemptId}: ${a.task.name} — ${a.task.command}`);
      const child = spawn(cmd.file, cmd.args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      this.child = child;
      stream.attach(child.stdout!, 'stdout');
      stream.attach(child.stderr!, 'stderr');
      const timeoutSec = req.timeoutSec ?? 24 * 3600;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        stream.system(`worker: time limit of ${timeoutSec}s reached; stopping the run.`);
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
      memory?.cleanup();
      exitCode = code ?? (signal ? 128 : null);
      if (this.stopReason) {
        stream.system(`worker: run stopped (${this.stopReason}).`);
        await stream.close().catch(() => {});
        return; // a cancelled or stale attempt reports nothing more
      }
      if (timedOut) errorClass = 'TIMEOUT';
      else if (code !== 0) {
        errorClass = 'EXIT_NONZERO';
        errorMessage = signal ? `killed by ${signal}` : `exit code ${code}`;
      }
      stream.system(`worker: the command exited with ${signal ? `signal ${signal}` : `code ${code}`} after ${((Date.now() - started) / 1000).toFixed(1)}s.`);
      try {
        outputs = await this.uploadOutputs(dir, outDir, req.outputs ?? []);
        if (outputs.length) stream.system(`worker: uploaded ${outputs.length} output file(s).`);
      } catch (err) {
        if (!errorClass) errorClass = 'UPLOAD_FAILED';
        errorMessage = (err as Error).message;
      }
    } catch (err) {
      if (this.stopReason) return;
      errorClass ??= 'WORKER_ERROR';
      errorMessage = (err as Error).message;
      stream.system(`worker: ${errorClass}: ${errorMessage}`);
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
      usage: { wallSeconds: (Date.now() - started) / 1000, logLines: stream.totalLines },
    };
    // Transport failures are retried inside request(); an internal server error is retried
    // here too (completion is fenced, so a repeat after success is refused, not applied twice).
    let r;
    for (let i = 0; ; i++) {
      try {
        r = await client.request(CompleteAttemptDoc, { attemptId: a.attemptId, fencingToken: a.fencingToken, result });
        break;
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 'INTERNAL_SERVER_ERROR') || i >= 4) throw err;
        await sleep(500 * 2 ** i);
      }
    }
    const res = r.completeAttempt;
    if (res.__typename === 'Attempt') log.info(`attempt ${a.attemptId}: ${res.status.toLowerCase()}`);
    else log.warn(`attempt ${a.attemptId}: completion refused (${res.__typename}): ${'message' in res ? res.message : ''}`);
    // Keep the directory of a failed run for its owner to inspect; clean successful ones.
    if (res.__typename === 'Attempt' && res.status === 'SUCCEEDED') await rm(dir, { recursive: true, force: true });
  }

  /** Puts the files in place: from the blob cache (hard link, or copy across devices). */
  private async materialize(dir: string, files: { path: string; sha256: string; mode: number }[]) {
    const cache = path.join(this.deps.dataDir, 'cache');
    for (const f of files) {
      const cached = path.join(cache, f.sha256.slice(0, 2), f.sha256);
      try {
        await stat(cached);
      } catch {
        await this.deps.client.download(f.sha256, cached, this.abort.signal);
      }
      const dest = path.join(dir, f.path);
      if (!dest.startsWith(dir + path.sep)) throw new ApiError(`refusing path ${f.path}`, 'WORKER_ERROR');
      await mkdir(path.dirname(dest), { recursive: true });
      await copyFile(cached, dest).catch(async () => link(cached, dest));
      await chmod(dest, f.mode & 0o111 ? 0o755 : 0o644);
    }
  }

  private async environment(dir: string, outDir: string, workload: string | undefined): Promise<NodeJS.ProcessEnv> {
    const a = this.assignment;
    const caps = this.deps.caps;
    const bin = path.join(dir, '.chatgpu', 'bin');
    await mkdir(bin, { recursive: true });
    await mkdir(path.join(dir, '.chatgpu', 'home'), { recursive: true });
    // `python` and `python3` in the task's command mean the interpreter the probe chose
    // (on many machines the first python3 on PATH lacks PyTorch).
    if (caps.python) {
      await symlink(caps.python, path.join(bin, 'python')).catch(() => {});
      await symlink(caps.python, path.join(bin, 'python3')).catch(() => {});
    }
    const device = workload === 'torch-cuda' || workload === 'torch-rocm' ? 'cuda' : workload === 'torch-mps' ? 'mps' : 'cpu';
    const taskEnv = Object.fromEntries(
      Object.entries((a.task.environment ?? {}) as Record<string, unknown>).filter(([k, v]) => /^[A-Z_][A-Z0-9_]*$/.test(k) && ['string', 'number', 'boolean'].includes(typeof v)).map(([k, v]) => [k, String(v)]),
    );
    return {
      PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: path.join(dir, '.chatgpu', 'home'),
      XDG_CACHE_HOME: path.join(dir, '.chatgpu', 'home', '.cache'),
      LANG: process.env.LANG ?? 'C.UTF-8',
      PYTHONUNBUFFERED: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONPATH: PYTHON_HELPERS,
      MPLBACKEND: 'Agg',
      ...taskEnv,
      CHATGPU_JOB_ID: a.task.jobId,
      CHATGPU_TASK_ID: a.task.id,
      CHATGPU_ATTEMPT_ID: a.attemptId,
      CHATGPU_OUTPUT_DIR: outDir,
      CHATGPU_DEVICE: device,
      ...(device === 'mps' ? { PYTORCH_ENABLE_MPS_FALLBACK: '1' } : {}),
    };
  }

  /** Everything in the output directory, plus the task's declared output paths (relative to the run directory). */
  private async uploadOutputs(dir: string, outDir: string, declared: string[]) {
    const files = new Map<string, string>();
    const walk = async (root: string, rel: string) => {
      for (const e of await readdir(path.join(root, rel), { withFileTypes: true }).catch(() => [])) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) await walk(root, r);
        else if (e.isFile()) files.set(`outputs/${r}`, path.join(root, r));
      }
    };
    await walk(outDir, '');
    for (const d of declared) {
      const clean = path.posix.normalize(d).replace(/^(\.\/)+/, '');
      if (clean.startsWith('..') || path.isAbsolute(clean)) continue;
      const full = path.join(dir, clean);
      const st = await stat(full).catch(() => null);
      if (st?.isFile()) files.set(clean, full);
      else if (st?.isDirectory()) {
        const sub = new Map<string, string>();
        const w = async (rel: string) => {
          for (const e of await readdir(path.join(full, rel), { withFileTypes: true })) {
            const r = rel ? `${rel}/${e.name}` : e.name;
            if (e.isDirectory()) await w(r);
            else if (e.isFile()) sub.set(`${clean}/${r}`, path.join(full, r));
          }
        };
        await w('');
        for (const [k, v] of sub) files.set(k, v);
      }
    }
    if (files.size > MAX_OUTPUT_FILES) throw new Error(`too many output files (${files.size} > ${MAX_OUTPUT_FILES})`);
    const out: { path: string; sha256: string; mode: number }[] = [];
    for (const [rel, full] of [...files].sort(([x], [y]) => (x < y ? -1 : 1))) {
      const { sha256 } = await this.deps.client.upload(full, this.abort.signal);
      const mode = (await stat(full)).mode & 0o111 ? 0o755 : 0o644;
      out.push({ path: rel, sha256, mode });
    }
    return out;
  }
}
