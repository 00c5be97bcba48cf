import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';

import { repoRoot } from '../../src/paths.js';

export { repoRoot };

export { freePort } from '../../../bench/lib/throwawayPostgres.js';

export interface Proc {
  child: ChildProcess;
  output(): string;
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const live = new Set<Proc>();

// Registered while the test file is collected, so it also covers processes that tests
// start inside `it` (where afterAll can no longer be registered).
afterAll(async () => {
  await Promise.all([...live].map((p) => p.stop('SIGKILL')));
});

/** Spawns a real process (its own process group); killed after the file's tests if still running. */
export function spawnProc(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Proc {
  const child = spawn(cmd, args, {
    cwd: opts.cwd ?? repoRoot,
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  const waiters: (() => void)[] = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters]) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const proc: Proc = {
    child,
    output: () => out,
    waitFor(re, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(re);
          if (m) {
            clearTimeout(t);
            waiters.splice(waiters.indexOf(check), 1);
            resolve(m);
          }
        };
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${re}; output:\n${out.slice(-3000)}`)), timeoutMs);
        waiters.push(check);
        check();
        void exited.then((code) => {
          if (!out.match(re)) {
            clearTimeout(t);
            reject(new Error(`process exited (${code}) before ${re}; output:\n${out.slice(-3000)}`));
          }
        });
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      try {
        process.kill(-child.pid!, signal);
      } catch {
        /* gone */
      }
      return exited;
    },
  };
  live.add(proc);
  void exited.then(() => live.delete(proc));
  return proc;
}
