/**
 * `chatgpu-worker` — parses arguments only; the session does the work.
 *
 *   CHATGPU_WORKER_TOKEN=cgw_… chatgpu-worker --server URL [--name NAME] [--slots N] …
 *   chatgpu-worker --server URL --token-file PATH [--name NAME] [--slots N] [--data-dir DIR]
 *                  [--sandbox auto|bwrap|none|own-jobs] [--python PATH] [--memory-limit MiB|none]
 *                  [--pip-index-url URL] [--no-install] [--env-cache-mb N] [--drain-grace SEC]
 *                  [--allow-network never|downloads|always] [--download-cache-mb N]
 *                  [--simulate-accelerator VENDOR:NAME:RUNTIME[:ARCH]]   (tests and demos only)
 *   chatgpu-worker pause|resume|drain|status [--data-dir DIR]
 *
 * The token comes from a file or the environment, never necessarily from the command line:
 * a process's arguments are visible to every local user (`ps`), its environment and a
 * 0600 file only to its owner. `--token` still works but warns.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { callControl, claimControl } from './control.js';
import { cleanLeftovers } from './leftovers.js';
import { notebookSupport } from './probe/notebookSupport.js';
import { probeCapabilities } from './probe/probeCapabilities.js';
import type { Capabilities } from './probe/types.js';
import { applySimulatedAccelerator, parseSimulateAccelerator } from './probe/simulateAccelerator.js';
import { detectMemoryLimit, detectSandbox, prepareMemoryLimit, resolveSandbox, SANDBOX_MODES, type SandboxMode } from './sandbox.js';
import { Session } from './session.js';
import { DEFAULT_ENV_CACHE_MB, EnvCache } from './setupEnv.js';
import { DEFAULT_DRAIN_GRACE_SEC } from './checkpoint.js';
import { DEFAULT_DOWNLOAD_CACHE_MB, DEFAULT_NETWORK_POLICY, DownloadCache, NETWORK_POLICIES, type NetworkPolicy } from './downloadCache.js';
import { initTelemetry } from './telemetry.js';

const USAGE = `usage: chatgpu-worker --server URL (--token-file PATH | CHATGPU_WORKER_TOKEN in the environment)
                      [--name NAME] [--slots N] [--data-dir DIR]
                      [--sandbox auto|bwrap|none|own-jobs] [--python PATH] [--memory-limit MiB|none]
                      [--pip-index-url URL] [--no-install] [--env-cache-mb N] [--drain-grace SEC]
                      [--allow-network never|downloads|always] [--download-cache-mb N]
                      [--simulate-accelerator VENDOR:NAME:RUNTIME[:ARCH]]  (tests and demos only:
                          advertise e.g. nvidia:RTX-4090:cuda-12.4 or amd:RX-7900-XTX:rocm-6.1:gfx1100
                          for scheduling while the numerics run on the CPU; labelled everywhere)
       chatgpu-worker pause|resume|drain|status [--data-dir DIR]
  --sandbox: auto (default) and bwrap run every task in bubblewrap and refuse to start without it;
         none runs tasks of anyone without isolation (your explicit choice; shown as such everywhere);
         own-jobs uses bubblewrap when it works, else runs only your own jobs without it (npm start).
  drain: take the machine back: no new tasks; each running task is asked to checkpoint (SIGTERM
         and CHATGPU_DRAIN_FILE), handed back with its checkpoint and resumed on another worker;
         whatever still runs after --drain-grace seconds (default ${DEFAULT_DRAIN_GRACE_SEC}) is killed.
         Answers once the machine is free.
  --allow-network: tasks run without the network; downloads (default) gives it only to steps the
         plan marks as data downloads (their outputs cached here by URL and script, up to
         --download-cache-mb, default ${DEFAULT_DOWNLOAD_CACHE_MB}); never refuses those steps (the job stops, naming the
         URLs and this policy); always gives it to any task that asks.`;

export const TOKEN_ON_COMMAND_LINE_WARNING =
  'warning: --token puts the worker token on the command line, where other local users can read it (ps, /proc). Use --token-file PATH or the CHATGPU_WORKER_TOKEN environment variable instead.';

/**
 * The worker token: `--token-file` (first line; a file others may read gets a warning), else
 * the deprecated `--token` (with a warning), else CHATGPU_WORKER_TOKEN. The variable is
 * removed from this process's environment once read, so no child inherits it.
 */
export async function resolveToken(
  v: { token?: string | undefined; 'token-file'?: string | undefined },
  env: NodeJS.ProcessEnv,
  warn: (m: string) => void,
): Promise<{ token: string } | { error: string }> {
  const fromEnv = env.CHATGPU_WORKER_TOKEN?.trim();
  delete env.CHATGPU_WORKER_TOKEN;
  if (v['token-file'] !== undefined) {
    const file = path.resolve(v['token-file']);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      return {
        error: `--token-file ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
      };
    }
    const token = text.split(/\r?\n/)[0]!.trim();
    if (!token) return { error: `--token-file ${file} is empty (it should hold the worker token, cgw_…).` };
    if (process.platform !== 'win32' && ((await stat(file)).mode & 0o077) !== 0)
      warn(`warning: ${file} can be read by other users; chmod 600 it.`);
    return { token };
  }
  if (v.token?.trim()) {
    warn(TOKEN_ON_COMMAND_LINE_WARNING);
    return { token: v.token.trim() };
  }
  if (fromEnv) return { token: fromEnv };
  return { error: 'No worker token: pass --token-file PATH or set CHATGPU_WORKER_TOKEN (create a token on the Workers page).' };
}

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
        token: { type: 'string' },
        'token-file': { type: 'string' },
        name: { type: 'string' },
        slots: { type: 'string', default: '1' },
        'data-dir': { type: 'string', default: path.join(homedir(), '.chatgpu-worker') },
        sandbox: { type: 'string', default: 'auto' },
        python: { type: 'string' },
        'memory-limit': { type: 'string' },
        'pip-index-url': { type: 'string' },
        'no-install': { type: 'boolean' },
        'env-cache-mb': { type: 'string', default: String(DEFAULT_ENV_CACHE_MB) },
        'drain-grace': { type: 'string', default: String(DEFAULT_DRAIN_GRACE_SEC) },
        'simulate-accelerator': { type: 'string' },
        'allow-network': { type: 'string', default: DEFAULT_NETWORK_POLICY },
        'download-cache-mb': { type: 'string', default: String(DEFAULT_DOWNLOAD_CACHE_MB) },
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
  if (command === 'pause' || command === 'resume' || command === 'drain' || command === 'status') {
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
  const tok = await resolveToken(v, process.env, (m) => console.warn(m));
  if ('error' in tok) {
    console.error(`${tok.error}\n${USAGE}`);
    return 2;
  }
  const slots = Number(v.slots);
  if (!Number.isInteger(slots) || slots < 1 || slots > 64) {
    console.error('--slots must be an integer from 1 to 64');
    return 2;
  }
  if (!SANDBOX_MODES.includes(v.sandbox as SandboxMode)) {
    console.error(`--sandbox must be ${SANDBOX_MODES.join(', ')}`);
    return 2;
  }
  const memArg = v['memory-limit'];
  const memGiven = memArg === undefined || memArg === 'none' ? null : Number(memArg);
  if (memGiven !== null && !(memGiven > 0)) {
    console.error('--memory-limit must be a positive number of MiB, or none');
    return 2;
  }
  const drainGraceSec = Number(v['drain-grace']);
  if (!(drainGraceSec > 0 && drainGraceSec <= 3600)) {
    console.error('--drain-grace must be a number of seconds, more than 0 and at most 3600');
    return 2;
  }
  const envCacheMb = Number(v['env-cache-mb']);
  if (!(envCacheMb > 0)) {
    console.error('--env-cache-mb must be a positive number of MB');
    return 2;
  }
  if (!NETWORK_POLICIES.includes(v['allow-network'] as NetworkPolicy)) {
    console.error(`--allow-network must be ${NETWORK_POLICIES.join(', ')}`);
    return 2;
  }
  const networkPolicy = v['allow-network'] as NetworkPolicy;
  const downloadCacheMb = Number(v['download-cache-mb']);
  if (!(downloadCacheMb >= 0)) {
    console.error('--download-cache-mb must be a number of MB (0: no cache)');
    return 2;
  }
  const pipIndexUrl = v['pip-index-url'] ?? null;
  if (pipIndexUrl !== null && !/^https?:\/\/[^\s]+$/.test(pipIndexUrl)) {
    console.error('--pip-index-url must be an http(s) URL, e.g. https://pypi.example.org/simple');
    return 2;
  }
  const install = !v['no-install'];
  const simulated = v['simulate-accelerator'] === undefined ? null : parseSimulateAccelerator(v['simulate-accelerator']);
  if (simulated && 'error' in simulated) {
    console.error(simulated.error);
    return 2;
  }
  await mkdir(dataDir, { recursive: true });
  // One worker per data folder, taken before anything reads it: a second would take the first
  // one's runs for leftovers.
  const control = await claimControl(dataDir);
  if (!control) {
    console.error(`Another worker is running with data directory ${dataDir}: stop it first, or give this one its own --data-dir.`);
    return 1;
  }

  const choice = resolveSandbox(v.sandbox as SandboxMode, await detectSandbox());
  if (!choice.ok) {
    console.error(choice.error);
    control.close();
    return 1;
  }
  if (choice.warning) log.warn(choice.warning);
  // What a worker killed outright left behind (leftovers.ts).
  const left = cleanLeftovers(dataDir);
  if (left.removed.length)
    log.info(
      `cleaned up after ${left.removed.length} attempt(s) an earlier run of this worker left behind${left.killed.length ? ` (ended the processes of ${left.killed.length})` : ''}`,
    );
  // Advertised as decided: the capability and every attempt's sandbox are this one choice.
  const sandbox = {
    sandbox: choice.sandbox,
    ...(choice.ownJobsOnly ? { ownJobsOnly: true } : {}),
    ...(choice.sandbox === 'none' && choice.warning ? { sandboxReason: choice.warning } : {}),
  };
  const probeMachine = () =>
    probeCapabilities({ dataDir, sandbox, install, pipIndexUrl, allowNetwork: networkPolicy, ...(v.python ? { python: v.python } : {}) });
  // The per-task memory limit goes with the capabilities (set below, once it is known).
  let taskMemoryLimitMiB: number | null = null;
  const withLimit = (c: Capabilities): Capabilities => (taskMemoryLimitMiB ? { ...c, taskMemoryLimitMiB } : c);
  const probe = async () => withLimit(simulated ? applySimulatedAccelerator(await probeMachine(), simulated) : await probeMachine());
  let caps = await probe();
  if (simulated) {
    log.warn(
      `SIMULATED ACCELERATOR ${simulated.spec}: this worker advertises ${simulated.vendor === 'nvidia' ? 'an NVIDIA' : 'an AMD'} ${simulated.name} (${simulated.runtime}) for scheduling, but runs every task's numerics on the CPU (CHATGPU_DEVICE=cpu). For tests and demos only; a production API refuses it unless allowed.`,
    );
    if (!caps.workloads.some((w) => ['torch-cuda', 'torch-rocm', 'cuda-cxx', 'hip-cxx'].includes(w)))
      log.warn('simulated accelerator: this machine has neither PyTorch nor the matching compiler, so no GPU workload is advertised');
  }
  for (const e of caps.probeErrors) if (!/not found/.test(e)) log.warn(`probe: ${e}`);
  const memSupport = await detectMemoryLimit();
  // The owner's machine keeps a share of its memory: by default each slot's task may use at most
  // 80 % of the RAM divided among the slots (--memory-limit MiB to choose, none to lift it).
  const memLimit = memArg === 'none' ? null : (memGiven ?? defaultMemoryLimitMiB(caps.memoryMiB, slots));
  log.info(
    memLimit
      ? `memory limit per task: ${memLimit} MiB${memGiven ? '' : ' (80 % of RAM / slots; --memory-limit to change)'}`
      : 'no memory limit per task (--memory-limit none)',
  );
  taskMemoryLimitMiB = memLimit;
  caps = withLimit(caps);
  let envs: EnvCache | null = null;
  if (install) {
    envs = new EnvCache({ dataDir, maxBytes: envCacheMb * 2 ** 20, indexUrl: pipIndexUrl, log });
    await envs.evict().catch((err) => log.warn(`environment cache: ${(err as Error).message}`));
  }
  if (install && caps.install.enabled)
    log.info(
      `setup phase on: environments in ${envs!.root} (up to ${envCacheMb} MB), packages from ${caps.install.index ?? "pip's default index"}`,
    );
  if (install && !caps.install.enabled)
    log.warn(
      `setup phase off: ${caps.python ?? 'no Python'} cannot make a virtualenv with pip (Debian/Ubuntu: apt-get install python3-venv python3-pip); tasks that need packages go to other workers`,
    );
  log.info(
    networkPolicy === 'downloads'
      ? 'network: only for data-download steps (--allow-network downloads)'
      : networkPolicy === 'never'
        ? 'network: never (--allow-network never): data-download steps are refused'
        : 'network: for any task that asks (--allow-network always)',
  );
  const notebooks = notebookSupport(caps);
  if (notebooks) log.warn(notebooks);
  const name = v.name ?? hostname();
  const telemetry = await initTelemetry(process.env.SENTRY_DSN, name);
  const session: Session = new Session({
    server: v.server!,
    token: tok.token,
    name,
    slots,
    dataDir,
    caps,
    sandbox: choice.sandbox,
    memoryLimit: (attemptId) =>
      memLimit ? prepareMemoryLimit({ limitMiB: memLimit, strategy: 'auto', support: memSupport, name: attemptId }) : null,
    log,
    refreshCaps: probe,
    envs,
    drainGraceSec,
    networkPolicy,
    downloads: downloadCacheMb > 0 ? new DownloadCache({ dataDir, maxBytes: downloadCacheMb * 2 ** 20 }) : null,
    ...(telemetry
      ? { span: (a, fn) => telemetry.span(a, session.workerId ?? '', fn), trace: (a, e) => telemetry.trace(a, session.workerId ?? '', e) }
      : {}),
  });
  await session.start();
  control.serve({
    pause: async () => ({ status: await session.setPaused(true) }),
    resume: async () => ({ status: await session.setPaused(false) }),
    drain: () => session.drain(),
    status: () => ({
      name: session.name,
      workerId: session.workerId,
      status: session.shownStatus,
      ...(session.statusReason ? { reason: session.statusReason } : {}),
      sandbox: sandboxLabel(sandbox),
      running: session.running,
      server: v.server,
    }),
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

/** How `chatgpu-worker status` names the worker's isolation. */
export function sandboxLabel(c: { sandbox: 'bwrap' | 'none'; ownJobsOnly?: boolean }): string {
  if (c.sandbox === 'bwrap') return 'bwrap';
  return c.ownJobsOnly ? "none (no sandbox: only its owner's own jobs)" : 'none (--sandbox none: tasks of anyone run without isolation)';
}

/** The default memory limit of one task: 80 % of the machine's RAM shared among the slots (at least 1 GiB). */
export function defaultMemoryLimitMiB(memoryMiB: number | null, slots: number): number | null {
  if (!memoryMiB || memoryMiB <= 0) return null;
  return Math.max(1024, Math.floor((memoryMiB * 0.8) / Math.max(1, slots)));
}
