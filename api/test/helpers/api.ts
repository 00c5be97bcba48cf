import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { silentLogger, type Logger } from '../../src/domain/resources.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { ModelClient } from '../../src/agents/models/types.js';
import { createTestDatabase } from './db.js';

export interface TestApi {
  server: RunningServer;
  url: string;
  config: Config;
  dataDir: string;
  databaseUrl: string;
  /** The server's clock (`resources.now()`): real time plus `offsetMs`; tests move it with advance(). */
  clock: TestClock;
  gql<T = any>(query: string, variables?: Record<string, unknown>, token?: string): Promise<{ data?: T; errors?: any[]; status: number }>;
  signUp(email?: string): Promise<{ token: string; userId: string; email: string }>;
  /** PUT /blobs/:sha256; `attemptId` (a worker token's upload of that attempt's output) is sent as X-ChatGPU-Attempt. */
  putBlob(
    content: Buffer | string,
    token: string,
    sha?: string,
    attemptId?: string,
  ): Promise<{ status: number; body: any; sha256: string }>;
  getBlob(sha: string, token?: string): Promise<{ status: number; bytes: Buffer }>;
}

export interface TestClock {
  offsetMs: number;
  now(): Date;
  /** Moves the server's clock forward (never sleeps). */
  advance(ms: number): Date;
}

export function testClock(): TestClock {
  const c: TestClock = {
    offsetMs: 0,
    now: () => new Date(Date.now() + c.offsetMs),
    advance: (ms) => ((c.offsetMs += ms), c.now()),
  };
  return c;
}

/**
 * A real API server on 127.0.0.1 (random port) over a fresh clone of the template database.
 * `opts.scheduler` starts the node-cron tick (default false: tests drive `runTick` with an
 * explicit `now`); `opts.clock` is the server's clock (default: real time, offset 0);
 * `opts.log` gets the server's log (default: silent); `opts.model` runs the agents with that model (default: no agents, so suites that create
 * tasks themselves are not joined by a planner).
 */
export async function startTestApi(
  env: Record<string, string> = {},
  opts: {
    databaseUrl?: string;
    dataDir?: string;
    scheduler?: boolean;
    clock?: TestClock;
    model?: ModelClient | null;
    /** Start the job engine (default: when there is a model — suites that drive a job's tasks by hand get neither). */
    engine?: boolean;
    webDir?: string | null;
    log?: Logger;
  } = {},
): Promise<TestApi> {
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase());
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'chatgpu-test-')));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, CHATGPU_DATA_DIR: dataDir, ...env });
  const clock = opts.clock ?? testClock();
  const server = await startServer({
    config,
    log: opts.log ?? silentLogger,
    webDir: opts.webDir ?? null,
    scheduler: opts.scheduler ?? false,
    now: () => clock.now(),
    model: opts.model ?? null,
    engine: opts.engine ?? Boolean(opts.model),
  });
  afterAll(async () => {
    await server.close();
    if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  const api: TestApi = {
    server,
    url: server.url,
    config,
    dataDir,
    databaseUrl,
    clock,
    async gql(query, variables, token) {
      const res = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as { data?: any; errors?: any[] };
      return { ...body, status: res.status };
    },
    async signUp(email) {
      const e = email ?? `u${randomBytes(6).toString('hex')}@example.com`;
      const r = await api.gql(
        `mutation($i: SignUpInput!) { signUp(input: $i) { __typename ... on AuthPayload { token user { id } } ... on Error { message } } }`,
        { i: { email: e, password: 'correct horse battery' } },
      );
      if (r.data?.signUp?.__typename !== 'AuthPayload') throw new Error(`signUp failed: ${JSON.stringify(r)}`);
      return { token: r.data.signUp.token, userId: rawId(r.data.signUp.user.id), email: e };
    },
    async putBlob(content, token, sha, attemptId) {
      const buf = Buffer.isBuffer(content) ? content : Buffer.from(content);
      const sha256 = sha ?? createHash('sha256').update(buf).digest('hex');
      const res = await fetch(`${server.url}/blobs/${sha256}`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/octet-stream',
          ...(attemptId ? { 'x-chatgpu-attempt': attemptId } : {}),
        },
        body: new Uint8Array(buf),
      });
      return { status: res.status, body: await res.json().catch(() => null), sha256 };
    },
    async getBlob(sha, token) {
      const res = await fetch(`${server.url}/blobs/${sha}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
    },
  };
  return api;
}

export function sha256(b: Buffer | string): string {
  return createHash('sha256').update(b).digest('hex');
}

/** The uuid inside a Relay global id ("Type:uuid", base64). */
export function rawId(globalId: string): string {
  return Buffer.from(globalId, 'base64').toString('utf8').split(':').slice(1).join(':');
}
