/**
 * Starts the local worker (worker/) as a child process for the embedded default, so a
 * newcomer's first job runs with no extra step. Its output is prefixed with [worker].
 * Its sandbox (bubblewrap) is installed first where it can be (localSandbox.ts); it runs with
 * `--sandbox own-jobs`: in bubblewrap when that works, otherwise only the local user's own jobs.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Resources } from './domain/resources.js';
import { ensureLocalSandbox } from './localSandbox.js';
import { inRepo } from './paths.js';

/** The local worker's command line (after the node binary): the same for `npm start` and its tests. */
export function localWorkerArgs(opts: { serverUrl: string; dataDir: string }): string[] {
  return [
    inRepo('worker/bin/chatgpu-worker.mjs'),
    '--server',
    opts.serverUrl,
    '--name',
    'local',
    '--data-dir',
    path.join(opts.dataDir, 'worker'),
    '--sandbox',
    'own-jobs',
  ];
}

export async function startLocalWorker(opts: {
  serverUrl: string;
  token: string;
  dataDir: string;
  /** CHATGPU_INSTALL_SANDBOX */
  installSandbox?: 'auto' | 'never';
  log?: (line: string) => void;
  /** the worker's environment (default this process's); tests pass a PATH */
  env?: NodeJS.ProcessEnv;
}): Promise<() => Promise<void>> {
  const bin = inRepo('worker/bin/chatgpu-worker.mjs');
  if (!existsSync(bin)) {
    console.warn('The worker is not available in this build; jobs will wait for a worker to connect.');
    return async () => {};
  }
  const env = opts.env ?? process.env;
  await ensureLocalSandbox({
    install: opts.installSandbox ?? 'auto',
    isRoot: process.getuid?.() === 0,
    log: opts.log ?? ((l) => console.log(l)),
    pathEnv: env.PATH,
  });
  const child = spawn(
    process.execPath,
    localWorkerArgs(opts),
    // The token goes in the environment, not the arguments (which every local user can read).
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, CHATGPU_WORKER_TOKEN: opts.token } },
  );
  const prefix = (chunk: Buffer) =>
    chunk
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => `[worker] ${l}\n`)
      .join('');
  child.stdout.on('data', (c: Buffer) => process.stdout.write(prefix(c)));
  child.stderr.on('data', (c: Buffer) => process.stderr.write(prefix(c)));
  return async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
}

/** Settles once some worker is ONLINE, or after `limitMs` (then planners go on without one). */
export async function untilWorkerOnline(r: Pick<Resources, 'prisma'>, limitMs: number, stepMs = 250): Promise<void> {
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    if ((await r.prisma.worker.count({ where: { status: 'ONLINE' } }).catch(() => 0)) > 0) return;
    await new Promise((res) => setTimeout(res, stepMs));
  }
}
