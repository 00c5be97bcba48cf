/**
 * Starts the local worker (worker/) as a child process for the embedded default, so a
 * newcomer's first job runs with no extra step. Its output is prefixed with [worker].
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { inRepo } from './paths.js';

export async function startLocalWorker(opts: { serverUrl: string; token: string; dataDir: string }): Promise<() => Promise<void>> {
  const bin = inRepo('worker/bin/chatgpu-worker.mjs');
  if (!existsSync(bin)) {
    console.warn('The worker is not available in this build; jobs will wait for a worker to connect.');
    return async () => {};
  }
  const child = spawn(
    process.execPath,
    [bin, '--server', opts.serverUrl, '--name', 'local', '--data-dir', path.join(opts.dataDir, 'worker')],
    // The token goes in the environment, not the arguments (which every local user can read).
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CHATGPU_WORKER_TOKEN: opts.token } },
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
