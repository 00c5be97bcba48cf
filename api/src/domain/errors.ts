/**
 * Typed domain errors. Each has a stable `code`; GraphQL maps them to typed results
 * (mutations) or to errors with `extensions.code` (queries). Unexpected errors are
 * masked for clients and reported.
 */
export class DomainError extends Error {
  readonly code: string = 'INTERNAL';
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export interface Issue {
  path: string[];
  message: string;
}

export class ValidationError extends DomainError {
  override readonly code = 'VALIDATION_ERROR';
  constructor(
    message: string,
    readonly issues: Issue[] = [],
  ) {
    super(message);
  }
}

export class NotFoundError extends DomainError {
  override readonly code = 'NOT_FOUND';
  constructor(
    readonly entity: string,
    readonly id?: string,
  ) {
    super(`${entity} not found${id ? `: ${id}` : ''}`);
  }
}

export class ForbiddenError extends DomainError {
  override readonly code = 'FORBIDDEN';
}

export class UnauthenticatedError extends DomainError {
  override readonly code = 'UNAUTHENTICATED';
}

export class ConflictError extends DomainError {
  override readonly code = 'CONFLICT';
}

/** A report carrying an (attemptId, fencingToken) that is no longer the task's current lease. */
export class StaleAttemptError extends DomainError {
  override readonly code = 'STALE_ATTEMPT';
  constructor(
    readonly attemptId: string,
    readonly reason: string,
  ) {
    super(`Attempt ${attemptId} is no longer current: ${reason}`);
  }
}

export class PayloadTooLargeError extends DomainError {
  override readonly code = 'PAYLOAD_TOO_LARGE';
}

/**
 * A worker started with --simulate-accelerator said hello to a production API that does not allow
 * them (CHATGPU_ALLOW_SIMULATED_ACCELERATORS): its "GPU" is the CPU, so no real user's work may go there.
 */
export class SimulatedAcceleratorRefusedError extends DomainError {
  override readonly code = 'SIMULATED_ACCELERATOR_REFUSED';
  constructor(readonly accelerator: string) {
    super(
      `This API runs in production mode and refuses workers with a simulated accelerator (${accelerator}): their numerics run on the CPU, for tests and demos only. Start the worker without --simulate-accelerator, or set CHATGPU_ALLOW_SIMULATED_ACCELERATORS=true on the server.`,
    );
  }
}
