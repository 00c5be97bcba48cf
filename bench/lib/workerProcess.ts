/**
 * A real `chatgpu-worker` process (worker/bin/chatgpu-worker.mjs) for the benchmarks, in
 * its own process group (detached) so that a signal reaches it and the task it runs:
 * SIGKILL for a vanished machine, SIGSTOP/SIGCONT for one that froze past its lease.
 * Free of vitest, so both bench/ scripts and api/test/ suites can use it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from './api.js';
import { sleep } from './stats.js';

export interface WorkerProc {
  name: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<void>;
  dataDir: string;
}

/** Starts a worker and waits until it has said hello (60 s at most); `root`: the checkout whose worker/ runs (default this one). */
export async function startWorker(
  url: string,
  token: string,
  name: string,
  o: { python: string; sandbox: string; root?: string },
): Promise<WorkerProc> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `bench-worker-${name}-`));
  const child = spawn(
    process.execPath,
    [
      path.join(o.root ?? repoRoot, 'worker/bin/chatgpu-worker.mjs'),
      '--server',
      url,
      '--name',
      name,
      '--data-dir',
      dataDir,
      '--python',
      o.python,
      '--sandbox',
      o.sandbox,
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, CHATGPU_WORKER_TOKEN: token } },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const w: WorkerProc = { name, child, output: () => out, exited, dataDir };
  const deadline = Date.now() + 60_000;
  while (!/connected to .* as worker/.test(out)) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await killWorker(w);
      throw new Error(`worker ${name} did not connect:\n${out.slice(-2000)}`);
    }
    await sleep(20);
  }
  return w;
}

/** Sends `signal` to the worker's process group (no-op once it is gone). */
export function signalWorker(w: WorkerProc, signal: NodeJS.Signals): void {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return;
  try {
    process.kill(-w.child.pid!, signal);
  } catch {
    /* gone */
  }
}

/** Signals the process group, waits for the worker to exit (SIGKILL after 10 s) and removes its data dir. */
export async function killWorker(w: WorkerProc, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  signalWorker(w, signal);
  if (signal !== 'SIGKILL') {
    signalWorker(w, 'SIGCONT'); // a stopped worker cannot act on SIGTERM
    const t = setTimeout(() => signalWorker(w, 'SIGKILL'), 10_000);
    await w.exited;
    clearTimeout(t);
  } else await w.exited;
  await rm(w.dataDir, { recursive: true, force: true }).catch(() => {});
}
