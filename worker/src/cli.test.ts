import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultMemoryLimitMiB, resolveToken, TOKEN_ON_COMMAND_LINE_WARNING } from './cli.js';

describe('resolveToken', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'cli-token-'));
  const file = async (name: string, content: string, mode = 0o600) => {
    const p = path.join(dir, name);
    await writeFile(p, content);
    await chmod(p, mode);
    return p;
  };
  const resolve = async (v: Parameters<typeof resolveToken>[0], env: NodeJS.ProcessEnv = {}) => {
    const warnings: string[] = [];
    const r = await resolveToken(v, env, (m) => warnings.push(m));
    return { r, warnings, env };
  };

  it('reads the first line of --token-file; a 0600 file gives no warning', async () => {
    expect(await resolve({ 'token-file': await file('t', 'cgw_abc\nignored\n') })).toMatchObject({ r: { token: 'cgw_abc' }, warnings: [] });
  });

  it('a token file other users can read still works, with a warning', async () => {
    const { r, warnings } = await resolve({ 'token-file': await file('open', 'cgw_open\n', 0o644) });
    expect(r).toEqual({ token: 'cgw_open' });
    expect(warnings).toEqual([expect.stringMatching(/can be read by other users; chmod 600/)]);
  });

  it('CHATGPU_WORKER_TOKEN is used and removed from the environment (children do not inherit it)', async () => {
    const { r, env } = await resolve({}, { CHATGPU_WORKER_TOKEN: ' cgw_env \n', OTHER: 'x' });
    expect(r).toEqual({ token: 'cgw_env' });
    expect(env).toEqual({ OTHER: 'x' });
  });

  it('--token works but warns that other local users can read it', async () => {
    expect(await resolve({ token: 'cgw_flag' })).toMatchObject({ r: { token: 'cgw_flag' }, warnings: [TOKEN_ON_COMMAND_LINE_WARNING] });
  });

  it('nothing, an empty file or a missing file → an error saying what to do', async () => {
    expect((await resolve({}, { CHATGPU_WORKER_TOKEN: '  ' })).r).toEqual({
      error: expect.stringMatching(/No worker token: pass --token-file PATH or set CHATGPU_WORKER_TOKEN/),
    });
    expect((await resolve({ 'token-file': await file('empty', '\n') })).r).toEqual({ error: expect.stringMatching(/is empty/) });
    expect((await resolve({ 'token-file': path.join(dir, 'nope') })).r).toEqual({ error: expect.stringMatching(/no such file/) });
  });
});

describe('defaultMemoryLimitMiB', () => {
  it('gives each slot 80 % of the RAM shared among the slots, at least 1 GiB; none when the RAM is unknown', () => {
    expect(defaultMemoryLimitMiB(24 * 1024, 1)).toBe(Math.floor(24 * 1024 * 0.8));
    expect(defaultMemoryLimitMiB(16 * 1024, 4)).toBe(3276);
    expect(defaultMemoryLimitMiB(2048, 8)).toBe(1024);
    expect(defaultMemoryLimitMiB(null, 1)).toBeNull();
  });
});
