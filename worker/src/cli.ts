/**
 * `chatgpu-worker` — parses arguments only; the session does the work.
 *
 *   chatgpu-worker --server URL --token TOKEN [--name NAME] [--slots N] [--data-dir DIR]
 *                  [--sandbox auto|bwrap|none] [--python PATH] [--memory-limit MiB]
 *   chatgpu-worker pause|resume|status [--data-dir DIR]
 */
import { mkdir } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { callControl, serveControl } from './control.js';
import { probeCapabilities } from './probe/probeCapabilities.js';
import { detectMemoryLimit, detectSandbox, prepareMemoryLimit, resolveSandbox, type SandboxMode } from './sandbox.js';
import { Session } from './session.js';
import { initTelemetry } from './telemetry.js';

const USAGE = `usage: chatgpu-worker --server URL --token TOKEN [--name NAME] [--slots N] [--data-dir DIR]
                      [--sandbox auto|bwrap|none] [--python PATH] [--memory-limit MiB]
       chatgpu-worker pause|resume|status [--data-dir DIR]`;

const log = {
  info: (m: string) => console.log(`${new Date().toISOString()} ${m}`),
  warn: (m: string) => console.warn(`${new Date().toISOString()} ${m}`),
};

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        server: { type: 'string', default: process.env.CHATGPU_URL ?? 'http://localhost:4000' },
        token: { type: 'string', default: process.env.CHATGPU_WORKER_TOKEN },
        name: { type: 'string' },
        slots: { type: 'string', default: '1' },
        'data-dir': { type: 'string', default: path.join(homedir(), '.chatgpu-worker') },
        sandbox: { type: 'string', default: 'auto' },
        python: { type: 'string' },
        'memory-limit': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values: v, positionals } = parsed;
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  const dataDir = path.resolve(v['data-dir']!);
  const command = positionals[0];
  if (command === 'pause' || command === 'resume' || command === 'status') {
    try {
      console.log(JSON.stringify(await callControl(dataDir, command), null, 2));
      return 0;
    } catch (err) {
      console.error((err as Error).message);
      return 1;
    }
  }
  if (command) {
    console.error(`unknown command ${command}\n${USAGE}`);
    return 2;
  }
  if (!v.token) {
    console.error(`--token is required (create one on the Workers page).\n${USAGE}`);
    return 2;
  }
  const slots = Number(v.slots);
  if (!Number.isInteger(slots) || slots < 1 || slots > 64) {
    console.error('--slots must be an integer from 1 to 64');
    return 2;
  }
  if (!['auto', 'bwrap', 'none'].includes(v.sandbox!)) {
    console.error('--sandbox must be auto, bwrap or none');
    return 2;
  }
  const memLimit = v['memory-limit'] ? Number(v['memory-limit']) : null;
  if (memLimit !== null && !(memLimit > 0)) {
    console.error('--memory-limit must be a positive number of MiB');
    return 2;
  }
  await mkdir(dataDir, { recursive: true });

  const choice = resolveSandbox(v.sandbox as SandboxMode, await detectSandbox());
  if (!choice.ok) {
    console.error(choice.error);
    return 1;
  }
  if (choice.warning) log.warn(choice.warning);
  const probe = () => probeCapabilities({ dataDir, sandbox: v.sandbox as SandboxMode, ...(v.python ? { python: v.python } : {}) });
  const caps = await probe();
  for (const e of caps.probeErrors) if (!/not found/.test(e)) log.warn(`probe: ${e}`);
  const memSupport = await detectMemoryLimit();
  const name = v.name ?? hostname();
  const telemetry = initTelemetry(process.env.SENTRY_DSN, name);
  const session: Session = new Session({
    server: v.server!,
    token: v.token,
    name,
    slots,
    dataDir,
    caps,
    sandbox: choice.sandbox,
    memoryLimit: (attemptId) => (memLimit ? prepareMemoryLimit({ limitMiB: memLimit, strategy: 'auto', support: memSupport, name: attemptId }) : null),
    log,
    refreshCaps: probe,
    ...(telemetry ? { span: (a, fn) => telemetry.span(a, session.workerId ?? '', fn) } : {}),
  });
  await session.start();
  const control = serveControl(dataDir, {
    pause: async () => ({ status: await session.setPaused(true) }),
    resume: async () => ({ status: await session.setPaused(false) }),
    status: () => ({ name: session.name, workerId: session.workerId, status: session.status, running: session.running, server: v.server }),
  });
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = async (sig: string) => {
      if (stopping) return;
      stopping = true;
      log.info(`${sig}: stopping (running tasks are handed back)…`);
      control.close();
      await session.stop();
      await telemetry?.flush();
      resolve();
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
  });
  return 0;
}
