/**
 * The embedded default's local user: created on first start, with an API token and a
 * worker token kept in <dataDir>/local.json (mode 0600) so the `chatgpu` command and
 * the local worker need no login step. Later starts reuse it.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Resources } from '../resources.js';
import { hashToken } from './secrets.js';
import { createAccount, createApiToken, createWorkerToken } from './users.js';

export interface LocalCredentials {
  email: string;
  password: string;
  apiToken: string;
  workerToken: string;
}

export const LOCAL_EMAIL = 'local@chatgpu.localhost';

export function localCredentialsPath(dataDir: string): string {
  return path.join(dataDir, 'local.json');
}

export async function readLocalCredentials(dataDir: string): Promise<LocalCredentials | null> {
  try {
    return JSON.parse(await readFile(localCredentialsPath(dataDir), 'utf8')) as LocalCredentials;
  } catch {
    return null;
  }
}

export async function ensureLocalUser(r: Resources): Promise<{ creds: LocalCredentials; created: boolean }> {
  const existing = await readLocalCredentials(r.config.dataDir);
  if (existing) {
    const valid = await r.prisma.apiToken.findUnique({ where: { tokenHash: hashToken(existing.apiToken) } });
    if (valid && !valid.revokedAt) return { creds: existing, created: false };
  }
  const password = randomBytes(12).toString('base64url');
  let userId: string;
  const user = await r.prisma.user.findUnique({ where: { email: LOCAL_EMAIL } });
  if (user) {
    userId = user.id;
    const { hashPassword } = await import('./secrets.js');
    await r.prisma.user.update({ where: { id: user.id }, data: { passwordHash: await hashPassword(password) } });
  } else {
    userId = (await createAccount(r, { email: LOCAL_EMAIL, password, displayName: 'Local user' })).user.id;
  }
  const api = await createApiToken(r, userId, 'local tools');
  const worker = await createWorkerToken(r, userId, 'this machine');
  const creds: LocalCredentials = { email: LOCAL_EMAIL, password, apiToken: api.token, workerToken: worker.token };
  await writeFile(localCredentialsPath(r.config.dataDir), JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
  return { creds, created: true };
}
