/**
 * Concurrent attempts of a root worker run as different uids (taskUserForSlot), so the pids limit
 * (RLIMIT_NPROC, counted per uid by the kernel) is each attempt's own: an attempt that forks up to
 * its limit does not stop another from starting processes. Real bwrap, real processes; the control
 * (both attempts as one uid) shows the test would catch a shared budget. Root only: an ordinary-user
 * worker sets no pids limit (sandbox.ts), so there is nothing to share there.
 */
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  buildSandboxedCommand,
  HELPERS_DIR,
  SLOT_UID_BASE,
  spawnSandboxed,
  TASK_DIR,
  taskUserForSlot,
  TASK_USER,
  writeIdentityFiles,
} from './sandbox.js';

const HELPERS = fileURLToPath(new URL('../python', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'chatgpu-slots-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const LIMIT = 48;

/** Starts `script` in the sandbox as `user` with the pids limit; resolves with its output when it exits. */
function start(name: string, user: { uid: number; gid: number }, script: string) {
  const work = join(root, name);
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'task.py'), script);
  for (const p of [work, join(work, 'task.py')]) chownSync(p, user.uid, user.gid);
  const identity = writeIdentityFiles(join(root, `etc-${name}`), user);
  const c = buildSandboxedCommand({
    sandbox: 'bwrap',
    command: ['/usr/bin/python3', 'task.py'],
    workDir: work,
    env: { PATH: '/usr/bin:/bin', HOME: TASK_DIR, PYTHONPATH: HELPERS_DIR },
    helpersDir: HELPERS,
    runAs: user,
    identityFiles: identity,
    pidsLimit: LIMIT,
  });
  const child = spawnSandboxed(c);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const done = new Promise<string>((r) => child.on('close', () => r(out)));
  return { work, done };
}

// Forks until refused, says how many it holds (and writes "full"), holds them 8 s, then exits.
const HOG = `
import os, time
held = []
try:
    for _ in range(400):
        pid = os.fork()
        if pid == 0:
            time.sleep(8)
            os._exit(0)
        held.append(pid)
except BlockingIOError:
    pass
print("holding", len(held), flush=True)
open("full", "w").write("x")
for p in held:
    os.waitpid(p, 0)
`;
// Starts 10 processes and reports whether it could.
const WORK = `
import os
try:
    kids = []
    for _ in range(10):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        kids.append(pid)
    for p in kids:
        os.waitpid(p, 0)
    print("FORKED 10", flush=True)
except BlockingIOError as e:
    print("REFUSED", e, flush=True)
`;

async function whileHogged(hogUser: { uid: number; gid: number }, workUser: { uid: number; gid: number }, tag: string) {
  const hog = start(`hog-${tag}`, hogUser, HOG);
  for (let i = 0; i < 300 && !existsSync(join(hog.work, 'full')); i++) await new Promise((r) => setTimeout(r, 50));
  expect(existsSync(join(hog.work, 'full'))).toBe(true);
  const other = await start(`work-${tag}`, workUser, WORK).done;
  const hogOut = await hog.done;
  return { hogOut, other };
}

const isRoot = process.getuid?.() === 0;

describe('one uid per slot', () => {
  it('slots map to distinct unprivileged uids for a root worker (slot 0 is nobody); an ordinary-user worker runs tasks as itself', () => {
    if (!isRoot) {
      expect([0, 3].map((s) => taskUserForSlot(s))).toEqual([null, null]);
      return;
    }
    expect(taskUserForSlot(0)).toEqual(TASK_USER);
    expect(taskUserForSlot(1)).toEqual({ uid: SLOT_UID_BASE + 1, gid: TASK_USER.gid });
    expect(new Set([0, 1, 2, 3].map((s) => taskUserForSlot(s)!.uid)).size).toBe(4);
  });

  it(
    'an attempt at its pids limit does not stop another slot’s attempt from forking; on one shared uid it would',
    { timeout: 60_000 },
    async () => {
      if (!isRoot) {
        // Without root there are no slot uids and no pids limit at all (sandbox.ts): nothing is shared.
        console.log('not root: slot uids and the pids limit apply to root workers only; nothing to share here');
        expect(taskUserForSlot(1)).toBeNull();
        return;
      }
      const separate = await whileHogged(taskUserForSlot(0)!, taskUserForSlot(1)!, 'separate');
      expect(separate.hogOut).toMatch(/holding \d+/);
      expect(separate.other).toMatch(/FORKED 10/);
      const shared = await whileHogged(taskUserForSlot(0)!, taskUserForSlot(0)!, 'shared');
      expect(shared.other).toMatch(/REFUSED/);
    },
  );
});
