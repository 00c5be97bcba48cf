/**
 * `npm start` installs what the local worker needs from Debian's packages when it runs as root
 * with apt (a fresh Debian/Ubuntu box, a container): `apt-get update` then `install`, each
 * package's progress as one line, never apt's whole output.
 */
import { spawn } from 'node:child_process';

/** apt-get update, then install `packages`; apt-get's exit status (127: it could not be started). */
export async function aptInstall(aptGet: string, packages: readonly string[], log: (line: string) => void): Promise<number> {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = await runAptGet(aptGet, ['update', '-q'], env, log);
  return update === 0 ? runAptGet(aptGet, ['install', '-y', '-q', '--no-install-recommends', ...packages], env, log) : update;
}

/** Runs apt-get, turning its package lines into one progress line each. */
function runAptGet(aptGet: string, args: string[], env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(aptGet, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let rest = '';
    const onData = (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (/^(Setting up|Unpacking|E:) /.test(line)) log(`  apt-get: ${line.trim()}`);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', () => resolve(127));
    child.once('close', (code) => resolve(code ?? 1));
  });
}
