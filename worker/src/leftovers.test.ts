import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanLeftovers, processStartTime, trackRun, untrackRun } from './leftovers.js';

const root = mkdtempSync(path.join(tmpdir(), 'chatgpu-leftovers-'));
const started: number[] = [];
afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  rmSync(root, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const until = async (ok: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return ok();
};

/** A program like the runner's: detached (its own group), with a background child that outlives it unless killed. */
function program(script: string) {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  started.push(child.pid!);
  const firstLine = new Promise<number>((resolve) =>
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim().split('\n')[0]))),
  );
  return { child, background: firstLine };
}

describe('leftovers', () => {
  it('what a program left in its process group ends when the program does', async () => {
    const dataDir = mkdtempSync(path.join(root, 'w-'));
    const { child, background } = program('sleep 300 >/dev/null 2>&1 & echo $!; sleep 0.3');
    trackRun(dataDir, 'a1', child);
    const bg = await background;
    expect(alive(bg)).toBe(true);
    expect(readdirSync(path.join(dataDir, 'runs'))).toEqual(['a1.json']);
    await new Promise((r) => child.once('exit', r));
    expect(await until(() => !alive(bg))).toBe(true);
    untrackRun(dataDir, 'a1', child.pid);
    expect(readdirSync(path.join(dataDir, 'runs'))).toEqual([]);
  });

  it('after a worker was killed: the recorded groups are killed, their records, run folders and all spool files removed', async () => {
    const dataDir = mkdtempSync(path.join(root, 'w-'));
    const { child, background } = program('sleep 300 >/dev/null 2>&1 & echo $!; exec sleep 300');
    // No 'exit' listener reaches it here: this stands for a worker that died without its handlers.
    trackRun(dataDir, 'crashed', child);
    const bg = await background;
    mkdirSync(path.join(dataDir, 'spool', 'crashed.checkpoint'), { recursive: true });
    writeFileSync(path.join(dataDir, 'spool', 'crashed.log'), 'frames');
    mkdirSync(path.join(dataDir, 'attempts', 'crashed'), { recursive: true });
    mkdirSync(path.join(dataDir, 'attempts', 'failed-kept'), { recursive: true });
    child.removeAllListeners('exit');

    expect(cleanLeftovers(dataDir)).toEqual({ killed: ['crashed'], removed: ['crashed'] });
    expect(await until(() => !alive(child.pid!) && !alive(bg))).toBe(true);
    expect(readdirSync(path.join(dataDir, 'spool'))).toEqual([]);
    expect(readdirSync(path.join(dataDir, 'runs'))).toEqual([]);
    // The interrupted attempt's folder goes; a failed run's folder, kept for its owner, stays.
    expect(readdirSync(path.join(dataDir, 'attempts'))).toEqual(['failed-kept']);
    // A second start finds nothing.
    expect(cleanLeftovers(dataDir)).toEqual({ killed: [], removed: [] });
  });

  it('a record whose pid now belongs to another process never signals it; a half-written record is dropped', async () => {
    const dataDir = mkdtempSync(path.join(root, 'w-'));
    const other = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    started.push(other.pid!);
    mkdirSync(path.join(dataDir, 'runs'));
    writeFileSync(
      path.join(dataDir, 'runs', 'old.json'),
      JSON.stringify({ attemptId: 'old', pid: other.pid, start: String(Number(processStartTime(other.pid!)) - 1) }),
    );
    writeFileSync(path.join(dataDir, 'runs', 'torn.json'), '{"attemptId": "to');
    expect(cleanLeftovers(dataDir)).toEqual({ killed: [], removed: ['old'] });
    expect(alive(other.pid!)).toBe(true);
    expect(existsSync(path.join(dataDir, 'runs', 'torn.json'))).toBe(false);
  });
});
