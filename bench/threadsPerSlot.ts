/**
 * Why a worker with several slots sets its tasks' thread counts (worker/src/threadEnv.ts): N copies
 * of a NumPy (OpenBLAS) loop started at once, as N slots would run them, with the libraries' default
 * threads (one per core each) and with threadEnv's share of the cores, alternating, R rounds; the
 * wall time until all N are done. Not part of `npm run bench` (no API involved).
 *
 *   node --import tsx bench/threadsPerSlot.ts [slots, default 2] [rounds, default 3] [iterations, default 800]
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { threadEnv } from '../worker/src/threadEnv.js';
import { round, wallMs } from './lib/stats.js';

const slots = Number(process.argv[2] ?? 2);
const rounds = Number(process.argv[3] ?? 3);
const iters = Number(process.argv[4] ?? 800);
const program = `import numpy as np\nm=np.random.default_rng(0).standard_normal((400,400))\nfor i in range(${iters}): m=np.tanh(m@m.T/400.0)\n`;

function runAll(env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = wallMs();
  return Promise.all(
    Array.from(
      { length: slots },
      () =>
        new Promise<void>((resolve, reject) => {
          const c = spawn('/usr/bin/python3', ['-c', program], { env, stdio: 'ignore' });
          c.once('error', reject);
          c.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
        }),
    ),
  ).then(() => (wallMs() - t0) / 1000);
}

const cores = os.availableParallelism();
const shared = { ...process.env, ...threadEnv(cores, slots) };
const times = { default: [] as number[], threadEnv: [] as number[] };
for (let r = 0; r < rounds; r++) {
  times.default.push(await runAll(process.env));
  times.threadEnv.push(await runAll(shared));
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`${slots} NumPy loops at once on ${cores} cores (load average ${round(os.loadavg()[0]!, 1)}):`);
console.log(`  libraries' default threads: ${times.default.map((x) => round(x, 2)).join(', ')} s (mean ${round(mean(times.default), 2)})`);
console.log(
  `  threadEnv (${shared.OMP_NUM_THREADS ?? 'default'} each):        ${times.threadEnv.map((x) => round(x, 2)).join(', ')} s (mean ${round(mean(times.threadEnv), 2)})`,
);
