/**
 * `npm start` on a fresh machine: the local worker isolates every task in bubblewrap, so it is
 * installed before the worker starts, the way PyTorch is (localPyTorch.ts): as root with apt,
 * Debian's bubblewrap once, with a progress line; otherwise one sentence saying what to install.
 * Without it the local worker still starts (`--sandbox own-jobs`), but runs only the local user's
 * own jobs and never another user's (the claim reads its capability ownJobsOnly), and their job
 * pages say they ran without a sandbox.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { aptInstall } from './aptGet.js';

export const SANDBOX_PACKAGES = ['bubblewrap'];

export type SandboxPlan = 'present' | 'install' | 'explain';

/** The decision alone: install only as root, with apt, on Linux, when allowed and missing. */
export function sandboxPlan(o: {
  found: boolean;
  install: 'auto' | 'never';
  isRoot: boolean;
  hasApt: boolean;
  platform: NodeJS.Platform;
}): SandboxPlan {
  if (o.found) return 'present';
  return o.platform === 'linux' && o.install === 'auto' && o.isRoot && o.hasApt ? 'install' : 'explain';
}

export interface SandboxCheck {
  /** present: bwrap runs; installed: now it does; explained / failed: the worker runs without it (own jobs only). */
  outcome: 'present' | 'installed' | 'explained' | 'failed';
  /** "bubblewrap 0.8.0" when bwrap runs */
  version: string | null;
  /** The sentence shown to the person starting it (null when there is nothing to say). */
  message: string | null;
}

/** `bwrap --version`'s first line, or null when it does not run. */
export function bwrapVersion(bwrap: string, pathEnv?: string): Promise<string | null> {
  return new Promise((resolve) => {
    const env = pathEnv === undefined ? process.env : { ...process.env, PATH: pathEnv };
    execFile(bwrap, ['--version'], { timeout: 10_000, env }, (err, stdout) =>
      resolve(err ? null : String(stdout).trim().split('\n')[0] || null),
    );
  });
}

export async function ensureLocalSandbox(opts: {
  install: 'auto' | 'never';
  isRoot: boolean;
  log: (line: string) => void;
  /** apt-get's path (tests pass a stand-in) */
  aptGet?: string;
  /** the sandbox binary looked for; default bwrap on `pathEnv` */
  bwrap?: string;
  /** the PATH the worker will have (default this process's) */
  pathEnv?: string | undefined;
  platform?: NodeJS.Platform;
}): Promise<SandboxCheck> {
  const bwrap = opts.bwrap ?? 'bwrap';
  const aptGet = opts.aptGet ?? '/usr/bin/apt-get';
  const platform = opts.platform ?? process.platform;
  const found = await bwrapVersion(bwrap, opts.pathEnv);
  const plan = sandboxPlan({ found: found !== null, install: opts.install, isRoot: opts.isRoot, hasApt: existsSync(aptGet), platform });
  if (plan === 'present') return { outcome: 'present', version: found, message: null };
  const without = (who: string) =>
    `so ${who} runs only your own jobs, as plain processes with your user's access, and takes no other user's`;
  if (plan === 'explain') {
    const what =
      platform === 'linux'
        ? `install it (Debian/Ubuntu: \`sudo apt-get install ${SANDBOX_PACKAGES.join(' ')}\`; Fedora: \`sudo dnf install bubblewrap\`) and start again to isolate them`
        : 'there is no sandbox for this system (bubblewrap is Linux-only)';
    const message = `The local worker has no sandbox (bubblewrap is not installed), ${without('it')}: ${what}.`;
    opts.log(message);
    return { outcome: 'explained', version: null, message };
  }
  opts.log(
    `The local worker's sandbox is missing: installing Debian's ${SANDBOX_PACKAGES.join(' ')} (once, under 1 MB; CHATGPU_INSTALL_SANDBOX=never skips this)…`,
  );
  const code = await aptInstall(aptGet, SANDBOX_PACKAGES, opts.log);
  const after = await bwrapVersion(bwrap, opts.pathEnv);
  if (code === 0 && after) {
    const message = `Installed ${after}: the local worker runs every task in its sandbox.`;
    opts.log(message);
    return { outcome: 'installed', version: after, message };
  }
  const message = `Installing bubblewrap failed (apt-get exited ${code}), ${without('the local worker')}: install it (\`sudo apt-get install ${SANDBOX_PACKAGES.join(' ')}\`) and start again to isolate them.`;
  opts.log(message);
  return { outcome: 'failed', version: null, message };
}
