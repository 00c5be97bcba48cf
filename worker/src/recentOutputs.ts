/**
 * The outputs this worker uploaded for its last few attempts, kept as hard links (no copy) so that
 * the next task that needs one of them takes it from disk instead of downloading what it has just
 * uploaded: the evaluation that reloads the run's checkpoint is most often claimed by the worker
 * that ran the run. A 256 MiB checkpoint took 4.8 s from the evaluation's claim to its program's
 * start at load 10 on 2 cores, nearly all of it the download (bench/overhead.ts --workloads
 * checkpoint --timeline 1).
 *
 * Safe because blobs are content-addressed and a kept file never changes after it was hashed: only
 * sandboxed runs' outputs are kept (their processes are all gone when the outputs are collected),
 * the folder is the worker's own (never bound into a sandbox), and a task gets a copy, never the
 * link. Bounded: the outputs of the last KEEP_ATTEMPTS attempts whose outputs were kept; older
 * ones are removed (a link costs no space while the attempt's own folder still holds the file).
 *
 *   <dataDir>/recent-outputs/<attemptId>/<sha256>
 */
import { link, mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

export const KEEP_ATTEMPTS = 2;

export class RecentOutputs {
  private readonly root: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'recent-outputs');
  }

  /** Links `file` (an output just uploaded as `sha256`) under its attempt; a failure only means it is not kept. */
  async keep(attemptId: string, file: string, sha256: string): Promise<void> {
    if (!/^[0-9a-f]{64}$/.test(sha256) || !/^[\w-]+$/.test(attemptId)) return;
    const dir = path.join(this.root, attemptId);
    try {
      await mkdir(dir, { recursive: true });
      await link(file, path.join(dir, sha256));
    } catch {
      // Exists already (the same bytes twice), another filesystem, no permission: downloaded when needed.
    }
  }

  /** Keeps the newest KEEP_ATTEMPTS attempts' folders (by modification time) and removes the rest. */
  async prune(): Promise<void> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    const dirs = await Promise.all(
      names.map(async (n) => ({
        n,
        t: await stat(path.join(this.root, n)).then(
          (s) => s.mtimeMs,
          () => 0,
        ),
      })),
    );
    dirs.sort((a, b) => b.t - a.t);
    for (const d of dirs.slice(KEEP_ATTEMPTS)) await rm(path.join(this.root, d.n), { recursive: true, force: true }).catch(() => {});
  }

  /** A kept file with these bytes, or null. */
  async find(sha256: string): Promise<string | null> {
    if (!/^[0-9a-f]{64}$/.test(sha256)) return null;
    for (const n of await readdir(this.root).catch(() => [] as string[])) {
      const f = path.join(this.root, n, sha256);
      if (
        await stat(f).then(
          (s) => s.isFile(),
          () => false,
        )
      )
        return f;
    }
    return null;
  }
}
