import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot, spawnProc, type Proc } from './processes.js';

export interface TestWorker extends Proc {
  dataDir: string;
  name: string;
}

/**
 * A real `chatgpu-worker` process against a test API. The token is handed over the way a
 * contributor should: in CHATGPU_WORKER_TOKEN (default) or a 0600 file (`tokenFrom: 'file'`),
 * never in the arguments.
 */
export async function startWorker(
  url: string,
  token: string,
  name: string,
  extraArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
  /** root: the checkout whose worker/ runs (default: this one), e.g. a copy under /tmp. */
  opts: { tokenFrom?: 'env' | 'file'; root?: string } = {},
): Promise<TestWorker> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `worker-${name}-`));
  const tokenArgs: string[] = [];
  const tokenEnv: NodeJS.ProcessEnv = {};
  if (opts.tokenFrom === 'file') {
    const file = path.join(dataDir, 'token');
    await writeFile(file, `${token}\n`, { mode: 0o600 });
    tokenArgs.push('--token-file', file);
  } else tokenEnv.CHATGPU_WORKER_TOKEN = token;
  const p = spawnProc(
    process.execPath,
    [
      path.join(opts.root ?? repoRoot, 'worker/bin/chatgpu-worker.mjs'),
      '--server',
      url,
      ...tokenArgs,
      '--name',
      name,
      '--data-dir',
      dataDir,
      ...extraArgs,
    ],
    { env: { ...process.env, ...tokenEnv, ...env } },
  );
  await p.waitFor(/connected to .* as worker/, 60_000);
  return Object.assign(p, { dataDir, name });
}
