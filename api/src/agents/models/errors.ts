/**
 * Errors every ModelClient rejects with. The agent loop catches them and turns the
 * turn into a stopped one (it never retries blindly: the model call is a step of the
 * durable loop). `ModelTimeoutError` extends `ModelError`, so `instanceof ModelError`
 * catches both; `name` tells them apart after serialization.
 */

export type ModelErrorCode =
  /** The request took longer than the client's timeout (or the caller's signal fired with a TimeoutError). */
  | 'timeout'
  /** The caller aborted the request through `ModelRequest.signal`. */
  | 'aborted'
  /** No HTTP response: connection refused/reset, DNS, TLS… */
  | 'network'
  /** The server answered with an HTTP error status (`status` is set). */
  | 'http'
  /** The server answered 2xx with something that is not a Responses API object. */
  | 'bad_response'
  /** A scripted failure (tests). */
  | 'scripted';

export class ModelError extends Error {
  override name = 'ModelError';
  readonly code: ModelErrorCode;
  /** HTTP status when `code` is 'http'. */
  readonly status?: number;

  constructor(message: string, opts: { code: ModelErrorCode; status?: number; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = opts.code;
    if (opts.status !== undefined) this.status = opts.status;
  }
}

export class ModelTimeoutError extends ModelError {
  override name = 'ModelTimeoutError';
  readonly timeoutMs?: number;

  constructor(message: string, opts: { timeoutMs?: number; cause?: unknown } = {}) {
    super(message, { code: 'timeout', cause: opts.cause });
    if (opts.timeoutMs !== undefined) this.timeoutMs = opts.timeoutMs;
  }
}

/**
 * The error to reject with when the caller's signal aborted: a timeout when the abort
 * reason is a TimeoutError (`AbortSignal.timeout(…)`), otherwise an 'aborted' ModelError.
 */
export function abortedError(signal: AbortSignal | undefined, cause?: unknown): ModelError {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new ModelTimeoutError(`model call timed out (caller's deadline): ${reason.message}`, { cause: reason });
  }
  const why = reason instanceof Error ? reason.message : reason === undefined ? '' : String(reason);
  return new ModelError(`model call aborted by the caller${why ? `: ${why}` : ''}`, { code: 'aborted', cause: cause ?? reason });
}
