/**
 * Child-process entry: the reference, a graphile-worker runner (its default
 * configuration apart from concurrency and pool size) on its own database, with one
 * task `noop`. In `latency` mode the task reports the moment it starts.
 *
 * IPC: sends {type:'ready'}; in latency mode {type:'start', i, at}; answers {type:'cpu'};
 * {type:'stop'} stops the runner and exits.
 */
import { performance } from 'node:perf_hooks';
import { Logger, run } from 'graphile-worker';
import { wallMs } from './stats.js';

const send = (m: unknown) => process.send?.(m);
const latency = process.env.GW_MODE === 'latency';
let errors = 0;
const logger = new Logger(() => (level, message) => {
  if (level === 'error') {
    errors++;
    if (errors <= 20) console.error(`[graphile-worker] ${message}`);
  }
});

const runner = await run({
  connectionString: process.env.GW_URL!,
  concurrency: Number(process.env.GW_CONCURRENCY ?? 1),
  maxPoolSize: Number(process.env.GW_POOL ?? 10),
  noHandleSignals: true,
  logger,
  taskList: {
    noop: async (payload) => {
      if (latency) send({ type: 'start', i: (payload as { i: number }).i, at: wallMs() });
    },
  },
});
send({ type: 'ready' });

process.on('message', (m: { type: string }) => {
  if (m.type === 'cpu')
    send({
      type: 'cpu',
      cpu: process.cpuUsage(),
      elu: performance.eventLoopUtilization(),
      rssMiB: process.memoryUsage().rss / 1024 ** 2,
      errors,
    });
  else if (m.type === 'stop') void runner.stop().finally(() => process.exit(0));
});
process.on('disconnect', () => void runner.stop().finally(() => process.exit(0)));
