/**
 * Leases across a PostgreSQL restart longer than a lease (issue 18, item 4/5; found by the
 * chaos suite's pg-restart fault): while the database is down no lease can be renewed
 * anywhere, so a worker that kept running must find its attempt still its own when the
 * database is back — the first connections after the restart give leases that ran out
 * meanwhile a fresh lease (db/sql/schedulerState.ts, resumeLeasesAfterDatabaseRestart) before
 * the tick, a renewal or a completion can see them as expired. Bounded: a worker that does
 * not come back is still lost. Likewise a job's agent lock released during the outage is
 * released after it, not left to expire with the error thrown over the turn's result.
 * A throwaway cluster of this file's own (really stopped and started), an API with a 3 s
 * lease and its real scheduler tick.
 */
import { describe, expect, it } from 'vitest';
import { retryThroughOutage } from '../src/db/unavailable.js';
import { acquireAgentLock, agentLockHolder, releaseAgentLock } from '../src/domain/agents/agentRuns.js';
import { startTestApi } from './helpers/api.js';
import { addTask, createJobWithFile, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';
import { startThrowawayPostgres } from './helpers/throwawayPostgres.js';
import { waitFor } from './helpers/waitFor.js';

const pg = await startThrowawayPostgres();
const api = await startTestApi(
  { LEASE_SEC: '3', HEARTBEAT_SEC: '1', TICK_INTERVAL_SEC: '1', RETRY_BASE_SEC: '0' },
  { databaseUrl: pg.url, scheduler: true },
);
const user = await api.signUp();
const token = await createWorkerToken(api, user.token);
const prisma = () => api.server.db.prisma;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A worker call, repeated while the API answers 503 (the database is still starting). */
async function whenUp<T extends { errors?: unknown[] | undefined }>(fn: () => Promise<T>): Promise<T> {
  return waitFor(
    async () => {
      const r = await fn();
      const codes = (r.errors ?? []).map((e) => (e as { extensions?: { code?: string } }).extensions?.code);
      return codes.includes('UNAVAILABLE') ? null : r;
    },
    60_000,
    'the API to answer again',
  );
}

/** Stops PostgreSQL for `ms` (longer than the 3 s lease) and starts it again; started again on failure. */
async function restartDb(ms: number) {
  await pg.stop();
  try {
    await sleep(ms);
  } finally {
    await pg.start();
  }
}

describe('PostgreSQL restarted for longer than a lease', () => {
  it('a worker that kept running renews and completes on the same attempt; one that vanished is still lost', async () => {
    const job = await createJobWithFile(api, user.token);
    const kept = await addTask(api, job, { name: 'kept' });
    const gone = await addTask(api, job, { name: 'gone' });
    const alive = new ProtocolWorker(api, token, 'alive-box');
    const vanished = new ProtocolWorker(api, token, 'vanished-box');
    await alive.hello();
    await vanished.hello();
    const [a] = await alive.claim();
    const [v] = await vanished.claim();
    expect(new Set([a!.task.id, v!.task.id])).toEqual(new Set([kept.id, gone.id]));
    expect((await alive.heartbeat([a!])).renewed).toEqual([a!.attemptId]);
    expect((await vanished.heartbeat([v!])).renewed).toEqual([v!.attemptId]);

    await restartDb(5_000);
    // Both leases ran out while the database was down. Let the tick run first (it would have
    // expired them), then the worker that kept running reports back.
    await sleep(1_500);
    const hb = await whenUp(() => alive.heartbeat([a!]));
    expect(hb.errors ?? [], JSON.stringify(hb.errors)).toEqual([]);
    expect(hb.renewed).toEqual([a!.attemptId]);
    const done = await whenUp(() => alive.complete(a!, { exitCode: 0 }));
    expect(done.__typename, JSON.stringify(done)).toBe('Attempt');
    expect(done.status).toBe('SUCCEEDED');
    const attempts = await prisma().attempt.findMany({ where: { taskId: a!.task.id } });
    expect(attempts.map((x) => [x.id, x.status])).toEqual([[a!.attemptId, 'SUCCEEDED']]);
    expect((await prisma().task.findUniqueOrThrow({ where: { id: a!.task.id } })).status).toBe('SUCCEEDED');

    // The other worker never comes back: its resumed lease runs out and the tick loses it.
    const lost = await waitFor(
      async () => {
        const x = await prisma().attempt.findUniqueOrThrow({ where: { id: v!.attemptId } });
        return x.status === 'LOST' ? x : null;
      },
      30_000,
      "the vanished worker's attempt LOST",
    );
    expect(lost.status).toBe('LOST');
    const retried = await prisma().task.findUniqueOrThrow({ where: { id: v!.task.id } });
    expect(retried.status).toBe('QUEUED'); // retried (3 attempts by default)
    // Its late report is refused: the lease is gone for good.
    const late = await whenUp(() => vanished.heartbeat([v!]));
    expect(late.renewed).toEqual([]);
  }, 120_000);
});

describe('the agent lock across a PostgreSQL restart', () => {
  it('a release during the outage is retried and lands after it; an outage outlasting the wait leaves the lock to expire, without throwing', async () => {
    const job = await createJobWithFile(api, user.token);
    const r = api.server.resources;
    expect(await acquireAgentLock(r, job.jobId, 'turn-1', 15_000)).toBe(true);
    await pg.stop();
    let release: Promise<void>;
    try {
      release = releaseAgentLock(r, job.jobId, 'turn-1');
      await sleep(2_000);
    } finally {
      await pg.start();
    }
    await release;
    expect(await agentLockHolder(r, job.jobId)).toBeNull();

    expect(await acquireAgentLock(r, job.jobId, 'turn-2', 15_000)).toBe(true);
    await pg.stop();
    try {
      await expect(releaseAgentLock(r, job.jobId, 'turn-2', 500)).resolves.toBeUndefined();
    } finally {
      await pg.start();
    }
    // Not released: still turn-2's until it expires (15 s), when another turn may take it.
    expect(await retryThroughOutage(() => agentLockHolder(r, job.jobId), 30_000)).toBe('turn-2');
    expect(await acquireAgentLock(r, job.jobId, 'turn-3', 15_000)).toBe(false);
  }, 120_000);
});
