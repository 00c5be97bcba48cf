/**
 * `npm start` is local by default: it listens on 127.0.0.1 only (another address of this
 * machine is refused), sign-up is closed on the embedded default, a port already in use is
 * one sentence, and --host / CHATGPU_SIGNUP=open open them — each said when it starts.
 */
import { mkdtemp } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resumeMessage } from '../src/scheduler/tick.js';
import { freePort, repoRoot, spawnProc, type Proc } from './helpers/processes.js';

const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) =>
      !['DATABASE_URL', 'CHATGPU_DATA_DIR', 'PORT', 'HOST', 'CHATGPU_SIGNUP', 'TEST_DATABASE_URL'].includes(k) && !k.startsWith('VITEST'),
  ),
);

/** Whether a TCP connection to host:port is accepted ('connected') or what refused it. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const t = setTimeout(() => {
      s.destroy();
      resolve('timeout');
    }, 3000);
    s.once('connect', () => {
      clearTimeout(t);
      s.end();
      resolve('connected');
    });
    s.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(t);
      resolve(err.code ?? err.message);
    });
  });
}

/** Another IPv4 address of this machine that is not loopback (none in some containers). */
const otherAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

async function signUp(port: number, email: string) {
  const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation($i: SignUpInput!) { signUp(input: $i) { __typename ... on AuthPayload { token } } }',
      variables: { i: { email, password: 'correct horse battery' } },
    }),
  });
  return (await res.json()) as {
    data?: { signUp: { __typename: string; token?: string } | null } | null;
    errors?: { message: string; extensions?: { code?: string } }[];
  };
}

const start = (cwd: string, args: string[], env: Record<string, string>): Proc =>
  spawnProc(process.execPath, [path.join(repoRoot, 'scripts/start.mjs'), '--no-worker', ...args], { cwd, env: { ...cleanEnv, ...env } });

describe('npm start is local by default', () => {
  it('listens on 127.0.0.1 only, refuses sign-up, says both; a second start on the same port is one sentence', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'chatgpu-local-'));
    const port = await freePort();
    const first = start(cwd, [], { PORT: String(port) });
    await first.waitFor(/Created the local user/, 120_000);
    expect(first.output()).toContain(
      'Listening on 127.0.0.1 only: other machines cannot connect (to let workers or browsers elsewhere in, start with --host 0.0.0.0 or HOST=0.0.0.0).',
    );
    expect(first.output()).toContain('Sign-up is closed: only existing accounts can log in (CHATGPU_SIGNUP=open opens it).');

    expect(await tryConnect('127.0.0.1', port)).toBe('connected');
    // 127.0.0.2 is this machine too, but not the address the API listens on.
    expect(await tryConnect('127.0.0.2', port)).toBe('ECONNREFUSED');
    if (otherAddress) expect(await tryConnect(otherAddress, port)).toBe('ECONNREFUSED');

    const refused = await signUp(port, 'stranger@example.com');
    expect(refused.data?.signUp ?? null).toBeNull();
    expect(refused.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^Sign-up is closed on this server: only its existing accounts can log in .*CHATGPU_SIGNUP=open/),
        extensions: { code: 'FORBIDDEN' },
      }),
    ]);

    // A second `npm start` while the first runs: the port and the option, nothing else.
    const second = start(await mkdtemp(path.join(tmpdir(), 'chatgpu-local-2-')), [], { PORT: String(port) });
    const code = await new Promise<number | null>((r) => second.child.once('exit', (c) => r(c)));
    expect(code, second.output()).toBe(1);
    const lines = second.output().trim().split('\n');
    expect(lines.at(-1)).toBe(
      `Port ${port} on 127.0.0.1 is already in use (ChatGPU or another program is listening there): stop that program, or start it on another one with --port N (or PORT=N).`,
    );
    expect(second.output()).not.toMatch(/EADDRINUSE|\n\s+at /);
    expect(await tryConnect('127.0.0.1', port)).toBe('connected'); // the first one is untouched
    expect(await first.stop('SIGTERM')).toBe(0);

    // A normal restart, longer after the stop than the scheduler's outage gap (10 s): no word of an outage.
    await new Promise((r) => setTimeout(r, 11_000));
    const restarted = start(cwd, [], { PORT: String(port) });
    await restarted.waitFor(/Local user: /, 120_000);
    expect(restarted.output()).not.toMatch(/outage|no scheduler tick/i);
    expect(await restarted.stop('SIGTERM')).toBe(0);
  }, 300_000);

  it('--host 0.0.0.0 and CHATGPU_SIGNUP=open open both, and say so', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'chatgpu-open-'));
    const port = await freePort();
    const p = start(cwd, ['--host', '0.0.0.0'], { PORT: String(port), CHATGPU_SIGNUP: 'open' });
    await p.waitFor(/Created the local user/, 120_000);
    expect(p.output()).toContain('Listening on every network interface (0.0.0.0): other machines that can reach this one can connect.');
    expect(p.output()).toContain('Sign-up is open: anyone who can reach this address can create an account and submit jobs');
    expect(await tryConnect('127.0.0.2', port)).toBe('connected');
    if (otherAddress) expect(await tryConnect(otherAddress, port)).toBe('connected');
    const made = await signUp(port, 'friend@example.com');
    expect(made.errors).toBeUndefined();
    expect(made.data?.signUp).toMatchObject({ __typename: 'AuthPayload', token: expect.any(String) });
    expect(await p.stop('SIGTERM')).toBe(0);
  }, 300_000);

  it('`chatgpu start` on a port another program holds: the same sentence and exit code 1', async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const port = (holder.address() as AddressInfo).port;
    try {
      const cwd = await mkdtemp(path.join(tmpdir(), 'chatgpu-cli-start-'));
      const p = spawnProc(process.execPath, [path.join(repoRoot, 'api/bin/chatgpu.mjs'), 'start', '--no-worker', '--port', String(port)], {
        cwd,
        env: cleanEnv,
      });
      expect(await new Promise<number | null>((r) => p.child.once('exit', (c) => r(c))), p.output()).toBe(1);
      expect(p.output().trim().split('\n').at(-1)).toBe(
        `Port ${port} on 127.0.0.1 is already in use (ChatGPU or another program is listening there): stop that program, or start it on another one with --port N (or PORT=N).`,
      );
    } finally {
      await new Promise((r) => holder.close(r));
    }
  }, 120_000);

  it('a bad --port or an unknown flag is a usage error, not a stack trace', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'chatgpu-flags-'));
    const bad = start(cwd, ['--bogus'], {});
    const code = await new Promise<number | null>((r) => bad.child.once('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(bad.output()).toMatch(/Unknown option '--bogus'[\s\S]*usage: npm start -- \[--host ADDRESS\] \[--port N\] \[--no-worker\]/);
    expect(bad.output()).not.toMatch(/\n\s+at /);
    const port = start(cwd, ['--port', 'abc'], {});
    expect(await new Promise<number | null>((r) => port.child.once('exit', (c) => r(c)))).toBe(2);
    expect(port.output().trim().split('\n').at(-1)).toMatch(/^Invalid configuration: PORT: /);
    expect(port.output()).not.toMatch(/\n\s+at /);
  }, 120_000);
});

describe('a restart is not an outage', () => {
  it('says nothing when no lease needed resuming, and never calls the gap an outage', () => {
    expect(resumeMessage({ resumed: 0, outageMs: null })).toBeNull();
    expect(resumeMessage({ resumed: 0, outageMs: 1_222_000 })).toBeNull(); // a stop and a start 20 min later
    expect(resumeMessage({ resumed: 1, outageMs: 1_222_000 })).toBe(
      'No API process ran for 20 min (stopped or restarted): 1 running attempt whose lease ran out meanwhile gets a fresh lease, so its worker can report it when it reconnects.',
    );
    expect(resumeMessage({ resumed: 3, outageMs: 45_000 })).toBe(
      'No API process ran for 45 s (stopped or restarted): 3 running attempts whose lease ran out meanwhile get a fresh lease, so their workers can report them when they reconnect.',
    );
  });
});
