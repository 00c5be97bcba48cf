/**
 * A test double of a worker machine speaking the worker protocol (docs/architecture.md §5) over
 * real GraphQL HTTP with a worker token — and the user-side set-up it needs (a worker
 * token, a job with an uploaded file, tasks). (helpers/worker.ts starts real worker processes.)
 */
import type { TestApi } from './api.js';
import { rawId } from './api.js';
import { createTask, type CreateTaskInput } from '../../src/domain/jobs/createTask.js';

const BASE_ERR = `... on Error { __typename code message } ... on ValidationError { issues { path message } }`;
const ERR = `${BASE_ERR} ... on NotFoundError { entity }`;
const STALE = `... on StaleAttemptError { reason attemptId }`;

export interface Assignment {
  attemptId: string;
  number: number;
  fencingToken: string;
  leaseExpiresAt: string;
  task: {
    id: string;
    jobId: string;
    kind: string;
    name: string;
    command: string;
    environment: any;
    requirements: any;
    files: { path: string; sha256: string; size: number; mode: number }[];
    inputs: any[];
  };
}

export const CPU_CAPS = {
  os: 'linux',
  arch: 'x64',
  cpu: { model: 'Test CPU', cores: 4 },
  memoryMiB: 8192,
  workloads: ['python', 'torch-cpu', 'shell'],
};

export const NVIDIA_CAPS = {
  os: 'linux',
  arch: 'x64',
  cpu: { model: 'Test CPU', cores: 16 },
  memoryMiB: 65536,
  accelerators: [{ vendor: 'nvidia', name: 'NVIDIA GeForce RTX 4090', memoryMiB: 24564, runtime: 'CUDA 12.4' }],
  workloads: ['python', 'torch-cpu', 'torch-cuda', 'cuda-cxx', 'shell'],
};

export async function createWorkerToken(api: TestApi, userToken: string, name = 'box'): Promise<string> {
  const r = await api.gql(
    `mutation($n: String!) { createWorkerToken(input: {name: $n}) { __typename ... on CreatedWorkerToken { token } } }`,
    { n: name },
    userToken,
  );
  const token = r.data?.createWorkerToken?.token;
  if (!token) throw new Error(`createWorkerToken failed: ${JSON.stringify(r)}`);
  return token;
}

/** A job (via GraphQL createJob with an uploaded blob) and its raw ids. */
export async function createJobWithFile(
  api: TestApi,
  userToken: string,
  opts: { content?: string; spendingCapCad?: number; title?: string } = {},
) {
  const content = opts.content ?? `print("hello ${Math.random()}")\n`;
  const put = await api.putBlob(content, userToken);
  if (put.status !== 201) throw new Error(`upload failed: ${JSON.stringify(put)}`);
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } ... on Error { message } } }`,
    {
      i: {
        title: opts.title ?? 'protocol job',
        request: 'run it',
        files: [{ path: 'main.py', sha256: put.sha256 }],
        ...(opts.spendingCapCad !== undefined ? { spendingCapCad: opts.spendingCapCad } : {}),
      },
    },
    userToken,
  );
  const gid: string = r.data?.createJob?.id;
  if (!gid) throw new Error(`createJob failed: ${JSON.stringify(r)}`);
  const jobId = rawId(gid);
  const cv = await api.server.db.prisma.codeVersion.findFirstOrThrow({ where: { jobId } });
  return { gid, jobId, codeVersionId: cv.id, fileSha: put.sha256, content };
}

export async function addTask(api: TestApi, job: { jobId: string; codeVersionId: string }, over: Partial<CreateTaskInput> = {}) {
  return createTask(api.server.resources, {
    jobId: job.jobId,
    codeVersionId: job.codeVersionId,
    kind: 'RUN',
    name: over.name ?? 'run',
    command: 'python main.py',
    requirements: { workload: 'python' },
    ...over,
  });
}

export class ProtocolWorker {
  workerId = '';
  constructor(
    readonly api: TestApi,
    readonly token: string,
    readonly name: string,
  ) {}

  gql(query: string, variables?: Record<string, unknown>) {
    return this.api.gql(query, variables, this.token);
  }

  async hello(opts: { slots?: number; capabilities?: unknown; version?: string } = {}) {
    const r = await this.gql(
      `mutation($i: WorkerHelloInput!) { workerHello(input: $i) { __typename ... on WorkerHelloResult { workerId leaseSec heartbeatIntervalSec worker { id name status slots workloads capabilities } } ${BASE_ERR} } }`,
      { i: { name: this.name, version: opts.version ?? '0.1.0', slots: opts.slots ?? 1, capabilities: opts.capabilities ?? CPU_CAPS } },
    );
    const h = r.data?.workerHello;
    if (h?.__typename === 'WorkerHelloResult') this.workerId = h.workerId;
    return { ...h, errors: r.errors };
  }

  /** The typed result of claimTask. */
  async claimRaw(opts: { waitMs?: number; max?: number; workerId?: string } = {}) {
    const r = await this.gql(
      `mutation($w: ID!, $wait: Int!, $max: Int!) { claimTask(workerId: $w, waitMs: $wait, max: $max) { __typename
        ... on MutationClaimTaskSuccess { data { attemptId number fencingToken leaseExpiresAt
          task { id jobId kind name command environment requirements files { path sha256 size mode } inputs { path sha256 size mode } } } }
        ${ERR} } }`,
      { w: opts.workerId ?? this.workerId, wait: opts.waitMs ?? 0, max: opts.max ?? 1 },
    );
    return { result: r.data?.claimTask, errors: r.errors };
  }

  async claim(opts: { waitMs?: number; max?: number } = {}): Promise<Assignment[]> {
    const { result, errors } = await this.claimRaw(opts);
    if (result?.__typename !== 'MutationClaimTaskSuccess') throw new Error(`claimTask failed: ${JSON.stringify({ result, errors })}`);
    return result.data;
  }

  async heartbeat(leases: { attemptId: string; fencingToken: string }[]) {
    const r = await this.gql(
      `mutation($w: ID!, $l: [LeaseInput!]!) { heartbeat(workerId: $w, leases: $l) { __typename ... on HeartbeatResult { renewed status leaseExpiresAt orders { kind attemptId reason } } ${ERR} } }`,
      { w: this.workerId, l: leases.map((x) => ({ attemptId: x.attemptId, fencingToken: x.fencingToken })) },
    );
    return { ...r.data?.heartbeat, errors: r.errors };
  }

  async appendLogs(a: { attemptId: string; fencingToken: string }, lines: { seq: number; stream?: string; text: string }[]) {
    const r = await this.gql(
      `mutation($a: ID!, $f: String!, $l: LogLines!) { appendLogs(attemptId: $a, fencingToken: $f, lines: $l) { __typename ... on AppendResult { accepted lastSeq } ${ERR} ${STALE} } }`,
      { a: a.attemptId, f: a.fencingToken, l: lines.map((l) => ({ stream: 'stdout', ...l })) },
    );
    return { ...r.data?.appendLogs, errors: r.errors };
  }

  async reportMetrics(
    a: { attemptId: string; fencingToken: string },
    points: { seq: number; name: string; value: number; step?: number }[],
  ) {
    const r = await this.gql(
      `mutation($a: ID!, $f: String!, $p: [MetricPointInput!]!) { reportMetrics(attemptId: $a, fencingToken: $f, points: $p) { __typename ... on AppendResult { accepted lastSeq } ${ERR} ${STALE} } }`,
      { a: a.attemptId, f: a.fencingToken, p: points },
    );
    return { ...r.data?.reportMetrics, errors: r.errors };
  }

  async complete(a: { attemptId: string; fencingToken: string }, result: Record<string, unknown> = { exitCode: 0 }) {
    const r = await this.gql(
      `mutation($a: ID!, $f: String!, $r: CompleteAttemptInput!) { completeAttempt(attemptId: $a, fencingToken: $f, result: $r) { __typename ... on Attempt { id status exitCode errorClass outputs { path sha256 size } } ${ERR} ${STALE} } }`,
      { a: a.attemptId, f: a.fencingToken, r: result },
    );
    return { ...r.data?.completeAttempt, errors: r.errors };
  }
}

/** The Relay global id of a worker (for the user-side pauseWorker / worker queries). */
export function workerGid(id: string): string {
  return Buffer.from(`Worker:${id}`).toString('base64');
}
