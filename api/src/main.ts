/**
 * `npm start`: the whole system on this machine. With no DATABASE_URL it runs on the
 * embedded PGlite in the data folder, creates the local user on first start and starts
 * one local worker (unless --no-worker). It listens on 127.0.0.1 only unless --host (or
 * HOST) says otherwise; sign-up stays closed on the embedded default unless CHATGPU_SIGNUP=open.
 */
import { mkdir } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from './config.js';
import { ensureLocalUser } from './domain/auth/localUser.js';
import { consoleLogger } from './domain/resources.js';
import { ListenError, startServer, type RunningServer, type StartOptions } from './server.js';
import { startLocalWorker, untilWorkerOnline } from './localWorker.js';
import { ensureLocalPyTorch } from './localPyTorch.js';

export const START_USAGE = `usage: npm start -- [--host ADDRESS] [--port N] [--no-worker]

  --host ADDRESS  listen on this address (default 127.0.0.1: this machine only; 0.0.0.0: every
                  network interface, so workers and browsers on other machines can connect)
  --port N        listen on this port (default 4000)
  --no-worker     do not start the local worker
Every other setting comes from the environment (README: Configuration).
`;

/** The command line's settings, as environment overrides for loadConfig. */
export function startFlags(argv: string[]): { overrides: Record<string, string>; worker: boolean; help: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'no-worker': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  return {
    overrides: { ...(values.host !== undefined ? { HOST: values.host } : {}), ...(values.port !== undefined ? { PORT: values.port } : {}) },
    worker: !values['no-worker'],
    help: !!values.help,
  };
}

/** Whether an address is this machine's loopback (reachable from this machine only). */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** What `npm start` says about who can reach it and who may sign up. */
export function exposureLines(config: Pick<Config, 'host' | 'port' | 'signUp'>): string[] {
  return [
    isLoopback(config.host)
      ? `Listening on ${config.host} only: other machines cannot connect (to let workers or browsers elsewhere in, start with --host 0.0.0.0 or HOST=0.0.0.0).`
      : `Listening on ${config.host === '0.0.0.0' || config.host === '::' ? 'every network interface' : config.host} (${config.host}): other machines that can reach this one can connect.`,
    config.signUp === 'open'
      ? 'Sign-up is open: anyone who can reach this address can create an account and submit jobs (CHATGPU_SIGNUP=closed closes it).'
      : 'Sign-up is closed: only existing accounts can log in (CHATGPU_SIGNUP=open opens it).',
  ];
}

/** `overrides` are for test entry points (e.g. an injected crash); `npm start` passes none. */
export async function main(argv: string[], overrides: Partial<Omit<StartOptions, 'config'>> = {}): Promise<void> {
  let flags: ReturnType<typeof startFlags>;
  try {
    flags = startFlags(argv);
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${START_USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (flags.help) return void process.stdout.write(START_USAGE);
  let config: Config;
  try {
    config = loadConfig(process.env, process.cwd(), flags.overrides);
  } catch (err) {
    console.error((err as Error).message);
    process.exitCode = 2;
    return;
  }
  await mkdir(config.dataDir, { recursive: true });
  let server: RunningServer;
  try {
    server = await startServer({ config, log: consoleLogger, ...overrides });
  } catch (err) {
    // One sentence (which port, what to change), not a stack trace.
    if (!(err instanceof ListenError)) throw err;
    console.error(err.message);
    process.exitCode = 1;
    return;
  }
  const shownUrl = config.publicUrl ?? `http://localhost:${server.port}`;
  console.log(`ChatGPU API and dashboard: ${shownUrl}  (GraphQL at ${shownUrl}/graphql)`);
  console.log(`Database: ${server.db.kind === 'pglite' ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL (DATABASE_URL)'}`);
  for (const line of exposureLines(config)) console.log(line);

  let stopWorker: (() => Promise<void>) | undefined;
  let workerSetup: Promise<void> | undefined;
  // Stopping is handled from here on, also while the local worker is still being set up: the stop
  // waits for that to end, then ends the worker it started.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: shutting down…`);
    await workerSetup?.catch(() => {});
    await stopWorker?.();
    await server.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  if (!config.databaseUrl) {
    const { creds, created } = await ensureLocalUser(server.resources);
    console.log(
      created
        ? `Created the local user. Log in at ${shownUrl} with ${creds.email} / ${creds.password} (also saved in ${config.dataDir}/local.json).`
        : `Local user: ${creds.email} (password in ${config.dataDir}/local.json).`,
    );
    if (flags.worker && !stopping) {
      // Jobs submitted while the local worker starts are planned for it (planner's network_capacity).
      server.resources.workerStarting = untilWorkerOnline(server.resources, 120_000);
      workerSetup = (async () => {
        await ensureLocalPyTorch({
          install: config.localWorker.installTorch,
          isRoot: process.getuid?.() === 0,
          log: (l) => console.log(l),
        });
        if (!stopping)
          stopWorker = await startLocalWorker({
            serverUrl: server.url,
            token: creds.workerToken,
            dataDir: config.dataDir,
            installSandbox: config.localWorker.installSandbox,
          });
      })();
      await workerSetup;
    }
  }
}
