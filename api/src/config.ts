/**
 * The only reader of process.env. Everything else takes its configuration as arguments.
 */
import path from 'node:path';
import { z } from 'zod';

/** An IP address (v4, or v6 in brackets) has no subdomains. */
export function isIpAddress(hostname: string): boolean {
  return /^[\d.]+$/.test(hostname) || hostname.startsWith('[');
}

/** Why a SERVICE_PUBLIC_URL cannot be used, or null (services get `<slug>.<host>`: domain/services/serviceOrigin.ts). */
export function serviceBaseProblem(value: string): string | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'not a URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be http: or https:';
  if (u.pathname !== '/' || u.search || u.hash || u.username || u.password)
    return 'must be a bare origin (scheme, host, optional port): services get <slug>.<host>';
  if (isIpAddress(u.hostname)) return 'must be a host name, not an IP address: services get <slug>.<host>';
  return null;
}

/** How far workers' results are trusted (domain/trust/reputation.ts applies it); TRUST_* variables override the defaults. */
export interface TrustPolicy {
  /** Below this reputation a worker gets no checkable work. */
  minReputation: number;
  /** A worker with fewer confirmed results than this has every checkable result replicated. */
  newWorkerChecks: number;
  /** The least share of a trusted worker's checkable results that is still replicated. */
  minShare: number;
  /** How many confirmed results one result found wrong weighs. */
  mismatchWeight: number;
  /** A tie-breaker needs at most this reputation (0.75: two confirmed results, none wrong). */
  trustedReputation: number;
}

export const DEFAULT_TRUST_POLICY: TrustPolicy = {
  minReputation: 0.3,
  newWorkerChecks: 3,
  minShare: 0.05,
  mismatchWeight: 5,
  trustedReputation: 0.75,
};

const int = (def: number) => z.coerce.number().int().positive().default(def);
const num = (def: number) => z.coerce.number().nonnegative().default(def);

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  /** The address the API listens on: this machine only unless set (0.0.0.0 or an interface's address opens it to the network). */
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.string().url().optional(),
  /** How long an API started while PostgreSQL is unreachable (or still starting) waits for it before it gives up. */
  DATABASE_WAIT_SEC: z.coerce.number().int().min(0).max(86_400).default(120),
  CHATGPU_DATA_DIR: z.string().optional(),
  CHATGPU_PUBLIC_URL: z.string().url().optional(),
  /** How other API processes reach this one (hosted services' requests are forwarded to the process holding the tunnel); default http://127.0.0.1:PORT. */
  CHATGPU_INTERNAL_URL: z.string().url().optional(),
  /**
   * Where hosted services answer browsers, each on a host of its own: `<slug>.<this host>`
   * (default: svc. under CHATGPU_PUBLIC_URL's host, else http://svc.localhost:PORT). Needs a
   * wildcard DNS name (and certificate) that reaches the API with the Host header kept.
   */
  SERVICE_PUBLIC_URL: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      const problem = v === undefined ? null : serviceBaseProblem(v);
      if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
    }),
  SVC_MAX_REQUEST_BYTES: int(10 * 1024 ** 2),
  SVC_REQUEST_TIMEOUT_SEC: int(60),
  SVC_MAX_STREAMS: int(64),
  BLOB_MAX_BYTES: int(2 * 1024 ** 3),
  /** Where blobs live: this host's disk (fs, one host only), an S3-compatible store, or PostgreSQL. */
  BLOB_STORE: z.enum(['fs', 's3', 'postgres']).default('fs'),
  S3_ENDPOINT: z.string().url().optional(),
  S3_BUCKET: z.string().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false', '1', '0']).default('false'),
  S3_PREFIX: z.string().default(''),
  S3_PART_MB: z.coerce.number().int().min(5).max(5120).default(8),
  S3_QUEUE_SIZE: int(4),
  /** > 0: downloads of blobs at least BLOB_PRESIGN_MIN_BYTES redirect to a presigned URL valid this long (s3 only). */
  S3_PRESIGN_SEC: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600)
    .default(0),
  BLOB_PRESIGN_MIN_BYTES: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(64 * 1024 ** 2),
  BLOB_PG_CHUNK_KB: z.coerce
    .number()
    .int()
    .min(16)
    .max(64 * 1024)
    .default(1024),
  ARCHIVE_MAX_ENTRIES: int(10_000),
  ARCHIVE_MAX_BYTES: int(2 * 1024 ** 3),
  ARCHIVE_MAX_RATIO: int(200),
  GRAPHQL_MAX_DEPTH: int(12),
  GRAPHQL_MAX_COST: int(50_000),
  TICK_INTERVAL_SEC: int(2),
  LEASE_SEC: int(30),
  HEARTBEAT_SEC: int(5),
  WORKER_OFFLINE_SEC: int(60),
  /** A RUNNING attempt with no log line or metric for this many minutes (its lease renewed) is reported to the run supervisor as stalled. */
  STALL_MIN: int(30),
  /** A worker that loses this many attempts (lease ran out: LOST or STALE) within FLAP_WINDOW_MIN is flapping: the run supervisor keeps the affected jobs' retries off it. */
  FLAP_LOST: int(3),
  FLAP_WINDOW_MIN: int(30),
  /** Black holes (domain/workers/blackHoles.ts): a worker whose failed attempts, within BLACK_HOLE_WINDOW_MIN, are on tasks of this many jobs that then succeeded on other workers is quarantined. */
  BLACK_HOLE_JOBS: z.coerce.number().int().min(1).default(3),
  BLACK_HOLE_WINDOW_MIN: int(60),
  /** How long a quarantine lasts (the cool-down) before the worker may claim work again. */
  QUARANTINE_MIN: int(30),
  /** Infrastructure failures (the worker, not the code: leases/retryOrFail.ts) a task may have before it fails; they do not count against its maxAttempts. */
  INFRA_RETRIES: int(10),
  RETRY_BASE_SEC: num(2),
  /** A PyTorch training run the smoke run estimates longer than this (seconds) is planned again with the checkpoint-resume step. */
  RESUME_THRESHOLD_SEC: int(600),
  /** Trust (domain/trust/reputation.ts): below this reputation a worker gets no checkable work. */
  TRUST_MIN_REPUTATION: num(0.3),
  /** A worker with fewer confirmed results than this has every checkable result replicated. */
  TRUST_NEW_WORKER_CHECKS: int(3),
  /** The least share of a trusted worker's checkable results still replicated. */
  TRUST_MIN_SHARE: num(0.05),
  /** A replica or tie-breaker that no online worker can take (none of another owner, or too small) is given up after this many seconds: the result is accepted unverified (after a mismatch the job fails). */
  TRUST_REPLICA_WAIT_SEC: int(300),
  /** A data-download step that only refusing workers could run (online, able to run it but for their --allow-network) fails after waiting this many seconds, so its job stops before the run naming the URLs and the policies; with no worker online at all it keeps waiting (domain/workers/downloadWait.ts). */
  DOWNLOAD_WAIT_SEC: int(300),
  RATE_CPU_CORE_HOUR_CAD: num(0.02),
  RATE_RAM_GB_HOUR_CAD: num(0.003),
  RATE_GPU_HOUR_CAD: num(0.4),
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
  OPENAI_MODEL: z.string().default('gpt-5-mini'),
  /** What an OpenAI model's tokens cost the job (CAD per million input / output tokens; gpt-5-mini's list price): the agents' model calls count toward the job's cost and cap. */
  AGENT_INPUT_CAD_PER_MTOK: num(0.35),
  AGENT_OUTPUT_CAD_PER_MTOK: num(2.8),
  AGENT_MAX_MODEL_CALLS: int(8),
  AGENT_MAX_TOOL_CALLS: int(8),
  AGENT_TURN_SEC: int(90),
  SENTRY_DSN: z.string().optional(),
  /**
   * Sentry's web API, read by the supervisor's search_logs (the structured logs the API and the
   * workers send): its base URL (https://sentry.io, or a self-hosted one), an auth token with
   * org:read, the organization slug, and optionally the numeric project id. All three of URL,
   * token and org, or search_logs answers from stored logs only.
   */
  SENTRY_API_URL: z.string().url().optional(),
  SENTRY_AUTH_TOKEN: z.string().optional(),
  SENTRY_ORG: z.string().optional(),
  SENTRY_PROJECT: z.string().regex(/^\d+$/, 'a numeric project id').optional(),
  /** Comma-separated emails of operators: they see every job's preparation records (not only their own). */
  CHATGPU_OPERATORS: z.string().default(''),
  /**
   * Who may create an account with signUp: anyone (open) or no one (closed: only accounts that
   * exist, e.g. the embedded default's local user). Default: closed on the embedded default (no
   * DATABASE_URL), open on a deployment.
   */
  CHATGPU_SIGNUP: z.enum(['open', 'closed']).optional(),
  /** `npm start` on a machine whose Python lacks PyTorch: install Debian's python3-torch (auto, as root with apt) or never. */
  CHATGPU_INSTALL_TORCH: z.enum(['auto', 'never']).default('auto'),
  /** `npm start` on a machine without bubblewrap: install Debian's bubblewrap (auto, as root with apt) or never (the local worker then runs only the local user's jobs, unsandboxed). */
  CHATGPU_INSTALL_SANDBOX: z.enum(['auto', 'never']).default('auto'),
  NODE_ENV: z.string().default('development'),
  /**
   * Workers started with --simulate-accelerator (tests and demos: they advertise a GPU class while
   * their numerics run on the CPU). Accepted outside production; a production API refuses them
   * unless this is `true`.
   */
  CHATGPU_ALLOW_SIMULATED_ACCELERATORS: z.enum(['true', 'false']).optional(),
});

export interface BlobsConfig {
  maxBytes: number;
  store: 'fs' | 's3' | 'postgres';
  /** Set when store is 's3'. */
  s3: {
    endpoint: string | undefined;
    bucket: string;
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
    forcePathStyle: boolean;
    prefix: string;
    partBytes: number;
    queueSize: number;
    presignSec: number;
  } | null;
  presignMinBytes: number;
  postgresChunkBytes: number;
}

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  databaseWaitSec: number;
  dataDir: string;
  publicUrl: string | undefined;
  internalUrl: string | undefined;
  /** Hosted services' proxy: request body limit, time to the response head, concurrent requests per tunnel. */
  services: { publicUrl: string | undefined; maxRequestBytes: number; requestTimeoutSec: number; maxStreams: number };
  blobs: BlobsConfig;
  archive: { maxEntries: number; maxBytes: number; maxRatio: number };
  graphql: { maxDepth: number; maxCost: number };
  scheduler: {
    tickIntervalSec: number;
    leaseSec: number;
    heartbeatSec: number;
    workerOfflineSec: number;
    /** Minutes without output before a running attempt counts as stalled. */
    stallMin: number;
    /** Lost attempts within flapWindowMin that make a worker flapping. */
    flapLost: number;
    flapWindowMin: number;
    retryBaseSec: number;
    /** Jobs with failures of one worker, within blackHoleWindowMin, that succeeded elsewhere: quarantined for quarantineMin. */
    blackHoleJobs: number;
    blackHoleWindowMin: number;
    quarantineMin: number;
    /** Infrastructure failures a task may have (not counted against maxAttempts) before it fails. */
    infraRetries: number;
    /** Seconds a data-download step waits while only workers whose --allow-network refuses it are online, before it fails. */
    downloadWaitSec: number;
  };
  rates: { cpuCoreHourCad: number; ramGbHourCad: number; gpuHourCad: number };
  /** Preparation policy: the run length (smoke run's estimate, seconds) above which training is made resumable. */
  preparation: { resumeThresholdSec: number };
  trust: TrustPolicy & { replicaWaitSec: number };
  openai: { apiKey: string | undefined; baseUrl: string | undefined; model: string };
  agents: { maxModelCalls: number; maxToolCalls: number; turnSec: number; inputCadPerMTok: number; outputCadPerMTok: number };
  sentryDsn: string | undefined;
  /** Sentry's web API for search_logs; null when not configured. */
  sentryApi: { url: string; token: string; org: string; project: string | null } | null;
  /** Lower-cased operator emails. */
  operators: string[];
  /** Whether signUp creates accounts (CHATGPU_SIGNUP). */
  signUp: 'open' | 'closed';
  /** The embedded default's local worker (npm start). */
  localWorker: { installTorch: 'auto' | 'never'; installSandbox: 'auto' | 'never' };
  production: boolean;
  /** Whether workerHello accepts a worker with a simulated accelerator (always outside production). */
  allowSimulatedAccelerators: boolean;
}

function blobsConfig(e: z.infer<typeof EnvSchema>): BlobsConfig {
  if (e.BLOB_STORE === 's3' && !e.S3_BUCKET) throw new Error('Invalid configuration: S3_BUCKET: required when BLOB_STORE=s3');
  if (Boolean(e.S3_ACCESS_KEY_ID) !== Boolean(e.S3_SECRET_ACCESS_KEY)) {
    throw new Error(
      'Invalid configuration: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together (or neither: the AWS default credential chain)',
    );
  }
  return {
    maxBytes: e.BLOB_MAX_BYTES,
    store: e.BLOB_STORE,
    s3:
      e.BLOB_STORE === 's3'
        ? {
            endpoint: e.S3_ENDPOINT,
            bucket: e.S3_BUCKET!,
            region: e.S3_REGION,
            credentials: e.S3_ACCESS_KEY_ID ? { accessKeyId: e.S3_ACCESS_KEY_ID, secretAccessKey: e.S3_SECRET_ACCESS_KEY! } : undefined,
            forcePathStyle: e.S3_FORCE_PATH_STYLE === 'true' || e.S3_FORCE_PATH_STYLE === '1',
            prefix: e.S3_PREFIX,
            partBytes: e.S3_PART_MB * 1024 ** 2,
            queueSize: e.S3_QUEUE_SIZE,
            presignSec: e.S3_PRESIGN_SEC,
          }
        : null,
    presignMinBytes: e.BLOB_PRESIGN_MIN_BYTES,
    postgresChunkBytes: e.BLOB_PG_CHUNK_KB * 1024,
  };
}

/** `overrides`: settings given on the command line (`npm start --host … --port …`), validated like the environment and taking precedence over it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), overrides: Record<string, string> = {}): Config {
  const parsed = EnvSchema.safeParse({ ...env, ...overrides });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${issues}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databaseWaitSec: e.DATABASE_WAIT_SEC,
    dataDir: path.resolve(cwd, e.CHATGPU_DATA_DIR ?? '.chatgpu'),
    publicUrl: e.CHATGPU_PUBLIC_URL,
    internalUrl: e.CHATGPU_INTERNAL_URL,
    services: {
      publicUrl: e.SERVICE_PUBLIC_URL,
      maxRequestBytes: e.SVC_MAX_REQUEST_BYTES,
      requestTimeoutSec: e.SVC_REQUEST_TIMEOUT_SEC,
      maxStreams: e.SVC_MAX_STREAMS,
    },
    blobs: blobsConfig(e),
    archive: { maxEntries: e.ARCHIVE_MAX_ENTRIES, maxBytes: e.ARCHIVE_MAX_BYTES, maxRatio: e.ARCHIVE_MAX_RATIO },
    graphql: { maxDepth: e.GRAPHQL_MAX_DEPTH, maxCost: e.GRAPHQL_MAX_COST },
    scheduler: {
      tickIntervalSec: e.TICK_INTERVAL_SEC,
      leaseSec: e.LEASE_SEC,
      heartbeatSec: e.HEARTBEAT_SEC,
      workerOfflineSec: e.WORKER_OFFLINE_SEC,
      stallMin: e.STALL_MIN,
      flapLost: e.FLAP_LOST,
      flapWindowMin: e.FLAP_WINDOW_MIN,
      retryBaseSec: e.RETRY_BASE_SEC,
      blackHoleJobs: e.BLACK_HOLE_JOBS,
      blackHoleWindowMin: e.BLACK_HOLE_WINDOW_MIN,
      quarantineMin: e.QUARANTINE_MIN,
      infraRetries: e.INFRA_RETRIES,
      downloadWaitSec: e.DOWNLOAD_WAIT_SEC,
    },
    preparation: { resumeThresholdSec: e.RESUME_THRESHOLD_SEC },
    rates: {
      cpuCoreHourCad: e.RATE_CPU_CORE_HOUR_CAD,
      ramGbHourCad: e.RATE_RAM_GB_HOUR_CAD,
      gpuHourCad: e.RATE_GPU_HOUR_CAD,
    },
    trust: {
      ...DEFAULT_TRUST_POLICY,
      minReputation: e.TRUST_MIN_REPUTATION,
      newWorkerChecks: e.TRUST_NEW_WORKER_CHECKS,
      minShare: e.TRUST_MIN_SHARE,
      replicaWaitSec: e.TRUST_REPLICA_WAIT_SEC,
    },
    openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL, model: e.OPENAI_MODEL },
    agents: {
      maxModelCalls: e.AGENT_MAX_MODEL_CALLS,
      maxToolCalls: e.AGENT_MAX_TOOL_CALLS,
      turnSec: e.AGENT_TURN_SEC,
      inputCadPerMTok: e.AGENT_INPUT_CAD_PER_MTOK,
      outputCadPerMTok: e.AGENT_OUTPUT_CAD_PER_MTOK,
    },
    sentryDsn: e.SENTRY_DSN || undefined,
    sentryApi:
      e.SENTRY_API_URL && e.SENTRY_AUTH_TOKEN && e.SENTRY_ORG
        ? { url: e.SENTRY_API_URL.replace(/\/+$/, ''), token: e.SENTRY_AUTH_TOKEN, org: e.SENTRY_ORG, project: e.SENTRY_PROJECT ?? null }
        : null,
    operators: e.CHATGPU_OPERATORS.split(',')
      .map((x) => x.trim().toLowerCase())
      .filter(Boolean),
    signUp: e.CHATGPU_SIGNUP ?? (e.DATABASE_URL ? 'open' : 'closed'),
    localWorker: { installTorch: e.CHATGPU_INSTALL_TORCH, installSandbox: e.CHATGPU_INSTALL_SANDBOX },
    production: e.NODE_ENV === 'production',
    allowSimulatedAccelerators: e.NODE_ENV !== 'production' || e.CHATGPU_ALLOW_SIMULATED_ACCELERATORS === 'true',
  };
}
