import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callControl, claimControl, controlSocketPath, type Control } from './control.js';

const dirs: string[] = [];
const held: Control[] = [];
afterEach(() => {
  for (const c of held.splice(0)) c.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const folder = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'control-'));
  dirs.push(d);
  return d;
};
const keep = (c: Control | null) => {
  if (c) held.push(c);
  return c;
};

describe('the control socket is the data folder lock', () => {
  it('of many workers claiming one folder at once, exactly one gets it', async () => {
    const dir = folder();
    const claims = await Promise.all(Array.from({ length: 8 }, () => claimControl(dir).then(keep)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    // And one claimed later is refused too.
    expect(await claimControl(dir)).toBeNull();
  });

  it('answers STARTING until the worker hands it its handlers, then the worker answers', async () => {
    const dir = folder();
    const c = keep(await claimControl(dir))!;
    expect(await callControl(dir, 'status')).toEqual({ status: 'STARTING' });
    await expect(callControl(dir, 'drain')).rejects.toThrow('the worker is still starting: try again in a moment');
    c.serve({
      pause: async () => ({ status: 'PAUSED' }),
      resume: async () => ({}),
      drain: async () => ({}),
      status: () => ({ status: 'ONLINE' }),
    });
    expect(await callControl(dir, 'status')).toEqual({ status: 'ONLINE' });
    expect(await callControl(dir, 'pause')).toEqual({ status: 'PAUSED' });
  });

  it('the socket file a worker killed outright left behind is taken', async () => {
    const dir = folder();
    const socket = controlSocketPath(dir);
    const code = `require('node:net').createServer().listen(${JSON.stringify(socket)}, () => process.kill(process.pid, 'SIGKILL'))`;
    await new Promise((r) => execFile(process.execPath, ['-e', code], r));
    expect(statSync(socket).isSocket()).toBe(true);
    expect(keep(await claimControl(dir))).not.toBeNull();
    expect(await callControl(dir, 'status')).toEqual({ status: 'STARTING' });
  });

  it('the worker gone: callControl says no worker is running there', async () => {
    const dir = folder();
    await expect(callControl(dir, 'status')).rejects.toThrow(`no worker is running with data directory ${dir}`);
  });
});
