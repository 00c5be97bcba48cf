/**
 * Child-process entry: one real ChatGPU API (startServer) on 127.0.0.1, run as `npm start` runs
 * it — from the API's bundle (scripts/apiBundle.mjs: plain node, no tsx; the same heap setting) —
 * configured from the environment its parent (bench/lib/api.ts) gives it, with no agents (tasks
 * come from the benchmark; BENCH_MODEL=builtin: the builtin planner) and no telemetry. Its own
 * process, so the simulated workers' HTTP client work does not share its event loop and its CPU
 * use is its own.
 *
 * IPC: sends {type:'ready', url}; answers {type:'cpu'} with its process.cpuUsage() and
 * event-loop utilization; {type:'stop'} closes the server and exits.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { API_BUNDLE, tuneApiHeap } from '../../scripts/apiBundle.mjs';

tuneApiHeap();
// Built (when stale) by the parent before it starts API processes (bench/lib/api.ts startApi).
const { loadConfig, startServer, createBuiltinClient } = await import(pathToFileURL(API_BUNDLE).href);

const errors = { count: 0 };
const log = {
  info: () => {},
  warn: (m, d) => console.warn(`[api] ${m}`, d ? JSON.stringify(d) : ''),
  error: (m, d) => {
    errors.count++;
    if (errors.count <= 20) console.error(`[api] ${m}`, d ? JSON.stringify(d).slice(0, 2000) : '');
  },
};

// BENCH_API_PORT: a fixed port (the chaos benchmark restarts an API where its workers look for it).
const env = { ...process.env, PORT: process.env.BENCH_API_PORT ?? '0', HOST: '127.0.0.1' };
delete env.SENTRY_DSN;
delete env.OPENAI_API_KEY;
const config = loadConfig(env);
// BENCH_MODEL=builtin: the builtin planner plans submitted jobs (bench/shards.ts); default: no agents.
const model = process.env.BENCH_MODEL === 'builtin' ? createBuiltinClient() : null;
const server = await startServer({ config, log, webDir: null, model, scheduler: process.env.BENCH_SCHEDULER !== '0' });

const send = (m) => process.send?.(m);
send({ type: 'ready', url: server.url });

process.on('message', (m) => {
  if (m.type === 'cpu') {
    send({
      type: 'cpu',
      cpu: process.cpuUsage(),
      elu: performance.eventLoopUtilization(),
      rssMiB: process.memoryUsage().rss / 1024 ** 2,
      errors: errors.count,
    });
  } else if (m.type === 'stop') {
    void server.close().finally(() => process.exit(0));
  }
});
// The parent went away: do not linger.
process.on('disconnect', () => void server.close().finally(() => process.exit(0)));
