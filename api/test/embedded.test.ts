/**
 * `npm start` with no environment: embedded PGlite in ./.chatgpu, migrations applied,
 * /healthz and GraphQL answer, the local user's token works; a second start reuses it.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, repoRoot, spawnProc } from './helpers/processes.js';

const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !['DATABASE_URL', 'CHATGPU_DATA_DIR', 'PORT', 'TEST_DATABASE_URL'].includes(k) && !k.startsWith('VITEST'),
  ),
);

describe('embedded default', () => {
  it('starts on PGlite with no configuration, and a second start reuses the data', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'chatgpu-embedded-'));
    const port = await freePort();
    const env = { ...cleanEnv, PORT: String(port) };
    const first = spawnProc(process.execPath, [path.join(repoRoot, 'scripts/start.mjs'), '--no-worker'], { cwd, env });
    await first.waitFor(/Created the local user/, 90_000);
    expect(first.output()).toMatch(/embedded PGlite in .*\.chatgpu/);
    const health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).json();
    expect(health).toEqual({ ok: true, database: 'pglite' });
    const creds = JSON.parse(await readFile(path.join(cwd, '.chatgpu/local.json'), 'utf8'));
    const me = async () =>
      (await (
        await fetch(`http://127.0.0.1:${port}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${creds.apiToken}` },
          body: JSON.stringify({ query: '{ me { email } }' }),
        })
      ).json()) as any;
    expect((await me()).data.me.email).toBe(creds.email);
    // The worker protocol's hot statements (token lookup, touch, claim's touch) on PGlite.
    const asWorker = async (query: string, variables: Record<string, unknown> = {}) =>
      (await (
        await fetch(`http://127.0.0.1:${port}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${creds.workerToken}` },
          body: JSON.stringify({ query, variables }),
        })
      ).json()) as any;
    const hello = await asWorker(
      `mutation { workerHello(input: {name: "embedded", version: "1", slots: 1, capabilities: {}}) { ... on WorkerHelloResult { workerId } } }`,
    );
    const workerId = hello.data.workerHello.workerId;
    expect(workerId).toMatch(/^[0-9a-f-]{36}$/);
    const beat = await asWorker(
      `mutation($w: ID!) { heartbeat(workerId: $w, leases: []) { ... on HeartbeatResult { status renewed orders { kind } } } }`,
      { w: workerId },
    );
    expect(beat.data.heartbeat).toEqual({ status: 'ONLINE', renewed: [], orders: [{ kind: 'RESUME' }] });
    const stranger = { attemptId: '00000000-0000-4000-8000-000000000001', fencingToken: 'x' };
    const refused = await asWorker(
      `mutation($w: ID!, $l: [LeaseInput!]!) { heartbeat(workerId: $w, leases: $l) { ... on HeartbeatResult { renewed orders { kind attemptId reason } } } }`,
      { w: workerId, l: [stranger] },
    );
    expect(refused.data.heartbeat).toEqual({
      renewed: [],
      orders: [
        { kind: 'CANCEL', attemptId: stranger.attemptId, reason: 'unknown attempt' },
        { kind: 'RESUME', attemptId: null, reason: null },
      ],
    });
    const claimed = await asWorker(`mutation($w: ID!) { claimTask(workerId: $w, waitMs: 0, max: 1) { __typename } }`, { w: workerId });
    expect(claimed.errors).toBeUndefined();
    expect(await first.stop('SIGTERM')).toBe(0);

    const second = spawnProc(process.execPath, [path.join(repoRoot, 'scripts/start.mjs'), '--no-worker'], { cwd, env });
    await second.waitFor(/Local user: /, 90_000);
    expect(second.output()).not.toMatch(/Created the local user/);
    expect((await me()).data.me.email).toBe(creds.email);
    await second.stop('SIGTERM');
  }, 240_000);
});
