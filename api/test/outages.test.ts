/**
 * Outages are absorbed, not passed on. The database (a throwaway PostgreSQL cluster of
 * this file's own, really stopped and started — never the shared server) going away
 * answers 503 + Retry-After on HTTP routes and UNAVAILABLE in GraphQL, never a masked
 * 500, and leaves nothing half-written; the real `chatgpu` CLI waits out an API that is
 * down, a database that is cut, and a connection reset after createJob went through
 * (without creating the job twice), and gives up after its bound with one line. An API
 * started before its database waits for it (DATABASE_WAIT_SEC) instead of exiting.
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/domain/resources.js';
import { startServer, type RunningServer } from '../src/server.js';
import { rawId, sha256, startTestApi } from './helpers/api.js';
import { runCli, startCli } from './helpers/cli.js';
import { freePort } from './helpers/processes.js';
import { subscribe } from './helpers/ws.js';
import { startThrowawayPostgres } from './helpers/throwawayPostgres.js';
import { waitFor } from './helpers/waitFor.js';

const pg = await startThrowawayPostgres();
const webDir = await mkdtemp(path.join(tmpdir(), 'outage-web-'));
await writeFile(path.join(webDir, 'index.html'), '<!doctype html><title>ChatGPU</title>\n');
afterAll(() => rm(webDir, { recursive: true, force: true }));
const api = await startTestApi({}, { databaseUrl: pg.url, webDir });
const user = await api.signUp();

const project = await mkdtemp(path.join(tmpdir(), 'outage-project-'));
await writeFile(path.join(project, 'main.py'), 'print("hello")\n');
await mkdir(path.join(project, 'data'));
await writeFile(path.join(project, 'data', 'numbers.txt'), '1\n2\n3\n');
afterAll(() => rm(project, { recursive: true, force: true }));

/** The database is brought back even when a test fails halfway. */
let pgDown = false;
async function stopDb() {
  await pg.stop();
  pgDown = true;
}
async function startDb() {
  await pg.start();
  pgDown = false;
}
/** Runs a test body and brings the database back if it stopped it and failed before restarting it. */
async function restoring(body: () => Promise<void>) {
  try {
    await body();
  } finally {
    if (pgDown) await startDb();
  }
}

const JOBS = `query { jobs(first: 50) { edges { node { id title status } } } }`;

/** Polls until the API answers a query again (answers during the outage are UNAVAILABLE, never anything else). */
async function untilAnswering(token: string) {
  return waitFor(
    async () => {
      const r = await api.gql(JOBS, {}, token);
      if (r.errors?.length) {
        expect(r.errors[0].extensions.code).toBe('UNAVAILABLE');
        return null;
      }
      return r;
    },
    60_000,
    'the API to answer again',
  );
}

describe('a database outage', () => {
  it(
    'answers 503 + Retry-After and UNAVAILABLE (never 500) on every route, and everything works again after it',
    () =>
      restoring(async () => {
        const content = Buffer.from('uploaded during the outage\n');
        const sha = sha256(content);
        await stopDb();

        const put = await api.putBlob(content, user.token);
        expect(put.status).toBe(503);
        expect(put.body.error.code).toBe('UNAVAILABLE');

        for (const [route, token] of [
          [`/blobs/${sha}`, user.token],
          [`/jobs/${Buffer.from('Job:00000000-0000-0000-0000-000000000000').toString('base64')}/outputs.tar.gz`, user.token],
          ['/healthz', undefined],
        ] as const) {
          const res = await fetch(`${api.url}${route}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
          expect(res.status, route).toBe(503);
          expect(Number(res.headers.get('retry-after')), route).toBeGreaterThan(0);
          const body = (await res.json()) as any;
          if (route === '/healthz') expect(body.ok).toBe(false);
          else expect(body.error.code).toBe('UNAVAILABLE');
        }

        // The dashboard's files need no database (even with a token on the request).
        const page = await fetch(`${api.url}/jobs/some-job`, { headers: { authorization: `Bearer ${user.token}` } });
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('<title>ChatGPU</title>');

        // GraphQL: an authenticated query (refused at authentication), an anonymous
        // mutation (fails inside its resolver: formatError) — typed, with a retry hint.
        for (const [query, token] of [
          [JOBS, user.token],
          [`mutation { signUp(input: {email: "outage@example.com", password: "long enough pw"}) { __typename } }`, undefined],
        ] as const) {
          const res = await fetch(`${api.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
            body: JSON.stringify({ query }),
          });
          expect(res.status).toBe(503);
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
          const body = (await res.json()) as any;
          expect(body.errors[0].extensions).toMatchObject({ code: 'UNAVAILABLE', retryAfter: expect.any(Number) });
          expect(body.errors[0].message).not.toMatch(/Internal error/);
        }

        // A subscription is refused the same way (at its authentication).
        const sub = subscribe(api.url, user.token, `subscription { jobUpdated(id: "x") { id } }`);
        await sub.done;
        await sub.close();
        expect(sub.errors[0]?.extensions?.code).toBe('UNAVAILABLE');

        await startDb();
        await untilAnswering(user.token);
        const statuses: number[] = [];
        const ok = await waitFor(
          async () => {
            const r = await api.putBlob(content, user.token);
            statuses.push(r.status);
            return r.status === 201 ? r : null;
          },
          60_000,
          'the upload to succeed',
        );
        expect(ok.body).toEqual({ sha256: sha, size: content.length });
        expect(statuses.every((s) => s === 201 || s === 503)).toBe(true);
        const got = await api.getBlob(sha, user.token);
        expect(got.status).toBe(200);
        expect(got.bytes.equals(content)).toBe(true);
        expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
      }),
    120_000,
  );

  it(
    'leaves nothing half-written when it strikes mid-upload: no row, no temporary file; the retried upload completes it',
    () =>
      restoring(async () => {
        const content = Buffer.alloc(256 * 1024, 'x');
        const sha = sha256(content);
        const tmpDir = path.join(api.dataDir, 'blobs', 'tmp');
        const req = request(`${api.url}/blobs/${sha}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream', 'content-length': content.length },
        });
        const answer = new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
          req.on('response', (res) => {
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, body }));
          });
          req.on('error', reject);
        });
        req.write(content.subarray(0, 1024));
        // Authenticated and streaming to its temporary file: now the database goes away.
        await waitFor(async () => existsSync(tmpDir) && (await readdir(tmpDir)).length > 0, 30_000, 'the temporary file');
        await stopDb();
        req.end(content.subarray(1024));
        const res = await answer;
        expect(res.status).toBe(503);
        expect(Number(res.retryAfter)).toBeGreaterThan(0);
        expect(JSON.parse(res.body).error.code).toBe('UNAVAILABLE');
        expect(await readdir(tmpDir)).toEqual([]);
        await startDb();
        await untilAnswering(user.token);

        // Not visible: no row names it, so it cannot be read or used in a job.
        expect(await api.server.db.prisma.blob.findUnique({ where: { sha256: sha } })).toBeNull();
        expect((await api.getBlob(sha, user.token)).status).toBe(404);
        const job = await api.gql(
          `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename } }`,
          { i: { title: 't', request: 'r', files: [{ path: 'a.bin', sha256: sha }] } },
          user.token,
        );
        expect(job.data.createJob.__typename).toBe('NotFoundError');
        // The bytes were stored (whole: renamed into place, named by their hash) before the
        // registration met the outage: a file no row names, adopted by the retried upload.
        const onDisk = path.join(api.dataDir, 'blobs', sha.slice(0, 2), sha);
        expect(sha256(readFileSync(onDisk))).toBe(sha);

        const again = await api.putBlob(content, user.token);
        expect(again.status).toBe(201);
        expect((await api.getBlob(sha, user.token)).bytes.equals(content)).toBe(true);
      }),
    120_000,
  );
});

describe('an API started before its database', () => {
  it(
    'waits for PostgreSQL (logging why), starts once it is up and serves; past DATABASE_WAIT_SEC it gives up with one sentence',
    () =>
      restoring(async () => {
        await stopDb();
        const env = { PORT: '0', HOST: '127.0.0.1', DATABASE_URL: pg.url, CHATGPU_DATA_DIR: api.dataDir };
        // Bounded: refused at once with a bound of 0, and after its bound otherwise.
        const t0 = Date.now();
        await expect(
          startServer({
            config: loadConfig({ ...env, DATABASE_WAIT_SEC: '0' }),
            log: silentLogger,
            webDir: null,
            scheduler: false,
            model: null,
          }),
        ).rejects.toThrow(
          new RegExp(
            `^PostgreSQL at 127\\.0\\.0\\.1:${pg.port}/postgres is not reachable \\(ECONNREFUSED\\): start it, or set DATABASE_WAIT_SEC to wait longer\\.$`,
          ),
        );
        await expect(
          startServer({
            config: loadConfig({ ...env, DATABASE_WAIT_SEC: '1' }),
            log: silentLogger,
            webDir: null,
            scheduler: false,
            model: null,
          }),
        ).rejects.toThrow(/not reachable \(ECONNREFUSED\) after waiting 1 s/);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(500);

        // Within its bound: it waits, says so, and starts when the database comes back.
        const warnings: string[] = [];
        const log = { ...silentLogger, warn: (m: string) => void warnings.push(m) };
        let started: RunningServer | null = null;
        const starting = startServer({
          config: loadConfig({ ...env, DATABASE_WAIT_SEC: '120' }),
          log,
          webDir: null,
          scheduler: false,
          model: null,
        }).then((s) => (started = s));
        await waitFor(
          async () => warnings.find((w) => w.startsWith(`waiting for PostgreSQL at 127.0.0.1:${pg.port}/postgres (ECONNREFUSED)`)) ?? null,
          30_000,
          'the waiting line',
        );
        expect(started).toBeNull();
        await startDb();
        const server = await starting;
        try {
          expect(warnings).toContain('PostgreSQL is up: starting');
          const r = await fetch(`${server.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
            body: JSON.stringify({ query: JOBS }),
          });
          expect(r.status).toBe(200);
          expect(((await r.json()) as any).data.jobs.edges).toEqual(expect.any(Array));
        } finally {
          await server.close();
        }
      }),
    120_000,
  );
});

describe('the chatgpu CLI', () => {
  it('submit waits out an API that is down at first and comes up seconds later', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const run = startCli(['submit', project, '-m', 'print hello', '--title', 'while down', '--json'], {
      env: { CHATGPU_URL: url, CHATGPU_TOKEN: user.token },
    });
    await run.waitFor(/API unavailable \(connection refused\); retrying in \d+s/);
    const config = loadConfig({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: pg.url, CHATGPU_DATA_DIR: api.dataDir });
    let second: RunningServer | null = await startServer({ config, log: silentLogger, webDir: null, scheduler: false, model: null });
    try {
      expect(await run.exited, run.output()).toBe(0);
      const out = JSON.parse(run.stdout().trim().split('\n').pop()!) as { id: string; files: number };
      expect(out.files).toBe(2);
      const job = await api.server.db.prisma.job.findUniqueOrThrow({ where: { id: rawId(out.id) }, include: { codeVersions: true } });
      expect(job.title).toBe('while down');
      expect(job.codeVersions[0]!.fileCount).toBe(2);
    } finally {
      await second?.close();
      second = null;
    }
  }, 120_000);

  it(
    'submit waits out a database that is cut and restored, without the user retrying',
    () =>
      restoring(async () => {
        await stopDb();
        const run = startCli(['submit', project, '-m', 'print hello', '--title', 'while the database is cut', '--json'], {
          env: { CHATGPU_URL: api.url, CHATGPU_TOKEN: user.token },
        });
        await run.waitFor(/API unavailable \(the database is unavailable\); retrying in \d+s/);
        await startDb();
        expect(await run.exited, run.output()).toBe(0);
        const out = JSON.parse(run.stdout().trim().split('\n').pop()!) as { id: string };
        const jobs = await api.server.db.prisma.job.findMany({ where: { ownerId: user.userId, title: 'while the database is cut' } });
        expect(jobs.map((j) => j.id)).toEqual([rawId(out.id)]);
      }),
    120_000,
  );

  it('createJob cut off after the server applied it is found, not sent twice', async () => {
    // A proxy that forwards createJob, lets the API apply it, then resets the connection
    // instead of answering: the CLI cannot know whether the job was made.
    let cut = 0;
    const proxy: Server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
      const upstream = await fetch(`${api.url}${req.url}`, { method: req.method!, headers, ...(body.length ? { body } : {}) });
      const answer = Buffer.from(await upstream.arrayBuffer());
      if (cut === 0 && body.includes('CliCreateJob')) {
        cut++;
        req.socket.destroy();
        return;
      }
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(answer);
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    try {
      const { port } = proxy.address() as { port: number };
      const r = await runCli(['submit', project, '-m', 'print hello', '--title', 'reset after commit', '--json'], {
        env: { CHATGPU_URL: `http://127.0.0.1:${port}`, CHATGPU_TOKEN: user.token },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(cut).toBe(1);
      const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { id: string };
      const jobs = await api.server.db.prisma.job.findMany({ where: { ownerId: user.userId, title: 'reset after commit' } });
      expect(jobs.map((j) => j.id)).toEqual([rawId(out.id)]);
    } finally {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
    }
  }, 120_000);

  it('gives up after its bound (CHATGPU_RETRY_SEC) with one clear line', async () => {
    const port = await freePort();
    const r = await runCli(['submit', project, '-m', 'print hello'], {
      env: { CHATGPU_URL: `http://127.0.0.1:${port}`, CHATGPU_TOKEN: user.token, CHATGPU_RETRY_SEC: '3' },
    });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.slice(0, -1).every((l) => /^API unavailable \(connection refused\); retrying in \d+s$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(
      /^chatgpu: Cannot reach the ChatGPU server at http:\/\/127\.0\.0\.1:\d+ \(connection refused\) \(waited 3 s; CHATGPU_RETRY_SEC sets how long\): start it/,
    );
  }, 60_000);
});
