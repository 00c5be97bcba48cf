/**
 * Invariant 4: a subscriber on API process A receives jobEvents caused by a mutation
 * on API process B (a separate OS process), through PostgreSQL LISTEN/NOTIFY.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestApi } from './helpers/api.js';
import { freePort, repoRoot, spawnProc } from './helpers/processes.js';
import { subscribe } from './helpers/ws.js';

const a = await startTestApi();
const portB = await freePort();
const b = spawnProc(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], {
  env: { ...process.env, DATABASE_URL: a.databaseUrl, PORT: String(portB), HOST: '127.0.0.1', CHATGPU_DATA_DIR: a.dataDir },
});
await b.waitFor(/ChatGPU API and dashboard/);
const urlB = `http://127.0.0.1:${portB}`;

async function gqlB(query: string, variables: Record<string, unknown>, token: string) {
  const res = await fetch(`${urlB}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as any;
}

describe('two API processes on one database', () => {
  it('a jobEvents subscriber on A sees what a mutation on B caused', async () => {
    const u = await a.signUp();
    const put = await a.putBlob('print(1)\n', u.token);
    const created = await gqlB(
      `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
      { i: { title: 'x', request: 'y', files: [{ path: 'main.py', sha256: put.sha256 }] } },
      u.token,
    );
    const jobId = created.data.createJob.id;
    const s = subscribe(
      a.url,
      u.token,
      `subscription($id: ID!) { jobEvents(jobId: $id) { __typename ... on JobEventEnvelope { event { kind payload } } } }`,
      { id: jobId },
    );
    const upd = subscribe(a.url, u.token, `subscription($id: ID!) { jobUpdated(id: $id) { status } }`, { id: jobId });
    await upd.first; // the current state arrives first: the subscription is live
    const cancelled = await gqlB(`mutation($id: ID!) { cancelJob(id: $id) { ... on Job { status } } }`, { id: jobId }, u.token);
    expect(cancelled.data.cancelJob.status).toBe('CANCELLED');
    // B's planner may move the job to PLANNING first (job.created reaches it asynchronously).
    await s.until((r) => r.some((x) => x.jobEvents.event?.kind === 'job.status' && x.jobEvents.event.payload.status === 'CANCELLED'));
    expect(s.results.filter((x) => x.jobEvents.event?.kind === 'job.status').at(-1).jobEvents.event.payload).toMatchObject({
      status: 'CANCELLED',
      transition: 'cancel',
    });
    await upd.until((r) => r.some((x) => x.jobUpdated.status === 'CANCELLED'));
    await s.close();
    await upd.close();
  });

  it('replays stored events after a given id (a reconnecting subscriber loses nothing)', async () => {
    const u = await a.signUp();
    const put = await a.putBlob('print(2)\n', u.token);
    const created = await gqlB(
      `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id events { id kind } } } }`,
      { i: { title: 'x', request: 'y', files: [{ path: 'main.py', sha256: put.sha256 }] } },
      u.token,
    );
    const job = created.data.createJob;
    await gqlB(`mutation($id: ID!) { cancelJob(id: $id) { __typename } }`, { id: job.id }, u.token);
    const s = subscribe(
      a.url,
      u.token,
      `subscription($id: ID!, $after: String) { jobEvents(jobId: $id, after: $after) { ... on JobEventEnvelope { event { kind } } } }`,
      { id: job.id, after: job.events[0].id },
    );
    await s.until((r) => r.some((x) => x.jobEvents.event.kind === 'job.status'));
    const kinds = s.results.map((x) => x.jobEvents.event.kind);
    expect(kinds).not.toContain('job.created'); // at or before `after`: not replayed
    expect(kinds.filter((k) => k === 'job.status').length).toBeGreaterThanOrEqual(1);
    await s.close();
  });
});
