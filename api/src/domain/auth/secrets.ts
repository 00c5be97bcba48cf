/**
 * Passwords: scrypt (N=2^15, r=8, p=1; ~60 ms here) with a random salt, compared in
 * constant time. Tokens: 32 random bytes with a readable prefix; only their SHA-256
 * is stored (high-entropy tokens need no slow hash).
 */
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const PARAMS = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, 32, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, key] = stored.split('$');
  if (alg !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: PARAMS.maxmem,
  });
  return timingSafeEqual(actual, expected);
}

/** Token prefixes say what a token is when it leaks into a log. */
export type TokenKind = 'session' | 'api' | 'worker' | 'service';
const PREFIX: Record<TokenKind, string> = { session: 'cgs_', api: 'cgu_', worker: 'cgw_', service: 'cgv_' };

export function newToken(kind: TokenKind): { token: string; hash: string; prefix: string } {
  const token = PREFIX[kind] + randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token), prefix: token.slice(0, 10) };
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function tokenKind(token: string): TokenKind | null {
  for (const [k, p] of Object.entries(PREFIX)) if (token.startsWith(p)) return k as TokenKind;
  return null;
}
