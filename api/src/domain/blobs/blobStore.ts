/**
 * Content-addressed blob storage: the interface every backend implements, and the helpers
 * that every caller shares. Backends (chosen by BLOB_STORE, built by createBlobStore):
 *   fs        <dataDir>/blobs on this host's disk (the embedded default; one host only)
 *   s3        an S3-compatible object store (AWS S3, MinIO, Ceph, R2), shared by N API hosts
 *   postgres  chunked rows in the database the API already uses (one moving part)
 *
 * Guarantees, the same for all three:
 * - A blob is named by the sha256 of its bytes and never changes.
 * - put() hashes while it streams and enforces the size limit at the first byte over; a
 *   hash mismatch, an oversize body or a broken stream leaves nothing visible.
 * - Visibility is atomic: a reader sees a whole, verified blob or none (fs: rename of a
 *   temporary file; s3: PutObject / CompleteMultipartUpload only after the hash matched;
 *   postgres: one INSERT of the StoredBlob row after the chunks are written). What a killed
 *   upload leaves (a temporary file, an incomplete multipart upload, orphan chunks) is never
 *   read, and sweep() removes it.
 * - Authorization (invariant 7) is decided by the API before a byte moves: the store knows
 *   nothing of users; http/blobRoutes.ts asks domain/blobs/blobAccess.ts first.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PayloadTooLargeError, ValidationError } from '../errors.js';

export const SHA256_RE = /^[0-9a-f]{64}$/;

/** A byte range, both ends inclusive (as in HTTP `Range: bytes=start-end`). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface PutOptions {
  /** The sha256 the content must have; a mismatch is a ValidationError and nothing is kept. */
  expected?: string;
  /** More bytes than this is a PayloadTooLargeError at the first byte over; nothing is kept. */
  maxBytes: number;
}

export interface PutResult {
  sha256: string;
  size: number;
  /** False when the blob was already stored (content-addressed: the same bytes). */
  created: boolean;
}

export interface BlobStore {
  readonly kind: 'fs' | 's3' | 'postgres';
  /** The size of a stored blob, or null when there is none. */
  stat(sha256: string): Promise<{ size: number } | null>;
  /** The blob's bytes, or the inclusive `range` of them. The blob must exist (stat first). */
  read(sha256: string, range?: ByteRange): Promise<Readable>;
  put(source: Readable, opts: PutOptions): Promise<PutResult>;
  /** Removes a blob (only the unpacking of a refused archive does, for blobs it created). */
  remove(sha256: string): Promise<void>;
  /** Removes what interrupted uploads left behind that is older than `olderThanMs`; returns how many. */
  sweep(olderThanMs: number): Promise<number>;
  /**
   * A short-lived URL that serves the blob directly from the store, for a caller the API has
   * already authorized; null when the backend cannot (fs, postgres) or none is configured.
   */
  presignedUrl?(sha256: string, opts: { expiresSec: number; filename?: string }): Promise<string | null>;
  /** The file holding the blob, when the backend keeps blobs on this host's disk (fs). */
  localPath?(sha256: string): string;
}

export function checkSha256(sha256: string): string {
  if (!SHA256_RE.test(sha256)) throw new ValidationError(`Not a sha256 hex digest: ${sha256.slice(0, 80)}`);
  return sha256;
}

/** Where a blob lives under a store's root: <sha256[0..2]>/<sha256>. */
export function blobKey(sha256: string): string {
  return `${checkSha256(sha256).slice(0, 2)}/${sha256}`;
}

/**
 * The stream every backend stores from: passes bytes through, hashing them and failing at
 * the first byte over `maxBytes`. `digest()` is the sha256 once the stream has ended.
 */
export function hashingMeter(maxBytes: number): Transform & { digest(): string; bytes(): number } {
  const hash = createHash('sha256');
  let size = 0;
  let digest: string | null = null;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      if (size > maxBytes) {
        cb(new PayloadTooLargeError(`Blob exceeds the limit of ${maxBytes} bytes.`));
        return;
      }
      hash.update(chunk);
      cb(null, chunk);
    },
  });
  return Object.assign(meter, {
    digest: () => (digest ??= hash.digest('hex')),
    bytes: () => size,
  });
}

/** Throws the ValidationError every backend gives for a body whose hash is not the name it was sent under. */
export function checkExpected(expected: string | undefined, actual: string): void {
  if (expected && expected !== actual) throw new ValidationError(`Content hash mismatch: expected ${expected}, got ${actual}.`);
}

/**
 * Reads `source` to its end only to verify it (hash and size), storing nothing: the blob is
 * already stored, and content addressing says it is these bytes if the hash matches.
 */
/**
 * Call before a put's first await. A source that fails while the store is still getting ready
 * (a corrupt archive entry, a stream destroyed at once) would otherwise emit 'error' with no
 * listener: an uncaught exception that takes the whole API process down. The put still rejects
 * with that error: pipeline() and finished() see it later through `source.errored`.
 */
export function holdEarlyFailure(source: Readable): void {
  source.on('error', () => {});
}

export async function verifyOnly(source: Readable, opts: PutOptions & { expected: string }, size: number): Promise<PutResult> {
  const meter = hashingMeter(opts.maxBytes);
  await pipeline(source, meter, async (s: AsyncIterable<Buffer>) => {
    for await (const _ of s) {
      /* hashed by the meter */
    }
  });
  checkExpected(opts.expected, meter.digest());
  return { sha256: opts.expected, size, created: false };
}

export async function putBuffer(store: BlobStore, buf: Buffer): Promise<PutResult> {
  return store.put(Readable.from([buf]), { maxBytes: Number.MAX_SAFE_INTEGER });
}

/** A stored blob's whole content in memory: only for small blobs (texts, reports). */
export async function readBlobBuffer(store: BlobStore, sha256: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await store.read(sha256)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Runs `fn` with a local file holding the blob (an archive reader needs random access): the
 * fs backend's own file, else a copy in a private scratch folder removed afterwards. Scratch
 * is per call, so no API host keeps anything another host would need.
 */
export async function withBlobFile<T>(store: BlobStore, sha256: string, fn: (file: string) => Promise<T>): Promise<T> {
  if (store.localPath) return fn(store.localPath(sha256));
  const dir = await mkdtemp(path.join(tmpdir(), 'chatgpu-blob-'));
  try {
    const file = path.join(dir, `${sha256.slice(0, 16)}-${randomBytes(4).toString('hex')}`);
    await pipeline(await store.read(sha256), createWriteStream(file, { flags: 'wx' }));
    return await fn(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Regroups a stream into buffers of exactly `size` bytes (the last one shorter). Reads only
 * when asked for the next buffer, so a slow consumer slows the source (backpressure).
 */
export async function* chunked(source: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer, void, undefined> {
  let parts: Buffer[] = [];
  let have = 0;
  for await (const c of source) {
    let chunk = c;
    while (have + chunk.length >= size) {
      const take = size - have;
      parts.push(chunk.subarray(0, take));
      yield Buffer.concat(parts, size);
      parts = [];
      have = 0;
      chunk = chunk.subarray(take);
    }
    if (chunk.length) {
      parts.push(chunk);
      have += chunk.length;
    }
  }
  if (have > 0) yield Buffer.concat(parts, have);
}
