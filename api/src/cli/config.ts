/**
 * Which server and which token the `chatgpu` command uses.
 *
 * Server: --server, else CHATGPU_URL, else http://localhost:4000.
 * Token:  --token, else CHATGPU_TOKEN, else the saved login for that server
 *         (~/.config/chatgpu/credentials.json, mode 0600, keyed by server URL), else —
 *         for a server on this machine — the embedded default's local user
 *         (<dataDir>/local.json; dataDir = CHATGPU_DATA_DIR, or the nearest `.chatgpu/`
 *         in the current folder or one above it), so no login step is needed locally.
 * Outages: CHATGPU_RETRY_SEC, how long an unavailable API is waited out before a
 *         command gives up (default 120; 0 fails at once) — see apiClient.ts.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient, CliError, DEFAULT_RETRY_MS, type RetryOptions } from './apiClient.js';

export const DEFAULT_SERVER = 'http://localhost:4000';

export interface GlobalOptions {
  server?: string | undefined;
  token?: string | undefined;
}

/** parseArgs option specs shared by every command that talks to the server. */
export const globalOptionSpecs = {
  server: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The --help lines of `globalOptionSpecs`, the flags padded to `width` columns. */
export function globalOptionsUsage(width: number): string {
  return [
    ['--server URL', 'the API (default: CHATGPU_URL or http://localhost:4000)'],
    ['--token TOKEN', "API token (default: CHATGPU_TOKEN, saved login, or the local user's)"],
  ]
    .map(([flag, what]) => `  ${flag!.padEnd(width)}${what}\n`)
    .join('');
}

export function resolveServer(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const raw = (flag ?? env.CHATGPU_URL ?? DEFAULT_SERVER).trim();
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new CliError(`Not a server URL: ${JSON.stringify(raw)} (expected e.g. ${DEFAULT_SERVER}).`, 2);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new CliError(`The server URL must start with http:// or https:// (got ${raw}).`, 2);
  return (u.origin + u.pathname).replace(/\/+$/, '');
}

/** How long outages are waited out (CHATGPU_RETRY_SEC, seconds). */
export function retryOptions(env: NodeJS.ProcessEnv = process.env): RetryOptions {
  const raw = env.CHATGPU_RETRY_SEC?.trim();
  if (!raw) return { forMs: DEFAULT_RETRY_MS };
  const sec = Number(raw);
  if (!Number.isFinite(sec) || sec < 0) throw new CliError(`CHATGPU_RETRY_SEC must be a number of seconds, 0 or more (got ${raw}).`, 2);
  return { forMs: Math.round(sec * 1000) };
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CHATGPU_CONFIG_DIR) return path.resolve(env.CHATGPU_CONFIG_DIR);
  const base = env.XDG_CONFIG_HOME ? path.resolve(env.XDG_CONFIG_HOME) : path.join(env.HOME ?? os.homedir(), '.config');
  return path.join(base, 'chatgpu');
}

export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), 'credentials.json');
}

interface CredentialsFile {
  servers: Record<string, { token: string; email?: string; savedAt?: string }>;
}

async function readCredentials(file: string): Promise<CredentialsFile> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<CredentialsFile>;
    return { servers: parsed.servers && typeof parsed.servers === 'object' ? parsed.servers : {} };
  } catch {
    return { servers: {} };
  }
}

/** Saves a token for a server (file mode 0600, folder 0700), keeping other servers' tokens. */
export async function saveCredentials(
  server: string,
  token: string,
  email: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const file = credentialsPath(env);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const creds = await readCredentials(file);
  creds.servers[server] = { token, ...(email ? { email } : {}), savedAt: new Date().toISOString() };
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
  return file;
}

function isLoopback(server: string): boolean {
  const host = new URL(server).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\./.test(host);
}

/** The embedded default's local.json: CHATGPU_DATA_DIR, or the nearest `.chatgpu/local.json` from cwd upwards. */
export function localCredentialsFile(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string | null {
  if (env.CHATGPU_DATA_DIR) {
    const f = path.join(path.resolve(cwd, env.CHATGPU_DATA_DIR), 'local.json');
    return existsSync(f) ? f : null;
  }
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const f = path.join(dir, '.chatgpu', 'local.json');
    if (existsSync(f)) return f;
    if (path.dirname(dir) === dir) return null;
  }
}

export interface ResolvedToken {
  token: string;
  /** Where it came from, in words for messages. */
  source: string;
}

export async function resolveToken(
  server: string,
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): Promise<ResolvedToken | null> {
  if (flag?.trim()) return { token: flag.trim(), source: 'the --token token' };
  if (env.CHATGPU_TOKEN?.trim()) return { token: env.CHATGPU_TOKEN.trim(), source: 'the CHATGPU_TOKEN token' };
  const file = credentialsPath(env);
  const saved = (await readCredentials(file)).servers[server];
  if (saved?.token) return { token: saved.token, source: `the token saved in ${file}` };
  if (isLoopback(server)) {
    const local = localCredentialsFile(env, cwd);
    if (local) {
      try {
        const parsed = JSON.parse(await readFile(local, 'utf8')) as { apiToken?: string };
        if (parsed.apiToken) return { token: parsed.apiToken, source: `the local user's token from ${local}` };
      } catch {
        /* unreadable: fall through to "no token" */
      }
    }
  }
  return null;
}

/** An API client with a token, or a one-sentence error saying how to get one. */
export async function connect(opts: GlobalOptions): Promise<ApiClient> {
  const server = resolveServer(opts.server);
  const t = await resolveToken(server, opts.token);
  if (!t) {
    throw new CliError(
      `No API token for ${server}: run \`chatgpu login --server ${server}\`, pass --token, or set CHATGPU_TOKEN (on the embedded default, run this from the folder where \`npm start\` keeps .chatgpu/).`,
    );
  }
  return new ApiClient(server, t.token, t.source, retryOptions());
}
