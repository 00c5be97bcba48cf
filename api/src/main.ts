/**
 * `npm start`: the whole system on this machine. With no DATABASE_URL it runs on the
 * embedded PGlite in the data folder, creates the local user on first start and starts
 * one local worker (unless --no-worker).
 */
import { mkdir } from 'node:fs/promises';
import { loadConfig } from './config.js';
import { ensureLocalUser } from './domain/auth/localUser.js';
import { consoleLogger } from './domain/resources.js';
import { startServer, type StartOptions } from './server.js';
import { startLocalWorker } from './localWorker.js';
import { ensureLocalPyTorch } from './localPyTorch.js';

/** `overrides` are for test entry points (e.g. an injected crash); `npm start` passes none. */
export async function main(argv: string[], overrides: Partial<Omit<StartOptions, 'config'>> = {}): Promise<void> {
  const config = loadConfig();
  await mkdir(config.dataDir, { recursive: true });
  const server = await startServer({ config, log: consoleLogger, ...overrides });
  const shownUrl = config.publicUrl ?? `http://localhost:${server.port}`;
  console.log(`ChatGPU API and dashboard: ${shownUrl}  (GraphQL at ${shownUrl}/graphql)`);
  console.log(`Database: ${server.db.kind === 'pglite' ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL (DATABASE_URL)'}`);

  let stopWorker: (() => Promise<void>) | undefined;
  if (!config.databaseUrl) {
    const { creds, created } = await ensureLocalUser(server.resources);
    console.log(
      created
        ? `Created the local user. Log in at ${shownUrl} with ${creds.email} / ${creds.password} (also saved in ${config.dataDir}/local.json).`
        : `Local user: ${creds.email} (password in ${config.dataDir}/local.json).`,
    );
    if (!argv.includes('--no-worker')) {
      await ensureLocalPyTorch({ install: config.localWorker.installTorch, isRoot: process.getuid?.() === 0, log: (l) => console.log(l) });
      stopWorker = await startLocalWorker({ serverUrl: `http://127.0.0.1:${server.port}`, token: creds.workerToken, dataDir: config.dataDir });
    }
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: shutting down…`);
    await stopWorker?.();
    await server.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
