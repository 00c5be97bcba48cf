/**
 * The reference side: graphile-worker's runner in a child process (graphileProcess.ts),
 * and WorkerUtils in this process to add jobs, the way an application adds them.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
import type { ApiStats } from './api.js';
import { repoRoot } from './api.js';

export interface GraphileRunner {
  utils: WorkerUtils;
  stats(): Promise<ApiStats>;
  /** Called with (i, at) when the task of the job with payload {i} starts (latency mode). */
  onStart?: (i: number, at: number) => void;
  /** Jobs still in the queue (graphile-worker deletes a job when it completes). */
  pending(): Promise<number>;
  stop(): Promise<void>;
}

export async function startGraphile(
  databaseUrl: string,
  opts: { concurrency: number; pool: number; mode: 'throughput' | 'latency' },
): Promise<GraphileRunner> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'bench/lib/graphileProcess.ts')], {
    cwd: repoRoot,
    env: { ...process.env, GW_URL: databaseUrl, GW_CONCURRENCY: String(opts.concurrency), GW_POOL: String(opts.pool), GW_MODE: opts.mode },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let statsWaiter: ((s: ApiStats) => void) | undefined;
  const runner = {} as GraphileRunner;
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('graphile-worker did not start within 60 s')), 60_000);
    child.on('message', (m: { type: string; i?: number; at?: number } & ApiStats) => {
      if (m.type === 'ready') {
        clearTimeout(t);
        resolve();
      } else if (m.type === 'start') runner.onStart?.(m.i!, m.at!);
      else if (m.type === 'cpu') statsWaiter?.(m);
    });
    void exited.then(() => reject(new Error(`graphile-worker exited (${child.exitCode ?? child.signalCode})`)));
  });
  const utils = await makeWorkerUtils({ connectionString: databaseUrl, maxPoolSize: 4 });
  const probe = new pg.Client({ connectionString: databaseUrl });
  await probe.connect();
  return Object.assign(runner, {
    utils,
    stats: () =>
      new Promise<ApiStats>((resolve) => {
        statsWaiter = resolve;
        child.send({ type: 'cpu' });
      }),
    pending: async () => Number((await probe.query<{ n: string }>('SELECT count(*) AS n FROM graphile_worker._private_jobs')).rows[0]!.n),
    async stop() {
      await probe.end();
      await utils.release();
      if (child.exitCode === null && child.signalCode === null) {
        child.send({ type: 'stop' });
        const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(t);
      }
    },
  });
}
