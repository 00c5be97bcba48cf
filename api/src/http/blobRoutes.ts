/**
 * PUT /blobs/:sha256 — upload (user or worker token); the body is hashed while it
 * streams to disk; a mismatch is 400, over the size limit 413; nothing is kept then.
 * A worker uploading an output names its attempt in `X-ChatGPU-Attempt` (a live attempt
 * of its token, else 404 before the body is read); only blobs uploaded so may be listed
 * as that attempt's outputs.
 * GET /blobs/:sha256 — download, only what the caller may read (invariant 7); a blob
 * that exists but is not yours is the same 404 as one that does not exist.
 *
 * Never half-written: the bytes are stored whole (a temporary file renamed into place)
 * before any row names them, so a row never points to a missing or partial file. A
 * database outage between the two answers 503 (server.ts) and leaves a complete, verified
 * file that no row names: invisible (reads and jobs go through the rows) and adopted by
 * the retried upload of the same bytes. It is not deleted: a concurrent upload of the same
 * bytes may have registered it meanwhile.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '../domain/auth/principal.js';
import { ATTEMPT_HEADER, canReadBlob, recordAttemptUpload, registerBlob, requireUploadingAttempt } from '../domain/blobs/blobAccess.js';
import { SHA256_RE } from '../domain/blobs/blobStore.js';
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
    const allowed = (await canReadBlob(r, principal, sha256)) && (await r.blobs.has(sha256));
    if (!allowed) return sendError(res, 404, 'NOT_FOUND', 'No such blob.');
    const size = await r.blobs.size(sha256);
    const name = query.get('download');
    const headers: Record<string, string | number> = {
      'content-type': 'application/octet-stream',
      'content-length': size,
      etag: `"${sha256}"`,
      'cache-control': 'private, max-age=31536000, immutable',
    };
    if (name) headers['content-disposition'] = `attachment; filename*=UTF-8''${encodeURIComponent(name.split('/').pop() ?? name)}`;
    res.writeHead(200, headers);
    if (req.method === 'HEAD') return void res.end();
    r.blobs.read(sha256).pipe(res);
    return;
  }
  res.setHeader('allow', 'GET, HEAD, PUT');
  sendError(res, 405, 'METHOD_NOT_ALLOWED', 'Use GET or PUT.');
}
