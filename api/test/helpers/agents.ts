import { rawId } from './api.js';

export { rawId };
/**
 * Helpers for the agent-loop suites: a job with uploaded files (over GraphQL), an ONLINE
 * worker row (so submit_plan's capacity check passes without a worker process), and
 * readers of what the loop saved.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Prisma } from '../../src/db/client.js';

export type Gql = (query: string, variables: Record<string, unknown>, token: string) => Promise<{ data?: any; errors?: any[] }>;

/** A GraphQL client for a server URL (a child process in the crash suite). */
export function gqlAt(url: string): Gql {
  return async (query, variables, token) => {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as { data?: any; errors?: any[] };
  };
}

export async function signUpAt(url: string): Promise<{ token: string; userId: string }> {
  const r = await gqlAt(url)(
    `mutation($i: SignUpInput!) { signUp(input: $i) { __typename ... on AuthPayload { token user { id } } ... on Error { message } } }`,
    { i: { email: `u${randomBytes(6).toString('hex')}@example.com`, password: 'correct horse battery' } },
    '',
  );
  if (r.data?.signUp?.__typename !== 'AuthPayload') throw new Error(`signUp failed: ${JSON.stringify(r)}`);
  return { token: r.data.signUp.token, userId: rawId(r.data.signUp.user.id) };
}

/** Uploads the files (PUT /blobs) and creates a job over GraphQL; returns its global and raw ids. */
export async function createJobAt(
  url: string,
  token: string,
  files: Record<string, string>,
  request = 'run the project',
): Promise<{ id: string; jobId: string }> {
  const manifest: { path: string; sha256: string }[] = [];
  for (const [p, content] of Object.entries(files)) {
    const sha = createHash('sha256').update(content).digest('hex');
    const res = await fetch(`${url}/blobs/${sha}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(Buffer.from(content)),
    });
    if (res.status >= 300) throw new Error(`PUT /blobs/${sha}: HTTP ${res.status}`);
    manifest.push({ path: p, sha256: sha });
  }
  const r = await gqlAt(url)(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } ... on Error { message } } }`,
    { i: { title: 'agent test', request, files: manifest } },
    token,
  );
  if (r.data?.createJob?.__typename !== 'Job') throw new Error(`createJob failed: ${JSON.stringify(r)}`);
  return { id: r.data.createJob.id, jobId: rawId(r.data.createJob.id) };
}

/** An ONLINE worker row (no process behind it): enough for network_capacity and submit_plan's check. */
export async function insertOnlineWorker(prisma: Prisma, ownerId: string, workloads: string[] = ['python', 'shell']) {
  const name = `row-${randomBytes(4).toString('hex')}`;
  const token = await prisma.workerToken.create({
    data: { userId: ownerId, name, tokenHash: randomBytes(32).toString('hex'), prefix: 'cgw_test' },
  });
  return prisma.worker.create({
    data: {
      ownerId,
      tokenId: token.id,
      name,
      status: 'ONLINE',
      workloads,
      memoryMiB: 8192,
      cpuCores: 4,
      capabilities: { python: '/usr/bin/python3', pythons: [{ path: '/usr/bin/python3', version: '3.11.2', torch: null, numpy: null }] },
    },
  });
}

export async function itemsOf(prisma: Prisma, runId: string) {
  return prisma.agentItem.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
}

export async function eventsOf(prisma: Prisma, jobId: string, kind?: string) {
  return prisma.jobEvent.findMany({ where: { jobId, ...(kind ? { kind } : {}) }, orderBy: { id: 'asc' } });
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs = 30_000,
  stepMs = 200,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
