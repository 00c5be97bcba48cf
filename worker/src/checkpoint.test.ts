import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_META, CheckpointWatcher, type SavedCheckpoint } from './checkpoint.js';

/** What a program's save writes: its state, then the step beside it (two files, not one atomic set). */
function save(dir: string, epoch: number) {
  writeFileSync(path.join(dir, 'checkpoint', 'ckpt.json'), JSON.stringify({ epoch }));
  writeFileSync(path.join(dir, 'checkpoint', CHECKPOINT_META), JSON.stringify({ step: epoch }));
}

describe('CheckpointWatcher', () => {
  it('never labels files with a step they do not hold: a save during the upload is not sent; the next poll sends the newer one whole', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ckpt-'));
    mkdirSync(path.join(dir, 'checkpoint'));
    const saved: { step: number | null; epoch: number }[] = [];
    let during: (() => void) | null = null;
    const w = new CheckpointWatcher({
      dir,
      rel: 'checkpoint',
      // The upload reads the state file, and meanwhile (a slow upload) the program saves again.
      collect: async () => {
        const epoch = (JSON.parse(readFileSync(path.join(dir, 'checkpoint', 'ckpt.json'), 'utf8')) as { epoch: number }).epoch;
        during?.();
        during = null;
        return [{ path: 'checkpoint/ckpt.json', sha256: `epoch-${epoch}`, mode: 0o644 }];
      },
      save: async (cp: SavedCheckpoint) => void saved.push({ step: cp.step, epoch: Number(cp.files[0]!.sha256.split('-')[1]) }),
      note: () => {},
    });
    await w.start(60_000); // the starting state is read before the program saves
    save(dir, 4);
    await w.poll(); // changed since start: not stable yet
    await new Promise((r) => setTimeout(r, 20)); // distinct mtimes
    during = () => save(dir, 6);
    await w.poll(); // stable, uploads epoch 4 while epoch 6 is written: not sent
    expect(saved).toEqual([]);
    await w.poll(); // the folder stayed at epoch 6 since: sent, files and step agreeing
    expect(saved).toEqual([{ step: 6, epoch: 6 }]);
    expect(w.latest?.step).toBe(6);
    await w.stop();
  });
});
