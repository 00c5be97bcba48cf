/**
 * Downloads a job's outputs while its validation runs. Once the job is VALIDATING its run's
 * outputs are final and readable (Job.outputs lists the succeeded run's files; the evaluation
 * may add its own), but the CLI used to start downloading only when the job ended — the
 * user waited for the evaluation and then for the transfer. Now each output blob known at
 * VALIDATING is fetched into a staging folder inside the output folder, one at a time, while
 * the evaluation runs; at the end `take` moves a staged blob to its path (a rename: same
 * folder tree) and downloadResults fetches only what was not staged (the evaluation's files, a
 * result the trust check replaced). Whatever the job's outcome, the staging folder is removed.
 *
 * Staged files are named by their sha256 (downloadBlob checks the bytes against it), so a file
 * listed under two paths is fetched once and copied.
 */
import { copyFile, mkdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ApiClient } from './apiClient.js';

/** The staging folder, inside the output folder so that a staged file is renamed into place. */
export const PREFETCH_DIR = '.chatgpu-prefetch';

const OUTPUTS = /* GraphQL */ `
  query CliJobOutputs($id: ID!) {
    job(id: $id) {
      id
      outputs {
        sha256
        size
      }
    }
  }
`;

export class OutputPrefetch {
  private readonly dir: string;
  /** sha256 → its download (true: staged). */
  private readonly staged = new Map<string, Promise<boolean>>();
  /** sha256 → where its staged file went (a second path of the same blob is copied from there). */
  private readonly placed = new Map<string, string>();
  /** The listing (resolves once every listed blob is in `staged`), then the downloads, one after another. */
  private listing: Promise<void> = Promise.resolve();
  private downloads: Promise<void> = Promise.resolve();
  private started = false;
  private closed = false;

  constructor(
    private readonly client: ApiClient,
    private readonly jobId: string,
    outDir: string,
  ) {
    this.dir = path.join(path.resolve(outDir), PREFETCH_DIR);
  }

  /** Lists the job's outputs now and downloads each one in turn (once; later calls do nothing). */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.listing = (async () => {
      const outputs = await this.client
        .gql<{ job: { outputs: { sha256: string }[] } | null }>(OUTPUTS, { id: this.jobId })
        .then((d) => d.job?.outputs ?? [])
        .catch(() => []);
      const todo: [string, (ok: boolean) => void][] = [];
      for (const { sha256 } of outputs) {
        if (this.staged.has(sha256) || !/^[0-9a-f]{64}$/.test(sha256)) continue;
        this.staged.set(sha256, new Promise<boolean>((resolve) => todo.push([sha256, resolve])));
      }
      this.downloads = (async () => {
        if (todo.length) await mkdir(this.dir, { recursive: true }).catch(() => {});
        for (const [sha256, resolve] of todo) {
          if (this.closed) {
            resolve(false);
            continue;
          }
          // A failure here is not reported: the final pass downloads the file again and says what it finds.
          resolve(
            await this.client.downloadBlob(sha256, this.file(sha256)).then(
              () => true,
              () => false,
            ),
          );
        }
      })();
    })();
  }

  private file(sha256: string): string {
    return path.join(this.dir, sha256);
  }

  /**
   * Puts the blob at `target` from what was prefetched (waiting for its download when it is
   * under way): its size, or null when it was not prefetched (the caller downloads it).
   */
  async take(sha256: string, target: string): Promise<number | null> {
    await this.listing; // every blob it found is in `staged`
    const done = this.staged.get(sha256);
    if (!done || !(await done)) return null;
    const earlier = this.placed.get(sha256);
    try {
      if (earlier) await copyFile(earlier, target);
      else await rename(this.file(sha256), target);
    } catch {
      return null;
    }
    this.placed.set(sha256, target);
    return (await stat(target)).size;
  }

  /** Stops queueing, waits for the download under way, and removes what was staged but not taken. */
  async close(): Promise<void> {
    this.closed = true;
    await this.listing;
    await this.downloads;
    for (const sha of this.staged.keys()) await rm(this.file(sha), { force: true }).catch(() => {});
    // Only this folder's own staged files were removed: an output of the same name would stay.
    await rmdir(this.dir).catch(() => {});
  }
}
