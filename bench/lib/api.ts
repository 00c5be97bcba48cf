/**
 * The ChatGPU side of a benchmark: a real API in a child process (apiProcess.mjs: the API's
 * bundle, as `npm start` runs it) over a
 * fresh database, the user-side set-up over GraphQL (user, worker tokens, a job with one
 * uploaded file), and a second in-process set of domain Resources on the same database
 * for `createTask` — tasks are created by the domain (the planner does it in
 * production; there is no createTask mutation), and its NOTIFY reaches the API's
 * long-pollers exactly as a second API process's would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../api/src/config.js';
import { openDatabase, type Database } from '../../api/src/db/client.js';
import { createBlobStore } from '../../api/src/domain/blobs/createBlobStore.js';
import { createTask, createTasks, type CreateTaskInput } from '../../api/src/domain/jobs/createTask.js';
import { silentLogger, type Resources } from '../../api/src/domain/resources.js';
import { PubSub } from '../../api/src/graphql/pubsub.js';
import { repoRoot } from '../../api/src/paths.js';
import { ensureApiBundle } from '../../scripts/apiBundle.mjs';

const benchDir = path.resolve(import.meta.dirname, '..');
export { repoRoot };

export interface ApiStats {
  /** process.cpuUsage() of the API process, microseconds. */
  cpu: { user: number; system: number };
  elu: { idle: number; active: number; utilization: number };
  rssMiB: number;
  /** Unexpected errors the API logged. */
  errors: number;
}

export interface BenchApi {
  url: string;
  pid: number;
  dataDir: string;
  /** Scheduler ticks node-cron skipped because the previous tick was still running. */
  tickOverruns(): number;
  stats(): Promise<ApiStats>;
  stop(): Promise<void>;
  /** SIGKILL: the process vanishes mid-request (its data dir stays when it was given). */
  kill(): Promise<void>;
}

export interface StartApiOptions {
  /** A fixed port (default: any free one), so that a restarted API answers where its workers look. */
  port?: number;
  /** A data dir (blobs) shared with other API processes on the same database; kept by stop(). */
  dataDir?: string;
  /** Where the API's output lines go (default: this process's stderr). */
  onLine?: (line: string) => void;
}

/** Starts the API (its own process) on `databaseUrl`; `env` sets config (LEASE_SEC, …). */
export async function startApi(databaseUrl: string, env: Record<string, string> = {}, opts: StartApiOptions = {}): Promise<BenchApi> {
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'chatgpu-bench-')));
  // BENCH_API_NODE_ARGS: extra node flags for the API process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const nodeArgs = (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
  await ensureApiBundle(); // once here, not in every API process at once
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, path.join(benchDir, 'lib/apiProcess.mjs')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      CHATGPU_DATA_DIR: dataDir,
      ...(opts.port ? { BENCH_API_PORT: String(opts.port) } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // Forward the API's output, but count node-cron's overlap warnings instead of printing them.
  let overruns = 0;
  for (const stream of [child.stdout!, child.stderr!]) {
    let buf = '';
    stream.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) {
        if (/NODE-CRON.*overlap prevention/.test(line)) overruns++;
        else if (line.trim()) (opts.onLine ?? ((l) => process.stderr.write(`${l}\n`)))(line);
      }
    });
  }
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let statsWaiter: ((s: ApiStats) => void) | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    // 3 minutes: on a loaded machine (load average 20) the API's start took over a minute.
    const t = setTimeout(() => reject(new Error('the API did not start within 180 s')), 180_000);
    child.on('message', (m: { type: string; url?: string } & ApiStats) => {
      if (m.type === 'ready') {
        clearTimeout(t);
        resolve(m.url!);
      } else if (m.type === 'cpu') statsWaiter?.(m);
    });
    void exited.then(() => reject(new Error(`the API process exited (${child.exitCode ?? child.signalCode})`)));
  });
  return {
    url,
    pid: child.pid!,
    dataDir,
    tickOverruns: () => overruns,
    stats: () =>
      new Promise<ApiStats>((resolve) => {
        statsWaiter = resolve;
        child.send({ type: 'cpu' });
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.send({ type: 'stop' });
        const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(t);
      }
      if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** CPU seconds between two stats() snapshots. */
export function cpuSeconds(a: ApiStats, b: ApiStats): number {
  return (b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system) / 1e6;
}

export interface GqlResult<T> {
  data?: T;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

/**
 * Kept-alive connections for gql(). node:http rather than fetch: the load generator shares the
 * machine with the API and PostgreSQL, and fetch cost it ≈ 2.7× the CPU (heartbeats: 51–53 % of a core at
 * 1,000 requests/s against 18–19 %, which moved the API's p99 from 65–70 to 37–38 ms).
 */
const agent = new http.Agent({ keepAlive: true });

/** One GraphQL request over HTTP (kept-alive connections). Throws on transport or HTTP failure. */
export function gql<T = any>(
  url: string,
  query: string,
  variables: Record<string, unknown>,
  token?: string,
  signal?: AbortSignal,
): Promise<GqlResult<T>> {
  const body = JSON.stringify({ query, variables });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/graphql`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        ...(signal ? { signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as GqlResult<T>;
            if ((res.statusCode ?? 0) >= 300) reject(new Error(`HTTP ${res.statusCode}: ${JSON.stringify(parsed).slice(0, 500)}`));
            else resolve(parsed);
          } catch (err) {
            reject(new Error(`HTTP ${res.statusCode}: not JSON (${(err as Error).message})`));
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface Owner {
  userToken: string;
  workerTokens: string[];
  /** The jobs tasks are created in (round-robin); at least one. */
  jobs: { jobId: string; codeVersionId: string }[];
}

/** A user with `workerTokens` worker tokens and `jobs` jobs (one uploaded file each), all over the public API. */
export async function setUpOwner(
  api: BenchApi,
  workerTokens: number,
  opts: { jobs?: number; concurrency?: number; mainPy?: string } = {},
): Promise<Owner> {
  const concurrency = opts.concurrency ?? 8;
  const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
  const s = await gql(
    api.url,
    `mutation($i: SignUpInput!) { signUp(input: $i) { __typename ... on AuthPayload { token } ... on Error { message } } }`,
    {
      i: { email, password: 'benchmark password 1' },
    },
  );
  const userToken: string | undefined = s.data?.signUp?.token;
  if (!userToken) throw new Error(`signUp failed: ${JSON.stringify(s)}`);
  const tokens: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, workerTokens) }, async () => {
      while (next < workerTokens) {
        const i = next++;
        const r = await gql(
          api.url,
          `mutation($n: String!) { createWorkerToken(input: {name: $n}) { __typename ... on CreatedWorkerToken { token } } }`,
          { n: `bench-${i}` },
          userToken,
        );
        const t: string | undefined = r.data?.createWorkerToken?.token;
        if (!t) throw new Error(`createWorkerToken failed: ${JSON.stringify(r)}`);
        tokens[i] = t;
      }
    }),
  );
  const content = Buffer.from(opts.mainPy ?? 'print("benchmark")\n');
  const sha = createHash('sha256').update(content).digest('hex');
  const put = await fetch(`${api.url}/blobs/${sha}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(content),
  });
  if (put.status !== 201 && put.status !== 200) throw new Error(`blob upload failed: HTTP ${put.status} ${await put.text()}`);
  const jobs: Owner['jobs'] = [];
  for (let k = 0; k < Math.max(1, opts.jobs ?? 1); k++) {
    const j = await gql(
      api.url,
      `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id originalCode { id } } ... on Error { message } } }`,
      {
        i: { title: `benchmark ${k}`, request: 'benchmark tasks', files: [{ path: 'main.py', sha256: sha }] },
      },
      userToken,
    );
    const job = j.data?.createJob;
    if (job?.__typename !== 'Job') throw new Error(`createJob failed: ${JSON.stringify(j)}`);
    const jobId = Buffer.from(job.id as string, 'base64')
      .toString('utf8')
      .split(':')
      .slice(1)
      .join(':');
    jobs.push({ jobId, codeVersionId: job.originalCode.id as string });
  }
  return { userToken, workerTokens: tokens, jobs };
}

export interface TaskFactory {
  resources: Resources;
  db: Database;
  /** createTask (domain) in the owner's jobs, round-robin: one transaction, then NOTIFY. */
  create(over?: Partial<CreateTaskInput>): ReturnType<typeof createTask>;
  /** `n` tasks in one call (createTasks: one transaction, one NOTIFY), as graphile-worker's perfTest adds its jobs. */
  createMany(n: number): ReturnType<typeof createTasks>;
  close(): Promise<void>;
}

/** Domain Resources of our own on the benchmark database, as a second API process would have. */
export async function taskFactory(databaseUrl: string, owner: Owner, poolSize = 4): Promise<TaskFactory> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-bench-tasks-'));
  const config = loadConfig({ DATABASE_URL: databaseUrl, CHATGPU_DATA_DIR: dataDir });
  const db = await openDatabase({ databaseUrl, dataDir, migrate: false, poolSize });
  const resources: Resources = {
    prisma: db.prisma,
    events: new PubSub(db), // emit() is a NOTIFY; this side never listens
    blobs: createBlobStore(config, db.prisma),
    config,
    log: silentLogger,
    now: () => new Date(),
  };
  let n = 0;
  const input = (over: Partial<CreateTaskInput> = {}): CreateTaskInput => ({
    ...owner.jobs[n++ % owner.jobs.length]!,
    kind: 'RUN',
    name: 'bench',
    command: 'python main.py',
    requirements: { workload: 'python' },
    ...over,
  });
  return {
    resources,
    db,
    create: (over = {}) => createTask(resources, input(over)),
    createMany: (count) =>
      createTasks(
        resources,
        Array.from({ length: count }, () => input()),
      ),
    async close() {
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
