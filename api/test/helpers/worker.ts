import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot, spawnProc, type Proc } from './processes.js';

export interface TestWorker extends Proc {
  dataDir: string;
  name: string;
}

/** A real `chatgpu-worker` process against a test API. */
export async function startWorker(url: string, token: string, name: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<TestWorker> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `worker-${name}-`));
  const p = spawnProc(
    process.execPath,
    [path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs'), '--server', url, '--token', token, '--name', name, '--data-dir', dataDir, ...extraArgs],
    { env: { ...process.env, ...env } },
  );
  await p.waitFor(/connected to .* as worker/, 60_000);
  return Object.assign(p, { dataDir, name });
}
