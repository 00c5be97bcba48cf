/**
 * Hosted services end to end (DESIGN §10) with real processes: a real API (and a second one
 * on the same PostgreSQL), real `chatgpu-worker` processes in their bwrap sandbox, and a real
 * Python app on Python's stdlib http.server. "Give me an endpoint" is planned by the builtin
 * planner into a SERVICE task; /svc/<slug>/ answers with the service's token only, 503 before
 * readiness, through either API; a SIGKILLed worker is replaced behind the same URL and token
 * (the outage is measured and printed); a slow client of a large streamed response does not
 * hold up other requests nor the worker's other task; an oversize request gets 413.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startTestApi } from './helpers/api.js';
import { createJobWithFile } from './helpers/protocolClient.js';
import { hostFetch } from './helpers/serviceHost.js';
import { startWorker } from './helpers/worker.js';
import { waitFor } from './helpers/waitFor.js';

const APP = `import os, sys, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

START = time.time()

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body):
        self.send_response(code)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/healthz":
            return self.send(200 if time.time() - START > 1.5 else 503, b"ok")
        if self.path == "/cookies":
            return self.send(200, ("cookies: " + (self.headers.get("cookie") or "")).encode())
        if self.path.startswith("/big?n="):
            n = int(self.path.split("=")[1])
            self.send_response(200)
            self.send_header("content-length", str(n))
            self.end_headers()
            chunk = b"x" * 65536
            while n > 0:
                self.wfile.write(chunk[: min(n, len(chunk))])
                n -= len(chunk)
            return
        self.send(200, ("hello from " + os.environ["CHATGPU_ATTEMPT_ID"] + " at " + self.path).encode())

    def body(self):
        if self.headers.get("transfer-encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("content-length") or 0))
        data = b""
        while True:
            n = int(self.rfile.readline().split(b";")[0], 16)
            if n == 0:
                self.rfile.readline()
                return data
            data += self.rfile.read(n)
            self.rfile.readline()

    def do_POST(self):
        self.send(200, b"got %d bytes" % len(self.body()))

if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
`;

const FAST = {
  TICK_INTERVAL_SEC: '1',
  HEARTBEAT_SEC: '1',
  LEASE_SEC: '4',
  WORKER_OFFLINE_SEC: '4',
  RETRY_BASE_SEC: '0',
  SVC_MAX_REQUEST_BYTES: String(1024 * 1024),
};
const api = await startTestApi(FAST, { scheduler: true, model: createBuiltinClient() });
// A second API process on the same database and data folder: it holds no tunnel of its own.
const api2 = await startTestApi(FAST, { databaseUrl: api.databaseUrl, dataDir: api.dataDir, scheduler: false });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "svc"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const workerToken: string = wt.data.createWorkerToken.token;
const PY = ['--python', '/usr/bin/python3', '--slots', '2'];

/** A POST whose body has no declared size (Transfer-Encoding: chunked), through fetch. */
async function chunkedPost(url: string, headers: Record<string, string>, body: AsyncIterable<Buffer>) {
  const it = body[Symbol.asyncIterator]();
  const stream = new ReadableStream<Uint8Array>({
    async pull(c) {
      const n = await it.next();
      if (n.done) c.close();
      else c.enqueue(new Uint8Array(n.value));
    },
  });
  const res = await fetch(url, { method: 'POST', headers, body: stream, duplex: 'half' } as RequestInit);
  const text = await res.text();
  return { status: res.status, text, code: res.status === 200 ? null : (JSON.parse(text) as { error: { code: string } }).error.code };
}

async function svc(base: string, slug: string, token: string | null, path = '', init: RequestInit = {}) {
  const res = await fetch(`${base}/svc/${slug}/${path}`, {
    ...init,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers as Record<string, string> | undefined) },
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
}

describe('hosted services (real API, worker, Python app)', () => {
  it('give me an endpoint → token-gated, readiness-gated URL that survives its worker, works through either API, streams with backpressure, refuses oversize', async () => {
    const w1 = await startWorker(api.url, workerToken, 'svc-one', PY);
    const blob = await api.putBlob(APP, user.token);
    const created = await api.gql(
      `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
      { i: { title: 'endpoint', request: 'Give me an endpoint for this app', files: [{ path: 'app.py', sha256: blob.sha256 }] } },
      user.token,
    );
    const jobGid: string = created.data.createJob.id;
    const jobQuery = `query($id: ID!) { job(id: $id) { status statusReason tasks { kind status } service { slug url apiUrl status ready requestCount errorCount meanLatencyMs spec } } }`;
    const job = await waitFor(
      async () => {
        const j = (await api.gql(jobQuery, { id: jobGid }, user.token)).data.job;
        if (j.status === 'FAILED') throw new Error(`job failed: ${j.statusReason}`);
        // Both rows are made in one transaction, but one GraphQL answer reads them in separate
        // queries: wait until it shows both.
        return j.service && j.tasks.length ? j : null;
      },
      60_000,
      'the service',
    );
    expect(job.tasks).toEqual([{ kind: 'SERVICE', status: expect.any(String) }]);
    expect(job.service.spec).toMatchObject({ readiness: { path: '/healthz' }, durationSec: null });
    const slug: string = job.service.slug;
    // Its URL is a host of its own (never the dashboard's origin); programs also have it under the API's address.
    expect(job.service.url).toBe(`http://${slug}.svc.localhost:${api.server.port}/`);
    expect(job.service.apiUrl).toBe(`${api.server.resources.baseUrl}/svc/${slug}/`);
    const hostOf = (a: { server: { port: number } }) => `http://${slug}.svc.localhost:${a.server.port}`;

    // The first token, shown once to the owner (firstOnly: a second such call does not void it).
    const firstToken = `mutation($id: ID!) { rotateServiceToken(jobId: $id, firstOnly: true) { __typename ... on ServiceToken { token service { slug tokenRotatedAt } } } }`;
    const rotated = await api.gql(firstToken, { id: jobGid }, user.token);
    const token: string = rotated.data.rotateServiceToken.token;
    expect(token).toMatch(/^cgv_/);
    expect(rotated.data.rotateServiceToken.service.tokenRotatedAt).toBeTruthy();
    expect((await api.gql(firstToken, { id: jobGid }, user.token)).data.rotateServiceToken.__typename).toBe('ConflictError');

    // Before readiness (the app answers /healthz 503 for its first 1.5 s): 503 with Retry-After.
    const early = await svc(api.url, slug, token);
    expect(early.status).toBe(503);
    expect(Number(early.retryAfter)).toBeGreaterThan(0);
    // No token → 401; a token that is not this service's (the user's own API token, a made-up one) → 403.
    expect((await svc(api.url, slug, null)).status).toBe(401);
    expect((await svc(api.url, slug, user.token)).status).toBe(403);
    expect((await svc(api.url, slug, 'cgv_not-the-token')).status).toBe(403);
    expect((await svc(api.url, 'ffffffffffffffff', token)).status).toBe(403);

    const first = await waitFor(
      async () => {
        const r = await svc(api.url, slug, token, 'hello?x=1');
        return r.status === 200 ? r : null;
      },
      60_000,
      'the service to answer',
    );
    const attempt1 = /hello from (\S+) at \/hello\?x=1/.exec(first.text)?.[1];
    expect(attempt1).toBeTruthy();
    // Still 401 without the token once it is ready: nothing reaches the worker.
    expect((await svc(api.url, slug, null, 'hello')).status).toBe(401);
    // On its own host the bearer token opens it too, at the app's root, through either API.
    expect((await hostFetch(`${hostOf(api)}/on-host`, { headers: { authorization: `Bearer ${token}` } })).text).toBe(
      `hello from ${attempt1} at /on-host`,
    );
    expect((await hostFetch(`${hostOf(api2)}/on-host`, { headers: { authorization: `Bearer ${token}` } })).text).toBe(
      `hello from ${attempt1} at /on-host`,
    );
    expect((await hostFetch(`${hostOf(api)}/on-host`)).status).toBe(401);
    // Under the API's address (programs): sandboxed answers, no cookies either way, and a browser's navigation is sent to the service's host.
    const viaApi = await fetch(`${api.url}/svc/${slug}/cookies`, { headers: { authorization: `Bearer ${token}`, cookie: 'dashboard=1' } });
    expect(viaApi.headers.get('content-security-policy')).toBe('sandbox');
    expect(await viaApi.text()).toBe('cookies: ');
    const navigated = await hostFetch(`${api.url}/svc/${slug}/page?x=1`, {
      headers: { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none' },
    });
    expect([navigated.status, navigated.headers.location]).toEqual([308, `${hostOf(api)}/page?x=1`]);
    // In the owner's browser: the dashboard's link carries a one-minute ticket for the service's
    // own host, which exchanges it for an HttpOnly cookie of that host only and a redirect without
    // the ticket; the cookie opens the service (through either API), and the app sees only its own cookies.
    const link = (
      await api.gql(
        `mutation($id: ID!) { openServiceInBrowser(jobId: $id) { ... on ServiceBrowserLink { url expiresAt } } }`,
        { id: jobGid },
        user.token,
      )
    ).data.openServiceInBrowser;
    expect(link.url).toMatch(new RegExp(`^${hostOf(api)}/\\?chatgpu_ticket=`));
    const ticket = new URL(link.url).searchParams.get('chatgpu_ticket')!;
    const opened = await hostFetch(`${hostOf(api)}/cookies?chatgpu_ticket=${encodeURIComponent(ticket)}&keep=1`);
    expect(opened.status).toBe(303);
    expect(opened.headers.location).toBe('/cookies?keep=1');
    const setCookie = String(opened.headers['set-cookie'] ?? '');
    expect(setCookie).toMatch(/^chatgpu_svc=[^;]+; Path=\/; Max-Age=43\d{3}; HttpOnly; SameSite=Lax$/); // no Domain: this host only
    const browserCookie = setCookie.split(';')[0]!;
    const withCookie = (base: string, cookie: string, headers: Record<string, string> = {}) =>
      hostFetch(`${base}/cookies`, { headers: { cookie, ...headers } }).then((r) => ({ status: r.status, text: r.text }));
    expect(await withCookie(hostOf(api), `theirs=1; ${browserCookie}`)).toEqual({ status: 200, text: 'cookies: theirs=1' });
    expect(await withCookie(hostOf(api2), browserCookie)).toEqual({ status: 200, text: 'cookies: ' });
    // A cookie of the same name set for the parent domain (by another service's page) does not shadow it.
    expect(await withCookie(hostOf(api), `chatgpu_svc=forged; ${browserCookie}`)).toEqual({ status: 200, text: 'cookies: ' });
    expect(
      (await withCookie(hostOf(api), `chatgpu_svc=${browserCookie.split('=')[1]!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))}`)).status,
    ).toBe(403);
    expect((await hostFetch(`${hostOf(api)}/?chatgpu_ticket=${encodeURIComponent(browserCookie.split('=')[1]!)}`)).status).toBe(403);
    // Sent by another site's page (another service's host is same-site): refused before the app; its own pages and navigations pass.
    expect((await withCookie(hostOf(api), browserCookie, { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' })).status).toBe(403);
    expect((await withCookie(hostOf(api2), browserCookie, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' })).status).toBe(
      403,
    );
    expect((await withCookie(hostOf(api), browserCookie, { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' })).status).toBe(200);
    expect((await withCookie(hostOf(api), browserCookie, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' })).status).toBe(
      200,
    );
    // The cookie and the ticket are no credential under the API's address.
    expect((await fetch(`${api.url}/svc/${slug}/cookies`, { headers: { cookie: browserCookie } })).status).toBe(401);
    expect((await fetch(`${api.url}/svc/${slug}/?chatgpu_ticket=${encodeURIComponent(ticket)}`, { redirect: 'manual' })).status).toBe(401);

    // Through the other API process (it forwards to the one holding the tunnel).
    const via2 = await svc(api2.url, slug, token, 'via-two');
    expect(via2).toMatchObject({ status: 200, text: `hello from ${attempt1} at /via-two` });
    expect((await svc(api2.url, slug, null)).status).toBe(401);

    // Bodies: a small POST goes through; one over SVC_MAX_REQUEST_BYTES (1 MiB here) is 413, on either API.
    expect((await svc(api.url, slug, token, 'upload', { method: 'POST', body: Buffer.alloc(1000, 1) })).text).toBe('got 1000 bytes');
    expect((await svc(api.url, slug, token, 'upload', { method: 'POST', body: Buffer.alloc(2 * 1024 * 1024, 1) })).status).toBe(413);
    expect((await svc(api2.url, slug, token, 'upload', { method: 'POST', body: Buffer.alloc(2 * 1024 * 1024, 1) })).status).toBe(413);
    // …also when the size is not declared (chunked): the app's answer is held until the body
    // ended within the limit, so the client reads 413 (never a 502 or a reset), on either API
    // and on the service's host; a chunked body within the limit reaches the app whole.
    const chunks = (n: number) =>
      (async function* () {
        for (let i = 0; i < n; i++) yield Buffer.alloc(64 * 1024, 1);
      })();
    const bearer = { authorization: `Bearer ${token}` };
    for (const a of [api, api2]) {
      const onHost = await hostFetch(`${hostOf(a)}/upload`, { method: 'POST', headers: bearer, body: chunks(40) }); // node:http: chunked
      expect([onHost.status, JSON.parse(onHost.text).error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    }
    for (const a of [api, api2]) {
      const apiPath = await chunkedPost(`${a.url}/svc/${slug}/upload`, bearer, chunks(40));
      expect([apiPath.status, apiPath.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
      expect(await chunkedPost(`${a.url}/svc/${slug}/upload`, bearer, chunks(4))).toMatchObject({
        status: 200,
        text: `got ${4 * 64 * 1024} bytes`,
      });
    }
    expect((await hostFetch(`${hostOf(api2)}/upload`, { method: 'POST', headers: bearer, body: chunks(4) })).text).toBe(
      `got ${4 * 64 * 1024} bytes`,
    );

    // A large streamed response to a client that stops reading: other requests and the worker's
    // other task go on meanwhile.
    const BIG = 64 * 1024 * 1024;
    const slow = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(`${api.url}/svc/${slug}/big?n=${BIG}`, { headers: { authorization: `Bearer ${token}` } }, resolve);
      req.on('error', reject);
      req.end();
    });
    expect(slow.statusCode).toBe(200);
    let received = 0;
    slow.on('data', (c: Buffer) => {
      received += c.length;
    });
    slow.pause();
    const otherJob = await createJobWithFile(api, user.token, { content: 'print(42)\n' });
    const other = await createTask(api.server.resources, {
      jobId: otherJob.jobId,
      kind: 'RUN',
      name: 'beside',
      codeVersionId: otherJob.codeVersionId,
      command: 'python main.py',
      requirements: { workload: 'python' },
    });
    for (let i = 0; i < 5; i++) expect((await svc(api.url, slug, token, `while-slow-${i}`)).status).toBe(200);
    await waitFor(
      async () => (await prisma.task.findUniqueOrThrow({ where: { id: other.id } })).status === 'SUCCEEDED',
      60_000,
      'the other task on the same worker',
    );
    const stalledAt = received;
    expect(stalledAt).toBeLessThan(BIG); // the client really was behind
    slow.resume();
    await new Promise((r) => slow.once('end', r));
    expect(received).toBe(BIG);

    // Request counts and latency reach the job page (flushed every 2 s).
    const counted = await waitFor(
      async () => {
        const j = (await api.gql(jobQuery, { id: jobGid }, user.token)).data.job;
        return j.service.requestCount >= 9 ? j.service : null;
      },
      10_000,
      'request counts',
    );
    expect(counted.meanLatencyMs).toBeGreaterThan(0);
    expect(counted).toMatchObject({ status: 'READY', ready: true });

    // SIGKILL the worker: 503 until a second worker has restarted the app, then the same URL and token answer.
    const killedAt = Date.now();
    await w1.stop('SIGKILL');
    const seen = new Set<number>();
    let last = '';
    const startSecond = (async () => {
      await new Promise((r) => setTimeout(r, 1000));
      return startWorker(api.url, workerToken, 'svc-two', PY);
    })();
    const back = await waitFor(
      async () => {
        const r = await svc(api.url, slug, token, 'again');
        seen.add(r.status);
        last = `${r.status} ${r.text}`;
        if (r.status === 503) expect(Number(r.retryAfter)).toBeGreaterThan(0);
        return r.status === 200 ? r : null;
      },
      90_000,
      'the service on its replacement',
      100,
    ).catch(async (err) => {
      const w2 = await startSecond;
      const state = await prisma.task.findMany({ where: { kind: 'SERVICE' }, include: { attempts: true, services: true } });
      throw new Error(
        `${(err as Error).message}: seen ${[...seen]}, last ${last}; ${JSON.stringify(state, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))}\n${w2.output().slice(-3000)}`,
      );
    });
    const outageMs = Date.now() - killedAt;
    await startSecond;
    const attempt2 = /hello from (\S+) at \/again/.exec(back.text)?.[1];
    expect(attempt2).toBeTruthy();
    expect(attempt2).not.toBe(attempt1);
    expect(seen.has(503)).toBe(true);
    expect([...seen].filter((s) => s !== 503 && s !== 200)).toEqual([]);
    console.log(
      `[services-e2e] outage after SIGKILL of the serving worker: ${(outageMs / 1000).toFixed(1)} s (lease ${FAST.LEASE_SEC} s, tick ${FAST.TICK_INTERVAL_SEC} s; replacement started 1 s after the kill)`,
    );
    expect((await svc(api2.url, slug, token, 'again-two')).text).toBe(`hello from ${attempt2} at /again-two`);

    // Rotation: the old token stops at once; the new one works.
    const rotated2 = await api.gql(
      `mutation($id: ID!) { rotateServiceToken(jobId: $id) { ... on ServiceToken { token } } }`,
      { id: jobGid },
      user.token,
    );
    expect((await svc(api.url, slug, token, 'old')).status).toBe(403);
    expect((await withCookie(hostOf(api), browserCookie)).status).toBe(403); // the browser's cookie ends with its token
    const token2: string = rotated2.data.rotateServiceToken.token;
    expect((await svc(api.url, slug, token2, 'new')).status).toBe(200);

    // Another user cannot rotate or stop it.
    const stranger = await api.signUp();
    expect(
      (await api.gql(`mutation($id: ID!) { stopService(jobId: $id) { __typename } }`, { id: jobGid }, stranger.token)).data.stopService
        .__typename,
    ).toBe('NotFoundError');
    expect(
      (await api.gql(`mutation($id: ID!) { rotateServiceToken(jobId: $id) { __typename } }`, { id: jobGid }, stranger.token)).data
        .rotateServiceToken.__typename,
    ).toBe('NotFoundError');
    expect(
      (await api.gql(`mutation($id: ID!) { openServiceInBrowser(jobId: $id) { __typename } }`, { id: jobGid }, stranger.token)).data
        .openServiceInBrowser.__typename,
    ).toBe('NotFoundError');

    // stopService: 410 at once, the job SUCCEEDED, usage recorded for the attempts that served.
    const stopped = await api.gql(
      `mutation($id: ID!) { stopService(jobId: $id) { ... on Service { status } } }`,
      { id: jobGid },
      user.token,
    );
    expect(stopped.data.stopService.status).toBe('STOPPED');
    expect((await svc(api.url, slug, token2)).status).toBe(410);
    const end = (await api.gql(`query($id: ID!) { job(id: $id) { status costCad } }`, { id: jobGid }, user.token)).data.job;
    expect(end.status).toBe('SUCCEEDED');
    expect(
      (await api.gql(`mutation($id: ID!) { stopService(jobId: $id) { __typename } }`, { id: jobGid }, user.token)).data.stopService
        .__typename,
    ).toBe('ConflictError');
    const serviceJob = await prisma.service.findUniqueOrThrow({ where: { slug } });
    expect(await prisma.usageEntry.count({ where: { jobId: serviceJob.jobId } })).toBeGreaterThan(0);
  }, 300_000);
});
