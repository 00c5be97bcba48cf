/**
 * The PostgreSQL backend, for deployments that want one moving part: a blob's bytes are
 * BlobChunk rows of one upload (`chunkBytes` each, the last shorter), and a StoredBlob row
 * (sha256 → upload) makes them visible. put() writes the chunks while hashing, one row at a
 * time (so memory stays about one chunk), then — only when the hash matched — inserts the
 * StoredBlob row in one statement: the atomic step. A refused upload deletes its chunks; a
 * killed one leaves orphan chunks that nothing reads and sweep() deletes. Two uploads of the
 * same bytes at once: the first StoredBlob insert wins, the other deletes its chunks.
 * Reads fetch a few chunks at a time, so a range of a large blob costs what it covers.
 */
import { randomUUID } from 'node:crypto';
import { finished, Readable } from 'node:stream';
import type { Prisma } from '../../db/client.js';
import { insertBlobChunk, readBlobChunks } from '../../db/sql/blobChunks.js';
import { sweepBlobChunks } from '../../db/sql/sweepBlobChunks.js';
import {
  checkExpected,
  checkSha256,
  chunked,
  hashingMeter,
  holdEarlyFailure,
  verifyOnly,
  type BlobStore,
  type ByteRange,
  type PutOptions,
  type PutResult,
} from './blobStore.js';

/** Chunks fetched per query when reading. */
const READ_BATCH = 4;

export class PgBlobStore implements BlobStore {
  readonly kind = 'postgres' as const;
  constructor(
    private readonly prisma: Prisma,
    readonly chunkBytes: number,
  ) {}

  private async row(sha256: string) {
    return this.prisma.storedBlob.findUnique({ where: { sha256: checkSha256(sha256) } });
  }

  async stat(sha256: string): Promise<{ size: number } | null> {
    const r = await this.row(sha256);
    return r ? { size: Number(r.size) } : null;
  }

  async read(sha256: string, range?: ByteRange): Promise<Readable> {
    const r = await this.row(sha256);
    if (!r) throw new Error(`blob ${sha256} is not stored`);
    const size = Number(r.size);
    const start = range?.start ?? 0;
    const end = Math.min(range?.end ?? size - 1, size - 1);
    const { prisma } = this;
    const step = r.chunkBytes;
    async function* chunks(): AsyncGenerator<Buffer> {
      if (end < start) return;
      const last = Math.floor(end / step);
      for (let seq = Math.floor(start / step); seq <= last; seq += READ_BATCH) {
        const rows = await readBlobChunks(prisma, r!.uploadId, seq, Math.min(seq + READ_BATCH - 1, last));
        for (const c of rows) {
          const at = c.seq * step;
          const buf = Buffer.from(c.data.buffer, c.data.byteOffset, c.data.byteLength);
          yield buf.subarray(Math.max(start - at, 0), Math.min(end - at + 1, buf.length));
        }
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  async put(source: Readable, opts: PutOptions): Promise<PutResult> {
    holdEarlyFailure(source);
    if (opts.expected) {
      const existing = await this.stat(opts.expected);
      if (existing) return verifyOnly(source, { ...opts, expected: opts.expected }, existing.size);
    }
    const uploadId = randomUUID();
    const meter = hashingMeter(opts.maxBytes);
    // A body cut off without an 'end' (a client gone mid-upload) fails the put, as in pipeline().
    finished(source, (err) => err && meter.destroy(err));
    let seq = 0;
    try {
      for await (const data of chunked(source.pipe(meter), this.chunkBytes)) {
        await insertBlobChunk(this.prisma, uploadId, seq++, data);
      }
      const sha256 = meter.digest();
      checkExpected(opts.expected, sha256);
      const { count } = await this.prisma.storedBlob.createMany({
        data: [{ sha256, uploadId, size: BigInt(meter.bytes()), chunkBytes: this.chunkBytes }],
        skipDuplicates: true,
      });
      if (count === 0) await this.prisma.blobChunk.deleteMany({ where: { uploadId } });
      return { sha256, size: meter.bytes(), created: count === 1 };
    } catch (err) {
      source.resume();
      await this.prisma.blobChunk.deleteMany({ where: { uploadId } }).catch(() => undefined);
      throw err;
    }
  }

  async remove(sha256: string): Promise<void> {
    const r = await this.row(sha256);
    if (!r) return;
    await this.prisma.storedBlob.deleteMany({ where: { sha256, uploadId: r.uploadId } });
    await this.prisma.blobChunk.deleteMany({ where: { uploadId: r.uploadId } });
  }

  async sweep(olderThanMs: number): Promise<number> {
    return sweepBlobChunks(this.prisma, new Date(Date.now() - olderThanMs));
  }
}
