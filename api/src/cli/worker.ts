/** `chatgpu worker …`: forwards to the contributor's command (worker/bin/chatgpu-worker.mjs). */
import { spawn } from 'node:child_process';
import { inRepo } from '../paths.js';

export const WORKER_BIN = inRepo('worker/bin/chatgpu-worker.mjs');

export function workerCommand(argv: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER_BIN, ...argv], { stdio: 'inherit' });
    const forward = (sig: NodeJS.Signals) => () => {
      if (child.exitCode === null) child.kill(sig);
    };
    // Ctrl-C reaches the child through the terminal's process group; only keep this process alive for its exit.
    const onInt = () => {};
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1));
    });
  });
}
