/**
 * The S3-compatible backend (AWS S3, MinIO, Ceph, R2): objects <prefix>blobs/<sha[0..2]>/<sha>,
 * shared by every API host.
 *
 * put(), by size:
 * - up to one part (partBytes): buffered, hashed, then one PutObject — after the hash matched;
 * - larger, with the expected sha256 known (every HTTP upload): a multipart upload to the final
 *   key, parts sent while the body streams (at most `queueSize` in flight, so memory stays
 *   about (queueSize + 1) × partBytes whatever the blob's size), completed only when the hash
 *   matched; otherwise aborted. An incomplete multipart upload is not an object: nothing is
 *   visible until CompleteMultipartUpload, which is atomic.
 * - larger, hash unknown (archive entries): the same multipart upload to a staging key
 *   <prefix>tmp/<random>, then a server-side copy to the final key and the staging object
 *   deleted (a reader never lists or names tmp/).
 * A killed API host leaves an incomplete multipart upload (or a staging object): invisible;
 * sweep() and a bucket lifecycle rule (AbortIncompleteMultipartUpload) remove them.
 *
 * Checksums: the SDK's default CRC32 trailers (aws-chunked bodies) are turned off
 * (WHEN_REQUIRED): several S3-compatible servers refuse them, and the sha256 of the content
 * is verified here anyway.
 */
import { randomBytes } from 'node:crypto';
import { finished, Transform, type Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  blobKey,
  checkExpected,
  chunked,
  hashingMeter,
  holdEarlyFailure,
  verifyOnly,
  type BlobStore,
  type ByteRange,
  type PutOptions,
  type PutResult,
} from './blobStore.js';

export interface S3BlobStoreConfig {
  /** e.g. http://127.0.0.1:9000 for MinIO; absent → AWS's own endpoint for the region. */
  endpoint?: string | undefined;
  bucket: string;
  region: string;
  /** Absent → the SDK's default chain (AWS_* variables, instance or task role). */
  credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
  /** MinIO, Ceph and most self-hosted servers want path-style URLs. */
  forcePathStyle: boolean;
  /** Prefix of every key (e.g. "chatgpu/"), so one bucket can hold other things. */
  prefix: string;
  /** Multipart part size (S3's minimum is 5 MiB). */
  partBytes: number;
  /** Parts in flight at once per upload. */
  queueSize: number;
}

const isNotFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
};

export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;
  readonly client: S3Client;

  constructor(readonly cfg: S3BlobStoreConfig) {
    this.client = new S3Client({
      ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
      region: cfg.region,
      forcePathStyle: cfg.forcePathStyle,
      ...(cfg.credentials ? { credentials: cfg.credentials } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  key(sha256: string): string {
    return `${this.cfg.prefix}blobs/${blobKey(sha256)}`;
  }

  async stat(sha256: string): Promise<{ size: number } | null> {
    try {
      const h = await this.client.send(new HeadObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(sha256) }));
      return { size: Number(h.ContentLength ?? 0) };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async read(sha256: string, range?: ByteRange): Promise<Readable> {
    const got = await this.client.send(
      new GetObjectCommand({
        Bucket: this.cfg.bucket,
        Key: this.key(sha256),
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    );
    // In Node the body is an http.IncomingMessage (a Readable) with the SDK's mixins.
    const body = got.Body as Readable;
    if (!range) return body;
    // A server may answer more than the range asked (the whole object, or s3rver's `bytes=0-0`):
    // cut what it sent to what was asked, from the range it says it sent.
    const m = /^bytes (\d+)-(\d+)\//.exec(got.ContentRange ?? '');
    const from = m ? Number(m[1]) : 0;
    const to = m ? Number(m[2]) : Number.MAX_SAFE_INTEGER;
    if (from === range.start && to === range.end) return body;
    if (from > range.start || to < range.end) throw new Error(`S3 answered bytes ${from}-${to} for ${range.start}-${range.end}`);
    return body.pipe(sliceStream(range.start - from, range.end - range.start + 1));
  }

  async put(source: Readable, opts: PutOptions): Promise<PutResult> {
    holdEarlyFailure(source);
    if (opts.expected) {
      const existing = await this.stat(opts.expected);
      if (existing) return verifyOnly(source, { ...opts, expected: opts.expected }, existing.size);
    }
    const meter = hashingMeter(opts.maxBytes);
    const metered = source.pipe(meter);
    // A body cut off without an 'end' (a client gone mid-upload) fails the put, as in pipeline().
    finished(source, (err) => err && meter.destroy(err));
    const parts = chunked(metered, this.cfg.partBytes);
    const first = await parts.next();
    const firstBuf = first.done ? Buffer.alloc(0) : first.value;
    const second = first.done ? first : await parts.next();
    if (second.done) {
      // One part at most: the whole blob is in memory and hashed before anything is written.
      const sha256 = meter.digest();
      checkExpected(opts.expected, sha256);
      const created = (await this.stat(sha256)) === null;
      if (created)
        await this.client.send(
          new PutObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(sha256), Body: firstBuf, ContentLength: firstBuf.length }),
        );
      return { sha256, size: firstBuf.length, created };
    }
    const target = opts.expected ? this.key(opts.expected) : `${this.cfg.prefix}tmp/${randomBytes(16).toString('hex')}`;
    const upload = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.cfg.bucket, Key: target, ContentType: 'application/octet-stream' }),
    );
    const uploadId = upload.UploadId!;
    const done: CompletedPart[] = [];
    const inFlight = new Set<Promise<void>>();
    let failure: unknown = null;
    const send = (body: Buffer, partNumber: number) => {
      const p = this.client
        .send(
          new UploadPartCommand({
            Bucket: this.cfg.bucket,
            Key: target,
            UploadId: uploadId,
            PartNumber: partNumber,
            Body: body,
            ContentLength: body.length,
          }),
        )
        .then((r) => void done.push({ PartNumber: partNumber, ETag: r.ETag! }))
        .catch((e) => void (failure ??= e))
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    };
    try {
      let n = 0;
      send(firstBuf, ++n);
      send(second.value, ++n);
      for (;;) {
        while (inFlight.size >= this.cfg.queueSize) await Promise.race(inFlight);
        if (failure) throw failure;
        const next = await parts.next();
        if (next.done) break;
        send(next.value, ++n);
      }
      await Promise.all(inFlight);
      if (failure) throw failure;
      const sha256 = meter.digest();
      checkExpected(opts.expected, sha256);
      done.sort((a, b) => a.PartNumber! - b.PartNumber!);
      const final = this.key(sha256);
      const created = opts.expected ? true : (await this.stat(sha256)) === null;
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.cfg.bucket, Key: target, UploadId: uploadId, MultipartUpload: { Parts: done } }),
      );
      if (target !== final) {
        try {
          if (created)
            await this.client.send(
              new CopyObjectCommand({ Bucket: this.cfg.bucket, Key: final, CopySource: `${this.cfg.bucket}/${target}` }),
            );
        } finally {
          await this.client.send(new DeleteObjectCommand({ Bucket: this.cfg.bucket, Key: target })).catch(() => undefined);
        }
      }
      return { sha256, size: meter.bytes(), created };
    } catch (err) {
      metered.destroy();
      source.resume();
      await Promise.allSettled(inFlight);
      // Best effort: some S3-compatible servers do not implement it; the upload stays invisible either way.
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: this.cfg.bucket, Key: target, UploadId: uploadId }))
        .catch(() => undefined);
      throw err;
    }
  }

  /**
   * A GET URL of the object signed for `expiresSec` (SigV4 query string): whoever holds it reads
   * the blob without a token, so the API hands it out only after its own authorization check,
   * and only for that long. Range requests work on it as on the API.
   */
  async presignedUrl(sha256: string, opts: { expiresSec: number; filename?: string }): Promise<string | null> {
    const command = new GetObjectCommand({
      Bucket: this.cfg.bucket,
      Key: this.key(sha256),
      ...(opts.filename ? { ResponseContentDisposition: `attachment; filename*=UTF-8''${encodeURIComponent(opts.filename)}` } : {}),
    });
    return getSignedUrl(this.client, command, { expiresIn: opts.expiresSec });
  }

  async remove(sha256: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(sha256) }));
  }

  /** Incomplete multipart uploads and staging objects older than `olderThanMs` (best effort). */
  async sweep(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    const uploads = await this.client
      .send(new ListMultipartUploadsCommand({ Bucket: this.cfg.bucket, Prefix: this.cfg.prefix }))
      .catch(() => null);
    for (const u of uploads?.Uploads ?? []) {
      if (u.Initiated && u.Initiated.getTime() < cutoff) {
        const ok = await this.client
          .send(new AbortMultipartUploadCommand({ Bucket: this.cfg.bucket, Key: u.Key!, UploadId: u.UploadId! }))
          .then(
            () => true,
            () => false,
          );
        if (ok) removed++;
      }
    }
    const staging = await this.client
      .send(new ListObjectsV2Command({ Bucket: this.cfg.bucket, Prefix: `${this.cfg.prefix}tmp/` }))
      .catch(() => null);
    for (const o of staging?.Contents ?? []) {
      if (o.LastModified && o.LastModified.getTime() < cutoff) {
        await this.client.send(new DeleteObjectCommand({ Bucket: this.cfg.bucket, Key: o.Key! }));
        removed++;
      }
    }
    return removed;
  }
}

/** Passes on `take` bytes after skipping `skip`, then ends. */
function sliceStream(skip: number, take: number): Transform {
  let pos = 0;
  const end = skip + take;
  return new Transform({
    transform(chunk: Buffer, _e, cb) {
      if (pos >= end) return void cb(); // already ended: the rest of the object is dropped
      const a = Math.max(skip - pos, 0);
      const b = Math.min(end - pos, chunk.length);
      pos += chunk.length;
      if (b > a) this.push(chunk.subarray(a, b));
      if (pos >= end) this.push(null);
      cb();
    },
  });
}
