/**
 * The browser-test harness: a production build of the dashboard served by a real API
 * (startServer with webDir) over a fresh clone of the template database, behind a TCP
 * proxy that tests can cut to simulate losing the API, and Debian's Chromium driven by
 * playwright-core.
 *
 * Two uses: web/test/realFlow.test.ts runs everything for real (scheduler, builtin
 * planner, a real worker process); the seeded suites test what a real run cannot produce
 * on demand (an outage mid-stream, 100,000 lines, many jobs) by writing rows with Prisma
 * and announcing them with the same domain events the API emits (the seed* helpers).
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createServer, Socket, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll } from 'vitest';
import { createBuiltinClient } from '../../../api/src/agents/builtin/builtinModel.js';
import type { ModelClient } from '../../../api/src/agents/models/types.js';
import { loadConfig } from '../../../api/src/config.js';
import { silentLogger } from '../../../api/src/domain/resources.js';
import { startServer, type RunningServer } from '../../../api/src/server.js';
import { createTestDatabase } from '../../../api/test/helpers/db.js';
import { startWorker } from '../../../api/test/helpers/worker.js';

export const ROOT = path.resolve(import.meta.dirname, '../../..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const DOCS = path.join(ROOT, 'docs/screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * A production build of web/, shared by the browser suites of one run: built once per
 * content of the sources (a hash of web/src, index.html, the Vite config and package.json)
 * into the temp folder, under a lock so files starting together build it once (≈3 s each
 * saved on a 2-core machine).
 */
export function buildDashboard(): string {
  const web = path.join(ROOT, 'web');
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const e of readdirSync(dir).sort()) {
      const p = path.join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else hash.update(path.relative(web, p)).update(readFileSync(p));
    }
  };
  walk(path.join(web, 'src'));
  for (const f of ['index.html', 'vite.config.ts', 'package.json']) hash.update(f).update(readFileSync(path.join(web, f)));
  const out = path.join(tmpdir(), `chatgpu-web-build-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(path.join(out, 'index.html'))) return out;
  const lock = `${out}.lock`;
  for (let waited = 0; ; waited += 100) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another file is building it; a lock older than 2 minutes is from a killed run.
      if (existsSync(path.join(out, 'index.html'))) return out;
      if (waited > 120_000 || Date.now() - statSync(lock, { throwIfNoEntry: false })!.mtimeMs > 120_000) {
        rmSync(lock, { recursive: true, force: true });
        waited = 0;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    if (existsSync(path.join(out, 'index.html'))) return out;
    const tmp = mkdtempSync(`${out}-tmp-`);
    const local = path.join(web, 'node_modules/vite/bin/vite.js');
    const vite = existsSync(local) ? local : path.join(ROOT, 'node_modules/vite/bin/vite.js');
    const r = spawnSync(process.execPath, [vite, 'build', web, '--outDir', tmp, '--emptyOutDir', '--logLevel', 'error'], {
      cwd: ROOT,
      encoding: 'utf8',
      // vitest runs with NODE_ENV=test, which would give a development build of React.
      env: { ...process.env, NODE_ENV: 'production' },
    });
    if (r.status !== 0) throw new Error(`vite build failed:\n${r.stdout}\n${r.stderr}`);
    renameSync(tmp, out);
    // Builds of older sources are of no further use.
    for (const e of readdirSync(tmpdir())) {
      const p = path.join(tmpdir(), e);
      if (
        e.startsWith('chatgpu-web-build-') &&
        p !== out &&
        !e.endsWith('.lock') &&
        Date.now() - (statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? 0) > 600_000
      ) {
        rmSync(p, { recursive: true, force: true });
      }
    }
    return out;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** A TCP proxy in front of the API: `drop()` cuts every connection and refuses new ones until `restore()`. */
export async function startProxy(targetPort: number) {
  const sockets = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) return client.destroy();
    const upstream = new Socket();
    upstream.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    drop() {
      down = true;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export interface Dashboard {
  server: RunningServer;
  /** What the browser opens (through the proxy). */
  url: string;
  apiUrl: string;
  proxy: Awaited<ReturnType<typeof startProxy>>;
  browser: Browser;
  prisma: RunningServer['db']['prisma'];
  gql<T = any>(query: string, variables?: Record<string, unknown>, token?: string): Promise<{ data?: T; errors?: any[] }>;
  signUp(email?: string): Promise<{ token: string; userId: string; email: string }>;
  putBlob(content: Buffer | string, token: string): Promise<string>;
  /** A page already signed in with `token` (the session lives in localStorage), in a new context or in `context` (a second tab). */
  page(token: string | null, context?: BrowserContext): Promise<Page>;
  context(): Promise<BrowserContext>;
  /** Appends a JobEvent row and announces it, as the domain does. */
  event(jobId: string, kind: string, payload: Record<string, unknown>): Promise<string>;
  jobUpdated(jobId: string): Promise<void>;
}

/**
 * `opts.model`: the agents' model (default none: seeded suites write plans themselves);
 * `opts.scheduler`: run the scheduler tick (default off, as in the API's own tests).
 */
export async function startDashboard(
  env: Record<string, string> = {},
  opts: { model?: ModelClient | null; scheduler?: boolean } = {},
): Promise<Dashboard> {
  const webDir = buildDashboard();
  // The browser starts while the database is cloned and the API starts.
  const launching = chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    // playwright-core gives the browser a fresh temporary --user-data-dir and removes it on close.
  });
  launching.catch(() => {});
  const dataDir = mkdtempSync(path.join(tmpdir(), 'chatgpu-webtest-'));
  let server: RunningServer;
  try {
    const databaseUrl = await createTestDatabase();
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, CHATGPU_DATA_DIR: dataDir, ...env });
    // Unexpected server errors are printed: a browser test that waits in vain then says why.
    const log = { ...silentLogger, error: (m: string, data?: Record<string, unknown>) => console.error(`[api] ${m}`, data ?? '') };
    // The job engine with the agents, as the API suites' helper (api/test/helpers/api.ts): pages
    // whose jobs the test builds by hand are not moved on under them.
    server = await startServer({
      config,
      log,
      webDir,
      model: opts.model ?? null,
      engine: Boolean(opts.model),
      scheduler: opts.scheduler ?? false,
    });
  } catch (err) {
    await (await launching.catch(() => null))?.close();
    throw err;
  }
  const proxy = await startProxy(server.port);
  const browser = await launching;
  const contexts: BrowserContext[] = [];
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser.close().catch(() => {});
    await proxy.close();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const gql: Dashboard['gql'] = async (query, variables, token) => {
    const res = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as { data?: any; errors?: any[] };
  };

  const context = async () => {
    // Playwright gives each context a fresh profile; the viewport makes screenshots stable.
    const c = await browser.newContext({ viewport: { width: 1360, height: 900 }, acceptDownloads: true, colorScheme: 'light' });
    contexts.push(c);
    return c;
  };

  const d: Dashboard = {
    server,
    url: proxy.url,
    apiUrl: server.url,
    proxy,
    browser,
    prisma: server.db.prisma,
    gql,
    async signUp(email) {
      const e = email ?? `u${randomBytes(6).toString('hex')}@example.com`;
      const r = await gql(`mutation($i: SignUpInput!) { signUp(input: $i) { __typename ... on AuthPayload { token user { id } } } }`, {
        i: { email: e, password: 'correct horse battery' },
      });
      if (r.data?.signUp?.__typename !== 'AuthPayload') throw new Error(`signUp failed: ${JSON.stringify(r)}`);
      return { token: r.data.signUp.token, userId: rawId(r.data.signUp.user.id), email: e };
    },
    async putBlob(content, token) {
      const buf = Buffer.isBuffer(content) ? content : Buffer.from(content);
      const sha = createHash('sha256').update(buf).digest('hex');
      const res = await fetch(`${server.url}/blobs/${sha}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}` },
        body: new Uint8Array(buf),
      });
      if (res.status !== 201) throw new Error(`putBlob: HTTP ${res.status}`);
      return sha;
    },
    async page(token, existing) {
      const c = existing ?? (await context());
      if (token) await c.addInitScript((t) => localStorage.setItem('chatgpu.token', t), token);
      const p = await c.newPage();
      // Browser-side errors go to the test output: a failing wait then says why.
      p.on('pageerror', (e) => console.error(`[browser] ${e.message}`));
      p.on('console', (m) => m.type() === 'error' && console.error(`[browser console] ${m.text()}`));
      p.on(
        'response',
        (r) =>
          r.status() >= 500 &&
          console.error(`[browser] HTTP ${r.status()} ${r.request().method()} ${r.url()} ${r.request().postData()?.slice(0, 300) ?? ''}`),
      );
      return p;
    },
    context,
    async event(jobId, kind, payload) {
      const row = await server.db.prisma.jobEvent.create({ data: { jobId, kind, payload: payload as never }, select: { id: true } });
      const eventId = row.id.toString();
      await server.pubsub.emit({ type: 'job.event', jobId, eventId });
      return eventId;
    },
    async jobUpdated(jobId) {
      await server.pubsub.emit({ type: 'job.updated', jobId });
    },
  };
  return d;
}

export function rawId(globalId: string): string {
  return Buffer.from(globalId, 'base64').toString('utf8').split(':').slice(1).join(':');
}

export function globalId(type: string, uuid: string): string {
  return Buffer.from(`${type}:${uuid}`).toString('base64');
}

/**
 * Saves a screenshot as a test artifact and, with `docs`, as the README's copy (only the
 * real flow writes those: every screenshot in the README shows a real run).
 */
export async function screenshot(page: Page, name: string, opts: { docs?: boolean; fullPage?: boolean } = {}) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const buf = await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: opts.fullPage ?? true });
  if (opts.docs) {
    mkdirSync(DOCS, { recursive: true });
    await page.screenshot({ path: path.join(DOCS, `${name}.png`), fullPage: opts.fullPage ?? true });
  }
  return buf;
}

/** A worker (with its token) owned by `userId`, as workerHello would register it. */
export async function seedWorker(
  d: Dashboard,
  userId: string,
  name: string,
  capabilities: Record<string, unknown>,
  status: 'ONLINE' | 'PAUSED' | 'OFFLINE' = 'ONLINE',
) {
  const token = await d.prisma.workerToken.create({
    data: { userId, name: `${name}-token`, tokenHash: randomBytes(32).toString('hex'), prefix: 'cgw_test' },
  });
  const accel = (capabilities.accelerators as { vendor: string; memoryMiB: number }[] | undefined)?.[0];
  return d.prisma.worker.create({
    data: {
      ownerId: userId,
      tokenId: token.id,
      name,
      status,
      capabilities: capabilities as never,
      workloads: (capabilities.workloads as string[]) ?? [],
      accelVendor: accel?.vendor ?? 'none',
      accelMemMiB: accel?.memoryMiB ?? 0,
      memoryMiB: (capabilities.memoryMiB as number) ?? 0,
      cpuCores: ((capabilities.cpu as { cores: number }) ?? { cores: 0 }).cores,
      version: '0.1.0',
    },
  });
}

export const CPU_CAPS = {
  os: 'linux',
  arch: 'x64',
  hostname: 'box',
  cpu: { model: 'AMD EPYC 7763', cores: 16 },
  memoryMiB: 65536,
  diskFreeMiB: 200000,
  accelerators: [],
  pythons: [
    {
      path: '/usr/bin/python3',
      version: '3.11.2',
      torch: { version: '1.13.1', cuda: null, hip: null, cudaAvailable: false, mpsAvailable: false, deviceCount: 0 },
      numpy: '1.24.2',
    },
  ],
  python: '/usr/bin/python3',
  toolchains: { nvcc: null, hipcc: null },
  workloads: ['python', 'torch-cpu', 'shell'],
  sandbox: 'bwrap',
  probeErrors: [],
};

export const NVIDIA_CAPS = {
  os: 'linux',
  arch: 'x64',
  hostname: 'rig',
  cpu: { model: 'Intel Core i9-13900K', cores: 24 },
  memoryMiB: 131072,
  diskFreeMiB: 900000,
  accelerators: [
    {
      vendor: 'nvidia',
      index: 0,
      name: 'NVIDIA GeForce RTX 4090',
      memoryMiB: 24564,
      driver: '550.54',
      runtime: 'cuda 12.4',
      arch: 'sm_89',
    },
  ],
  pythons: [
    {
      path: '/usr/bin/python3',
      version: '3.11.8',
      torch: { version: '2.3.0', cuda: '12.1', hip: null, cudaAvailable: true, mpsAvailable: false, deviceCount: 1 },
      numpy: '1.26.4',
    },
  ],
  python: '/usr/bin/python3',
  toolchains: { nvcc: '12.4', hipcc: null },
  workloads: ['python', 'torch-cpu', 'torch-cuda', 'cuda-cxx', 'shell'],
  sandbox: 'bwrap',
  probeErrors: [],
};

/** A job created through the API (real upload + createJob), returning ids. */
export async function createJob(
  d: Dashboard,
  token: string,
  title: string,
  files: Record<string, string> = { 'train.py': 'print("hi")\n' },
) {
  const list = [];
  for (const [p, content] of Object.entries(files)) list.push({ path: p, sha256: await d.putBlob(content, token) });
  const r = await d.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id originalCode { id } } ... on Error { message } } }`,
    { i: { title, request: `Run ${title}`, files: list } },
    token,
  );
  if (r.data?.createJob?.__typename !== 'Job') throw new Error(`createJob failed: ${JSON.stringify(r)}`);
  return { id: r.data.createJob.id as string, uuid: rawId(r.data.createJob.id), codeVersionId: r.data.createJob.originalCode.id as string };
}

/** A RUN task with one RUNNING attempt on `workerId`, announced as the scheduler will. */
export async function seedRunningAttempt(
  d: Dashboard,
  job: { uuid: string; codeVersionId: string },
  ownerId: string,
  workerId: string,
  name = 'train',
) {
  const now = new Date();
  const task = await d.prisma.task.create({
    data: {
      jobId: job.uuid,
      ownerId,
      kind: 'RUN',
      role: 'RUN',
      name,
      codeVersionId: job.codeVersionId,
      command: 'python train.py',
      status: 'RUNNING',
      attemptCount: 1,
    },
  });
  const attempt = await d.prisma.attempt.create({
    data: {
      taskId: task.id,
      number: 1,
      workerId,
      fencingToken: randomBytes(8).toString('hex'),
      leaseExpiresAt: new Date(now.getTime() + 30_000),
      status: 'RUNNING',
      startedAt: now,
    },
  });
  await d.prisma.task.update({ where: { id: task.id }, data: { currentAttemptId: attempt.id } });
  await d.prisma.job.update({ where: { id: job.uuid }, data: { status: 'RUNNING', startedAt: now } });
  await d.event(job.uuid, 'job.status', { status: 'RUNNING' });
  await d.event(job.uuid, 'task.created', { taskId: task.id, name, kind: 'RUN' });
  await d.event(job.uuid, 'attempt.status', { attemptId: attempt.id, number: 1, workerName: 'rig-4090', status: 'RUNNING' });
  await d.jobUpdated(job.uuid);
  return { task, attempt };
}

/** Stores log lines [from, from+count) of an attempt and announces them (as appendLogs will). */
export async function seedLogs(d: Dashboard, jobId: string, attemptId: string, from: number, texts: string[], stream = 'stdout') {
  await d.prisma.logChunk.createMany({ data: texts.map((text, i) => ({ attemptId, seq: from + i, stream, text })) });
  await d.server.pubsub.emit({ type: 'job.logs', jobId, attemptId, fromSeq: from, toSeq: from + texts.length - 1 });
}

export async function seedMetrics(
  d: Dashboard,
  jobId: string,
  attemptId: string,
  points: { seq: number; name: string; step: number; value: number }[],
) {
  await d.prisma.metricPoint.createMany({ data: points.map((p) => ({ attemptId, ...p })) });
  const seqs = points.map((p) => p.seq);
  await d.server.pubsub.emit({ type: 'job.metrics', jobId, attemptId, fromSeq: Math.min(...seqs), toSeq: Math.max(...seqs) });
}

/**
 * The dashboard with the builtin planner and the scheduler (1 s tick and heartbeat), a user,
 * and one real worker of theirs named `workerName` started with `workerArgs`: the set-up of
 * the page tests that run a real job end to end.
 */
export async function startDashboardWithWorker(workerName: string, workerArgs: string[]) {
  const d = await startDashboard({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
  const user = await d.signUp();
  const wt = await d.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
  await startWorker(d.apiUrl, wt.data.createWorkerToken.token, workerName, workerArgs);
  return { d, user };
}
