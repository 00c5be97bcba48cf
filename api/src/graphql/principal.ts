import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../domain/errors.js';
import { isUuid, NOBODY_ID } from '../domain/ids.js';
import type { Context } from './context.js';

/** The calling user's id; fields using it also declare `authScopes: { user: true }`. */
export function requireUser(ctx: Pick<Context, 'principal'>): string {
  if (ctx.principal.kind === 'user') return ctx.principal.userId;
  if (ctx.principal.kind === 'anonymous') throw new UnauthenticatedError('Sign in first: this needs a valid token.');
  throw new ForbiddenError('This token may not do that.');
}

export function requireWorker(ctx: Pick<Context, 'principal'>): { userId: string; workerTokenId: string } {
  if (ctx.principal.kind === 'worker') return ctx.principal;
  if (ctx.principal.kind === 'anonymous') throw new UnauthenticatedError('Sign in first: this needs a worker token.');
  throw new ForbiddenError('Only a worker token may do that.');
}

/** A user id that matches nothing, for scoping queries of non-users. */
export const NOBODY = NOBODY_ID;

export function viewerId(ctx: Pick<Context, 'principal'>): string {
  return ctx.principal.kind === 'user' ? ctx.principal.userId : NOBODY;
}

export { isUuid };

/** A raw id from a client: a malformed one is simply not found. */
export function parseUuid(id: string, entity: string): string {
  if (!isUuid(id)) throw new NotFoundError(entity, id.slice(0, 80));
  return id;
}
