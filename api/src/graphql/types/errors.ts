/**
 * Typed errors returned in mutation result unions (expected failures are results,
 * not exceptions). All implement the `Error` interface.
 */
import {
  ConflictError,
  DomainError,
  ForbiddenError,
  type Issue,
  NotFoundError,
  SimulatedAcceleratorRefusedError,
  StaleAttemptError,
  UnauthenticatedError,
  ValidationError,
} from '../../domain/errors.js';
import { builder } from '../builder.js';

export const ErrorInterface = builder.interfaceRef<DomainError>('Error').implement({
  fields: (t) => ({
    message: t.exposeString('message'),
    code: t.exposeString('code'),
  }),
});

const IssueRef = builder.objectRef<Issue>('ValidationIssue').implement({
  fields: (t) => ({
    path: t.exposeStringList('path'),
    message: t.exposeString('message'),
  }),
});

builder.objectType(ValidationError, {
  name: 'ValidationError',
  interfaces: [ErrorInterface],
  fields: (t) => ({ issues: t.field({ type: [IssueRef], resolve: (e) => e.issues }) }),
});
builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  interfaces: [ErrorInterface],
  fields: (t) => ({ entity: t.exposeString('entity') }),
});
builder.objectType(ForbiddenError, { name: 'ForbiddenError', interfaces: [ErrorInterface], fields: () => ({}) });
builder.objectType(ConflictError, { name: 'ConflictError', interfaces: [ErrorInterface], fields: () => ({}) });
builder.objectType(UnauthenticatedError, { name: 'AuthenticationError', interfaces: [ErrorInterface], fields: () => ({}) });
builder.objectType(StaleAttemptError, {
  name: 'StaleAttemptError',
  interfaces: [ErrorInterface],
  fields: (t) => ({ attemptId: t.exposeID('attemptId'), reason: t.exposeString('reason') }),
});
builder.objectType(SimulatedAcceleratorRefusedError, {
  name: 'SimulatedAcceleratorRefusedError',
  interfaces: [ErrorInterface],
  fields: (t) => ({
    accelerator: t.exposeString('accelerator', {
      description: 'The simulated accelerator the worker advertised (its --simulate-accelerator value).',
    }),
  }),
});

/** The errors every validated mutation may return. */
export const inputErrors = [ValidationError] as const;
export {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  SimulatedAcceleratorRefusedError,
  StaleAttemptError,
  UnauthenticatedError,
  ValidationError,
};
