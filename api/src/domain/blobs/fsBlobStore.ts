/**
 * The filesystem backend (the embedded default): <root>/<sha256[0..2]>/<sha256>. Writes
 * stream into <root>/tmp/ while hashing, then rename into place (atomic on one filesystem),
 * so a reader never sees a partial blob and a failed upload leaves nothing visible. One
 * host only: another API host cannot read this disk (use s3 or postgres there).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import {
  blobKey,
  checkExpected,
  hashingMeter,
  holdEarlyFailure,
  type BlobStore,
  type ByteRange,
  type PutOptions,
  type PutResult,
} from './blobStore.js';

export class FsBlobStore implements BlobStore {
  readonly kind = 'fs' as const;
  constructor(readonly root: string) {}

  localPath(sha256: string): string {
    return path.join(this.root, blobKey(sha256));
  }

  async stat(sha256: string): Promise<{ size: number } | null> {
    try {
      return { size: (await stat(this.localPath(sha256))).size };
    } catch {
      return null;
    }
  }

  async read(sha256: string, range?: ByteRange): Promise<Readable> {
    return createReadStream(this.localPath(sha256), range);
  }

  async put(source: Readable, opts: PutOptions): Promise<PutResult> {
    holdEarlyFailure(source);
    const tmpDir = path.join(this.root, 'tmp');
    await mkdir(tmpDir, { recursive: true });
    const tmp = path.join(tmpDir, `${process.pid}-${randomBytes(8).toString('hex')}`);
    const meter = hashingMeter(opts.maxBytes);
    const out = createWriteStream(tmp, { flags: 'wx' });
    try {
      await pipeline(source, meter, out);
      const sha256 = meter.digest();
      checkExpected(opts.expected, sha256);
      const dest = this.localPath(sha256);
      await mkdir(path.dirname(dest), { recursive: true });
      const created = (await this.stat(sha256)) === null;
      await rename(tmp, dest);
      return { sha256, size: meter.bytes(), created };
    } finally {
      // A source that fails at once fails the pipeline while the file is still being opened:
      // removed only once the stream has closed, or the open creates it after the removal.
      if (!out.closed) await once(out, 'close').catch(() => {});
      await rm(tmp, { force: true });
    }
  }

  async remove(sha256: string): Promise<void> {
    await rm(this.localPath(sha256), { force: true });
  }

  /** Temporary files of uploads that a killed process never finished. */
  async sweep(olderThanMs: number): Promise<number> {
    const tmpDir = path.join(this.root, 'tmp');
    let removed = 0;
    for (const name of await readdir(tmpDir).catch(() => [] as string[])) {
      const file = path.join(tmpDir, name);
      const s = await stat(file).catch(() => null);
      if (s && Date.now() - s.mtimeMs > olderThanMs) {
        await rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }
}
