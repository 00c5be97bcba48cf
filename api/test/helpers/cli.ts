import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll } from 'vitest';
import { repoRoot } from './processes.js';

export const CLI_BIN = path.join(repoRoot, 'api/bin/chatgpu.mjs');

export interface CliRun {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** stdout and stderr together, in arrival order. */
  output(): string;
  write(text: string): void;
  endInput(): void;
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

/**
 * Runs the real `chatgpu` command (node api/bin/chatgpu.mjs …) as a child process with
 * stdin as a pipe. `env` is added to a clean environment (no CHATGPU_* from outside).
 */
export function startCli(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): CliRun {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('CHATGPU_') && !k.startsWith('VITEST') && k !== 'NODE_OPTIONS') base[k] = v;
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: opts.cwd ?? repoRoot,
    env: { ...base, ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let so = '';
  let se = '';
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  child.stdout!.on('data', (d: Buffer) => {
    so += d.toString();
    out += d.toString();
    wake();
  });
  child.stderr!.on('data', (d: Buffer) => {
    se += d.toString();
    out += d.toString();
    wake();
  });
  child.stdin!.on('error', () => {});
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  afterAll(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    stdout: () => so,
    stderr: () => se,
    output: () => out,
    write: (t) => void child.stdin!.write(t),
    endInput: () => void child.stdin!.end(),
    exited,
    waitFor(re, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        let finished = false;
        const check = () => {
          const m = out.match(re);
          if (m && !finished) {
            finished = true;
            clearTimeout(t);
            waiters.delete(check);
            resolve(m);
          }
        };
        const t = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${re}; output:\n${out.slice(-3000)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
        void exited.then((code) => {
          check();
          if (!finished) {
            finished = true;
            clearTimeout(t);
            waiters.delete(check);
            reject(new Error(`chatgpu exited (${code}) before ${re}; output:\n${out.slice(-3000)}`));
          }
        });
      });
    },
  };
}

/** Runs the command to its end (stdin: `input`, then closed). */
export async function runCli(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; input?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startCli(args, opts);
  if (opts.input !== undefined) run.write(opts.input);
  run.endInput();
  const timer = setTimeout(() => run.child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  const code = await run.exited;
  clearTimeout(timer);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}
