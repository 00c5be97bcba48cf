/**
 * PUT /blobs/:sha256 — upload (user or worker token); the body is hashed while it
 * streams to disk; a mismatch is 400, over the size limit 413; nothing is kept then.
 * A worker uploading an output names its attempt in `X-ChatGPU-Attempt` (a live attempt
 * of its token, else 404 before the body is read); only blobs uploaded so may be listed
 * as that attempt's outputs.
 * GET /blobs/:sha256 — download, only what the caller may read (invariant 7); a blob
 * that exists but is not yours is the same 404 as one that does not exist. `Range:
 * bytes=a-b` (one range) answers 206 with that part, so a client resumes a broken download
 * of a big checkpoint where it stopped; an unsatisfiable range is 416. With S3_PRESIGN_SEC
 * set, a download of a large blob is a 307 to a short-lived presigned URL of the object
 * store (decided after the same authorization check), so the bytes bypass the API host.
 *
 * Never half-written: the bytes are stored whole (blobStore.ts: atomic in every backend)
 * before any row names them, so a row never points to a missing or partial file. A
 * database outage between the two answers 503 (server.ts) and leaves a complete, verified
 * blob that no row names: invisible (reads and jobs go through the rows) and adopted by
 * the retried upload of the same bytes. It is not deleted: a concurrent upload of the same
 * bytes may have registered it meanwhile.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Principal } from '../domain/auth/principal.js';
import { ATTEMPT_HEADER, canReadBlob, recordAttemptUpload, registerBlob, requireUploadingAttempt } from '../domain/blobs/blobAccess.js';
import { SHA256_RE, type ByteRange } from '../domain/blobs/blobStore.js';
import { DomainError, NotFoundError, PayloadTooLargeError, ValidationError } from '../domain/errors.js';
import type { Resources } from '../domain/resources.js';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, code: string, message: string) {
  sendJson(res, status, { error: { code, message } });
}

export async function handleBlob(
  r: Resources,
  principal: Principal,
  req: IncomingMessage,
  res: ServerResponse,
  sha256: string,
  query: URLSearchParams,
): Promise<void> {
  if (!SHA256_RE.test(sha256)) return sendError(res, 400, 'VALIDATION_ERROR', 'The blob name must be a lowercase sha256 hex digest.');
  if (principal.kind === 'anonymous') return sendError(res, 401, 'UNAUTHENTICATED', 'Send a bearer token.');

  if (req.method === 'PUT') {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > r.config.blobs.maxBytes) {
      req.resume();
      return sendError(res, 413, 'PAYLOAD_TOO_LARGE', `Blobs are limited to ${r.config.blobs.maxBytes} bytes.`);
    }
    const forAttempt = req.headers[ATTEMPT_HEADER];
    let attemptId: string | null = null;
    if (forAttempt !== undefined) {
      // The body is not read (only drained) when the attempt is refused.
      if (principal.kind !== 'worker') {
        req.resume();
        return sendError(res, 403, 'FORBIDDEN', `Only a worker token uploads for an attempt (${ATTEMPT_HEADER}).`);
      }
      try {
        attemptId = await requireUploadingAttempt(r, principal.workerTokenId, String(forAttempt));
      } catch (err) {
        req.resume();
        if (err instanceof NotFoundError) return sendError(res, 404, err.code, `${err.message} (no live attempt of this worker token).`);
        throw err;
      }
    }
    try {
      const put = await r.blobs.put(req, { expected: sha256, maxBytes: r.config.blobs.maxBytes });
      await registerBlob(r, put.sha256, put.size, principal.kind === 'user' ? principal.userId : null);
      if (attemptId) await recordAttemptUpload(r, attemptId, put.sha256);
      return sendJson(res, 201, { sha256: put.sha256, size: put.size });
    } catch (err) {
      req.resume();
      if (err instanceof PayloadTooLargeError) return sendError(res, 413, err.code, err.message);
      if (err instanceof ValidationError) return sendError(res, 400, err.code, err.message);
      if (err instanceof DomainError) return sendError(res, 400, err.code, err.message);
      throw err;
    }
  }

  if (req.method === 'GET' || req.method === 'HEAD') {
    const stored = (await canReadBlob(r, principal, sha256)) ? await r.blobs.stat(sha256) : null;
    if (!stored) return sendError(res, 404, 'NOT_FOUND', 'No such blob.');
    const { size } = stored;
    const rawName = query.get('download');
    const name = rawName ? (rawName.split('/').pop() ?? rawName) : undefined;
    const presignSec = r.config.blobs.s3?.presignSec ?? 0;
    if (req.method === 'GET' && presignSec > 0 && size >= r.config.blobs.presignMinBytes && r.blobs.presignedUrl) {
      const url = await r.blobs.presignedUrl(sha256, { expiresSec: presignSec, ...(name ? { filename: name } : {}) });
      if (url) {
        res.writeHead(307, { location: url, 'cache-control': 'no-store' });
        return void res.end();
      }
    }
    const headers: Record<string, string | number> = {
      'content-type': 'application/octet-stream',
      'accept-ranges': 'bytes',
      etag: `"${sha256}"`,
      'cache-control': 'private, max-age=31536000, immutable',
    };
    if (name) headers['content-disposition'] = `attachment; filename*=UTF-8''${encodeURIComponent(name)}`;
    const range = parseRange(req.headers.range, size);
    if (range === 'unsatisfiable') {
      res.writeHead(416, { 'content-range': `bytes */${size}` });
      return void res.end();
    }
    if (range) {
      headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`;
      headers['content-length'] = range.end - range.start + 1;
    } else headers['content-length'] = size;
    if (req.method === 'HEAD' || size === 0) {
      res.writeHead(range ? 206 : 200, headers);
      return void res.end();
    }
    const body = await r.blobs.read(sha256, range ?? undefined);
    res.writeHead(range ? 206 : 200, headers);
    // A client that goes away stops the read (an S3 GET or a chunk query), not only the write.
    await pipeline(body, res).catch(() => body.destroy());
    return;
  }
  res.setHeader('allow', 'GET, HEAD, PUT');
  sendError(res, 405, 'METHOD_NOT_ALLOWED', 'Use GET or PUT.');
}

/**
 * One `bytes=` range of a blob of `size` bytes (RFC 9110 §14.1.2): `a-b`, `a-`, or the suffix
 * `-n`; the end is clamped to the blob. null: no Range header, or one this route does not
 * serve as a part (several ranges, another unit — the whole blob is sent instead, as the RFC
 * allows). 'unsatisfiable': a start at or past the end.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(size - n, 0), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  if (end < start) return null;
  return { start, end };
}
