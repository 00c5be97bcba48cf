import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_META, CheckpointWatcher, type SavedCheckpoint } from './checkpoint.js';

/** What a program's save writes: its state, then the step beside it (two files, not one atomic set). */
function save(dir: string, epoch: number) {
  writeFileSync(path.join(dir, 'checkpoint', 'ckpt.json'), JSON.stringify({ epoch }));
  writeFileSync(path.join(dir, 'checkpoint', CHECKPOINT_META), JSON.stringify({ step: epoch }));
}

/**
 * A watcher over `dir/checkpoint` whose upload reads the state file of the folder it is given and
 * meanwhile runs `during` (the program saving again while a slow upload is under way).
 */
function watcher(
  dir: string,
  during: { fn: (() => void) | null; each?: boolean },
  copy: (from: string, to: string) => void = (from, to) => cpSync(from, to, { recursive: true }),
) {
  const saved: { step: number | null; epoch: number }[] = [];
  const snap = path.join(dir, '..', `${path.basename(dir)}-snapshot`);
  const w = new CheckpointWatcher({
    dir,
    rel: 'checkpoint',
    collect: async (root) => {
      const epoch = (JSON.parse(readFileSync(path.join(root, 'checkpoint', 'ckpt.json'), 'utf8')) as { epoch: number }).epoch;
      during.fn?.();
      if (!during.each) during.fn = null;
      return [{ path: 'checkpoint/ckpt.json', sha256: `epoch-${epoch}`, mode: 0o644 }];
    },
    snapshot: async () => {
      rmSync(snap, { recursive: true, force: true });
      copy(path.join(dir, 'checkpoint'), path.join(snap, 'checkpoint'));
      return snap;
    },
    save: async (cp: SavedCheckpoint) => void saved.push({ step: cp.step, epoch: Number(cp.files[0]!.sha256.split('-')[1]) }),
    note: () => {},
  });
  return { w, saved };
}

const tick = () => new Promise((r) => setTimeout(r, 20)); // distinct mtimes

describe('CheckpointWatcher', () => {
  it('never labels files with a step they do not hold: a save during the upload leaves the upload of the copy whole; the next polls send the newer one', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ckpt-'));
    mkdirSync(path.join(dir, 'checkpoint'));
    const during: { fn: (() => void) | null } = { fn: null };
    const { w, saved } = watcher(dir, during);
    await w.start(60_000); // the starting state is read before the program saves
    save(dir, 4);
    await w.poll(); // changed since start: not stable yet
    await tick();
    during.fn = () => save(dir, 6);
    await w.poll(); // stable: the copy holds epoch 4, sent as step 4 while epoch 6 is written
    expect(saved).toEqual([{ step: 4, epoch: 4 }]);
    await w.poll(); // changed since: not stable yet
    await w.poll(); // stayed at epoch 6: sent, files and step agreeing
    expect(saved).toEqual([
      { step: 4, epoch: 4 },
      { step: 6, epoch: 6 },
    ]);
    expect(w.latest?.step).toBe(6);
    await w.stop();
  });

  it('a program that saves during every upload still gets its checkpoints uploaded (it used to get none)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ckpt-'));
    mkdirSync(path.join(dir, 'checkpoint'));
    let epoch = 1;
    const during: { fn: (() => void) | null; each: boolean } = { fn: null, each: true };
    const { w, saved } = watcher(dir, during);
    await w.start(60_000);
    save(dir, epoch);
    await w.poll();
    await tick();
    during.fn = () => save(dir, ++epoch);
    for (let i = 0; i < 6; i++) {
      await w.poll();
      await tick();
    }
    expect(saved.length).toBeGreaterThanOrEqual(2);
    for (const s of saved) expect(s.step).toBe(s.epoch);
    await w.stop();
  });

  it('a save during the copy is not sent: the folder is checked again after it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ckpt-'));
    mkdirSync(path.join(dir, 'checkpoint'));
    let racing = false;
    const { w, saved } = watcher(dir, { fn: null }, (from, to) => {
      cpSync(from, to, { recursive: true });
      if (racing) save(dir, 9); // the program saves while the copy is taken
      racing = false;
    });
    await w.start(60_000);
    save(dir, 8);
    await w.poll();
    await tick();
    racing = true;
    await w.poll(); // the copy raced a save: nothing sent
    expect(saved).toEqual([]);
    await w.poll(); // stayed at epoch 9
    expect(saved).toEqual([{ step: 9, epoch: 9 }]);
    await w.stop();
  });
});
