import { Prisma as P } from '../../generated/prisma/client.js';
import { ConflictError, ForbiddenError, NotFoundError, UnauthenticatedError } from '../errors.js';
import type { Resources } from '../resources.js';
import type { Principal } from './principal.js';
import { hashPassword, hashToken, newToken, tokenKind, verifyPassword } from './secrets.js';
import { workerTokensByHash, type WorkerTokenRow } from '../../db/sql/workerTokens.js';
import { Coalescer, perClient, WORKER_CALL_SPACING_MS } from '../coalesce.js';

const SESSION_DAYS = 30;

type R = Pick<Resources, 'prisma' | 'now'> & { config?: Pick<Resources['config'], 'operators'> };

/** The refusal when sign-up is closed (CHATGPU_SIGNUP=closed, the embedded default's default). */
export const SIGN_UP_CLOSED =
  "Sign-up is closed on this server: only its existing accounts can log in (on `npm start`, the local user; its password is in the data folder's local.json). Its operator can open sign-up with CHATGPU_SIGNUP=open.";

/** signUp as the API offers it: refused while sign-up is closed (the accounts the system makes itself use createAccount). */
export async function signUp(
  r: R & { config: Pick<Resources['config'], 'signUp'> },
  input: { email: string; password: string; displayName?: string | null },
) {
  if (r.config.signUp !== 'open') throw new ForbiddenError(SIGN_UP_CLOSED);
  return createAccount(r, input);
}

/** Creates an account and its first session, whatever the sign-up setting (the local user, tests' seed users). */
export async function createAccount(r: R, input: { email: string; password: string; displayName?: string | null }) {
  const email = input.email.trim().toLowerCase();
  const passwordHash = await hashPassword(input.password);
  try {
    const user = await r.prisma.user.create({
      data: { email, passwordHash, displayName: input.displayName ?? null },
    });
    const session = await createSession(r, user.id);
    return { user, token: session.token };
  } catch (err) {
    if (err instanceof P.PrismaClientKnownRequestError && err.code === 'P2002') {
      throw new ConflictError(`An account with the email ${email} already exists.`);
    }
    throw err;
  }
}

export async function logIn(r: R, input: { email: string; password: string }) {
  const user = await r.prisma.user.findUnique({ where: { email: input.email.trim().toLowerCase() } });
  // Verify against a dummy hash when the user is unknown so timing does not reveal accounts.
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash()));
  if (!user || !ok) throw new UnauthenticatedError('Wrong email or password.');
  const session = await createSession(r, user.id);
  return { user, token: session.token };
}

let dummy: Promise<string> | undefined;
const dummyHash = () => (dummy ??= hashPassword('not-a-real-password'));

async function createSession(r: R, userId: string) {
  const t = newToken('session');
  const expiresAt = new Date(r.now().getTime() + SESSION_DAYS * 86400_000);
  await r.prisma.apiToken.create({
    data: { userId, kind: 'SESSION', name: 'session', tokenHash: t.hash, prefix: t.prefix, scopes: [], expiresAt },
  });
  return t;
}

export async function createApiToken(r: R, userId: string, name: string) {
  const t = newToken('api');
  const apiToken = await r.prisma.apiToken.create({
    data: { userId, kind: 'API', name, tokenHash: t.hash, prefix: t.prefix, scopes: ['all'] },
  });
  return { apiToken, token: t.token };
}

export async function createWorkerToken(r: R, userId: string, name: string) {
  const t = newToken('worker');
  const workerToken = await r.prisma.workerToken.create({
    data: { userId, name, tokenHash: t.hash, prefix: t.prefix },
  });
  return { workerToken, token: t.token };
}

/**
 * A new secret for one of the user's worker tokens (the old one stops working on the very
 * next call: every request authenticates afresh, nothing is cached). Shown once; only its
 * hash is kept. The token's workers keep their rows and history.
 */
export async function rotateWorkerToken(r: R, userId: string, id: string) {
  const t = newToken('worker');
  const res = await r.prisma.workerToken.updateMany({
    where: { id, userId, revokedAt: null },
    data: { tokenHash: t.hash, prefix: t.prefix },
  });
  if (res.count === 0) throw new NotFoundError('WorkerToken', id);
  return { workerToken: { id }, token: t.token };
}

/** Revokes one of the user's worker tokens; its next call is anonymous (refused). */
export async function revokeWorkerToken(r: R, userId: string, id: string) {
  const res = await r.prisma.workerToken.updateMany({
    where: { id, userId, revokedAt: null },
    data: { revokedAt: r.now() },
  });
  if (res.count === 0) throw new NotFoundError('WorkerToken', id);
}

export async function revokeApiToken(r: R, userId: string, id: string) {
  const res = await r.prisma.apiToken.updateMany({
    where: { id, userId, revokedAt: null },
    data: { revokedAt: r.now() },
  });
  if (res.count === 0) throw new NotFoundError('ApiToken', id);
}

/** Resolves a bearer token to a principal; unknown, revoked or expired tokens are anonymous. */
const workerTokenLookup = perClient(
  (r: R) =>
    new Coalescer<string, WorkerTokenRow | null>(
      async (hashes) => {
        const rows = await workerTokensByHash(r.prisma, [...new Set(hashes)]);
        const byHash = new Map(rows.map((t) => [t.tokenHash, t]));
        return hashes.map((h) => byHash.get(h) ?? null);
      },
      { spacingMs: WORKER_CALL_SPACING_MS },
    ),
);

export async function authenticate(r: R, bearer: string | undefined | null): Promise<Principal> {
  const token = bearer?.replace(/^Bearer\s+/i, '').trim();
  if (!token) return { kind: 'anonymous' };
  const kind = tokenKind(token);
  const tokenHash = hashToken(token);
  const now = r.now();
  if (kind === 'worker') {
    // Every worker call (a heartbeat per worker every few seconds) is authenticated: the
    // lookups in flight go in one statement (coalesce.ts), each read after its call arrived.
    const wt = await workerTokenLookup(r).submit(tokenHash);
    if (!wt || wt.revoked) return { kind: 'anonymous' };
    return { kind: 'worker', userId: wt.userId, workerTokenId: wt.id };
  }
  if (kind === 'api' || kind === 'session') {
    const at = await r.prisma.apiToken.findUnique({ where: { tokenHash }, include: { user: { select: { email: true } } } });
    if (!at || at.revokedAt || (at.expiresAt && at.expiresAt <= now)) return { kind: 'anonymous' };
    // lastUsedAt is advisory: update at most once a minute per token.
    if (!at.lastUsedAt || now.getTime() - at.lastUsedAt.getTime() > 60_000) {
      await r.prisma.apiToken.update({ where: { id: at.id }, data: { lastUsedAt: now } }).catch(() => {});
    }
    return { kind: 'user', userId: at.userId, tokenId: at.id, operator: !!r.config?.operators.includes(at.user.email.toLowerCase()) };
  }
  return { kind: 'anonymous' };
}
