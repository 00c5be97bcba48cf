/**
 * Content-addressed blob storage on the local filesystem:
 * <dataDir>/blobs/<sha256[0..2]>/<sha256>. Writes stream into a temporary file while
 * hashing, then rename into place (atomic on one filesystem), so a reader never sees a
 * partial blob and a failed upload leaves nothing behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { PayloadTooLargeError, ValidationError } from '../errors.js';

export const SHA256_RE = /^[0-9a-f]{64}$/;

export class BlobStore {
  constructor(readonly root: string) {}

  pathOf(sha256: string): string {
    if (!SHA256_RE.test(sha256)) throw new ValidationError(`Not a sha256 hex digest: ${sha256.slice(0, 80)}`);
    return path.join(this.root, sha256.slice(0, 2), sha256);
  }

  async has(sha256: string): Promise<boolean> {
    try {
      await stat(this.pathOf(sha256));
      return true;
    } catch {
      return false;
    }
  }

  async size(sha256: string): Promise<number> {
    return (await stat(this.pathOf(sha256))).size;
  }

  read(sha256: string, range?: { start: number; end?: number }): Readable {
    return createReadStream(this.pathOf(sha256), range);
  }

  /**
   * Stores a stream. `expected` (when given) must match the content's sha256 or the
   * write is discarded with a ValidationError; more than `maxBytes` → PayloadTooLargeError.
   */
  async put(source: Readable, opts: { expected?: string; maxBytes: number }): Promise<{ sha256: string; size: number; created: boolean }> {
    const tmpDir = path.join(this.root, 'tmp');
    await mkdir(tmpDir, { recursive: true });
    const tmp = path.join(tmpDir, `${process.pid}-${randomBytes(8).toString('hex')}`);
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > opts.maxBytes) {
          cb(new PayloadTooLargeError(`Blob exceeds the limit of ${opts.maxBytes} bytes.`));
          return;
        }
        hash.update(chunk);
        cb(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, createWriteStream(tmp, { flags: 'wx' }));
      const sha256 = hash.digest('hex');
      if (opts.expected && opts.expected !== sha256) {
        throw new ValidationError(`Content hash mismatch: expected ${opts.expected}, got ${sha256}.`);
      }
      const dest = this.pathOf(sha256);
      await mkdir(path.dirname(dest), { recursive: true });
      const created = !(await this.has(sha256));
      await rename(tmp, dest);
      return { sha256, size, created };
    } finally {
      await rm(tmp, { force: true });
    }
  }

  async putBuffer(buf: Buffer): Promise<{ sha256: string; size: number; created: boolean }> {
    const { Readable } = await import('node:stream');
    return this.put(Readable.from([buf]), { maxBytes: Number.MAX_SAFE_INTEGER });
  }
}
