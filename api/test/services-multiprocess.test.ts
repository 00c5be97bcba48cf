/**
 * A hosted service through either of two API processes that are separate OS processes
 * (scripts/start.mjs, as deployed) on one PostgreSQL: the worker's tunnel is held by B;
 * requests to A are forwarded to B (the tunnel's location is in PostgreSQL, nothing in
 * memory is shared), with the same answers, token checks and refusals on both. The time of
 * a request direct and forwarded is printed (a figure, not an assertion).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './helpers/db.js';
import { freePort, repoRoot, spawnProc } from './helpers/processes.js';
import { waitFor } from './helpers/waitFor.js';
import { hostFetch } from './helpers/serviceHost.js';
import { startWorker } from './helpers/worker.js';

const APP = `import os
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, body):
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(b"ok" if self.path == "/healthz" else ("pid %d at %s" % (os.getpid(), self.path)).encode())

    def do_POST(self):
        self.reply(b"got %d bytes" % len(self.rfile.read(int(self.headers.get("content-length") or 0))))

if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
`;

const databaseUrl = await createTestDatabase();
const dataDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-svc-mp-'));
afterAll(() => rm(dataDir, { recursive: true, force: true }));
const FAST = { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', SVC_MAX_REQUEST_BYTES: String(64 * 1024) };

async function apiProcess(name: string) {
  const port = await freePort();
  const p = spawnProc(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], {
    env: {
      ...process.env,
      ...FAST,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      CHATGPU_DATA_DIR: dataDir,
      CHATGPU_SKIP_WEB_BUILD: '1',
      CHATGPU_PUBLIC_URL: `http://127.0.0.1:${port}`,
    },
  });
  await p.waitFor(/ChatGPU API and dashboard/, 90_000).catch((err) => {
    throw new Error(`API ${name}: ${(err as Error).message}`);
  });
  return { url: `http://127.0.0.1:${port}`, proc: p };
}
const [A, B] = await Promise.all([apiProcess('A'), apiProcess('B')]);

async function gql(base: string, query: string, variables: Record<string, unknown> = {}, token?: string) {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as any;
}
const svc = (base: string, slug: string, token: string | null, p = '', init: RequestInit = {}) =>
  fetch(`${base}/svc/${slug}/${p}`, { ...init, headers: token ? { authorization: `Bearer ${token}` } : {} }).then(async (r) => ({
    status: r.status,
    retryAfter: r.headers.get('retry-after'),
    text: await r.text(),
  }));

describe('a hosted service through two API processes', () => {
  it('the same URL and token work through either process; refusals are the same on both', async () => {
    const signUp = await gql(
      A.url,
      `mutation { signUp(input: {email: "mp-svc@example.com", password: "correct horse battery"}) { ... on AuthPayload { token } } }`,
    );
    const user: string = signUp.data.signUp.token;
    const wt = await gql(A.url, `mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user);
    // The worker talks to B only: B holds the tunnel.
    await startWorker(B.url, wt.data.createWorkerToken.token, 'mp-box', ['--python', '/usr/bin/python3']);

    const body = Buffer.from(APP);
    const sha = createHash('sha256').update(body).digest('hex');
    expect(
      (await fetch(`${A.url}/blobs/${sha}`, { method: 'PUT', headers: { authorization: `Bearer ${user}` }, body: new Uint8Array(body) }))
        .status,
    ).toBe(201);
    const created = await gql(
      A.url,
      `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
      { i: { title: 'mp', request: 'give me an endpoint', files: [{ path: 'app.py', sha256: sha }] } },
      user,
    );
    const jobId: string = created.data.createJob.id;
    const service = await waitFor(
      async () =>
        (await gql(A.url, `query($id: ID!) { job(id: $id) { status statusReason service { slug url } } }`, { id: jobId }, user)).data.job
          .service,
      60_000,
      'the service',
    );
    const slug: string = service.slug;
    const token: string = (
      await gql(
        A.url,
        `mutation($id: ID!) { rotateServiceToken(jobId: $id, firstOnly: true) { ... on ServiceToken { token } } }`,
        { id: jobId },
        user,
      )
    ).data.rotateServiceToken.token;

    const viaB = await waitFor(
      async () => {
        const r = await svc(B.url, slug, token, 'direct');
        return r.status === 200 ? r : null;
      },
      60_000,
      'the service through B',
    );
    const appPid = /^pid (\d+) at \/direct$/.exec(viaB.text)?.[1];
    expect(appPid).toBeTruthy();
    // A holds no tunnel: it forwards to B, and the same app answers.
    expect(await svc(A.url, slug, token, 'forwarded?q=1')).toMatchObject({ status: 200, text: `pid ${appPid} at /forwarded?q=1` });
    expect(await svc(A.url, slug, token, 'post', { method: 'POST', body: Buffer.alloc(1000, 1) })).toMatchObject({
      status: 200,
      text: 'got 1000 bytes',
    });
    // On the service's own host (what browsers open: the URL A prints), forwarded the same way with its Host kept.
    expect(service.url).toBe(`http://${slug}.svc.localhost:${new URL(A.url).port}/`);
    const bearer = { authorization: `Bearer ${token}` };
    expect(await hostFetch(`${service.url}on-host?x=1`, { headers: bearer })).toMatchObject({
      status: 200,
      text: `pid ${appPid} at /on-host?x=1`,
    });
    expect(await hostFetch(`http://${slug}.svc.localhost:${new URL(B.url).port}/on-host`, { headers: bearer })).toMatchObject({
      status: 200,
      text: `pid ${appPid} at /on-host`,
    });
    expect((await hostFetch(`${service.url}on-host`)).status).toBe(401);

    // Refusals before any worker, the same through both: no token 401, another token 403, oversize 413.
    for (const base of [A.url, B.url]) {
      expect((await svc(base, slug, null)).status).toBe(401);
      expect((await svc(base, slug, user)).status).toBe(403);
      expect((await svc(base, slug, token, 'big', { method: 'POST', body: Buffer.alloc(128 * 1024, 1) })).status).toBe(413);
    }

    // Rotated through A: refused through B at once (the token is checked in PostgreSQL by each).
    const token2: string = (
      await gql(A.url, `mutation($id: ID!) { rotateServiceToken(jobId: $id) { ... on ServiceToken { token } } }`, { id: jobId }, user)
    ).data.rotateServiceToken.token;
    expect((await svc(B.url, slug, token, 'old')).status).toBe(403);
    expect((await svc(B.url, slug, token2, 'new')).status).toBe(200);
    expect((await svc(A.url, slug, token2, 'new')).status).toBe(200);

    // A figure, printed: a request direct to the process holding the tunnel and forwarded by the other.
    const time = async (base: string) => {
      const ms: number[] = [];
      for (let i = 0; i < 40; i++) {
        const t = performance.now();
        expect((await svc(base, slug, token2, `t${i}`)).status).toBe(200);
        ms.push(performance.now() - t);
      }
      ms.sort((x, y) => x - y);
      return `median ${ms[20]!.toFixed(1)} ms, p90 ${ms[36]!.toFixed(1)} ms`;
    };
    console.log(
      `[services-multiprocess] 40 GETs direct to B (tunnel holder): ${await time(B.url)}; through A (forwarded to B): ${await time(A.url)}`,
    );

    // Stopped through B: 410 through both.
    expect(
      (await gql(B.url, `mutation($id: ID!) { stopService(jobId: $id) { ... on Service { status } } }`, { id: jobId }, user)).data
        .stopService.status,
    ).toBe('STOPPED');
    for (const base of [A.url, B.url]) expect((await svc(base, slug, token2)).status).toBe(410);
  }, 240_000);
});
