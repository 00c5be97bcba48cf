/**
 * A PostgreSQL cluster of its own in a temporary folder, on a free port of 127.0.0.1, for
 * runs that stop and restart the database (the chaos suite's pg-restart fault, the outage
 * and restart tests) — never the machine's shared server, which other tests use. Run as
 * the `postgres` OS user when this process is root (PostgreSQL refuses to run as root).
 * A plain module (no test framework): api/test/helpers/throwawayPostgres.ts wraps it with
 * an afterAll that removes the cluster after a test file.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A free TCP port on 127.0.0.1 (bound, read and released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface ThrowawayPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  /** A fast shutdown: open connections get 57P01, new ones are refused. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster (immediate) when it runs, and deletes its folder. */
  remove(): Promise<void>;
}

export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const bin = await postgresBin();
  const root = await mkdtemp(path.join(tmpdir(), 'chatgpu-pg-'));
  const data = path.join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  await chmod(root, 0o755);
  await mkdir(data, { mode: 0o700 });
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(root, Number(stdout.trim()), Number(gid.trim()));
    await chown(data, Number(stdout.trim()), Number(gid.trim()));
  }
  const as = (cmd: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args));
  await as(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  // fsync off: a throwaway cluster, restarted on purpose; its durability is not under test.
  const opts = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const pgCtl = (...args: string[]) => as(path.join(bin, 'pg_ctl'), ['-D', data, ...args]);
  let removed = false;
  const pg: ThrowawayPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      await pgCtl('-m', 'fast', '-w', 'stop');
    },
    start: async () => {
      await pgCtl('-o', opts, '-l', path.join(root, 'postgres.log'), '-w', 'start');
    },
    remove: async () => {
      if (removed) return;
      removed = true;
      if (existsSync(path.join(data, 'postmaster.pid'))) await pgCtl('-m', 'immediate', '-w', 'stop').catch(() => {});
      await rm(root, { recursive: true, force: true });
    },
  };
  try {
    await pg.start();
  } catch (err) {
    await pg.remove();
    throw err;
  }
  return pg;
}

/** The newest installed PostgreSQL's bin folder (Debian: /usr/lib/postgresql/<major>/bin), else the PATH's. */
async function postgresBin(): Promise<string> {
  const base = '/usr/lib/postgresql';
  const majors = existsSync(base) ? (await readdir(base)).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const m of majors) if (existsSync(path.join(base, m, 'bin', 'pg_ctl'))) return path.join(base, m, 'bin');
  const { stdout } = await run('sh', ['-c', 'command -v pg_ctl']).catch(() => ({ stdout: '' }));
  if (stdout.trim()) return path.dirname(stdout.trim());
  throw new Error(
    `A throwaway PostgreSQL cluster needs PostgreSQL's server binaries (initdb, pg_ctl); none found for user ${userInfo().username}.`,
  );
}
