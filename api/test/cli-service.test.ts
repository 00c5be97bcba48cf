/**
 * `chatgpu service JOB` as a user runs it: a real API with the builtin planner and the
 * scheduler, a real worker process serving a real Python (stdlib http.server) app, and the
 * real CLI as a child process. The project is submitted with `chatgpu submit --wait … "give
 * me an endpoint"`, which prints the service's URLs and how to get its token once it is
 * ready (so does `chatgpu watch`); the first `chatgpu service` prints the URLs and the first
 * token (once), which opens them; later calls show readiness, requests and latency;
 * --new-token voids the old token; --stop ends the service (410) and the job, and the
 * waiting submit exits 0. A service that never passed its readiness check is stopped as
 * CANCELLED, never SUCCEEDED; the readiness checks are counted, not logged.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { runCli, startCli } from './helpers/cli.js';
import { hostFetch } from './helpers/serviceHost.js';
import { createJobWithFile } from './helpers/protocolClient.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const APP = `import os
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = b"ok" if self.path == "/healthz" else ("hello at " + self.path).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
`;

const api: TestApi = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'service-box', ['--python', '/usr/bin/python3']);

const tmp = await mkdtemp(path.join(tmpdir(), 'chatgpu-service-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));
const env = (token = user.token) => ({
  HOME: path.join(tmp, 'home'),
  XDG_CONFIG_HOME: path.join(tmp, 'home/.config'),
  CHATGPU_DATA_DIR: path.join(tmp, 'no-data'),
  CHATGPU_TOKEN: token,
});
const cli = (args: string[], token?: string) => runCli([...args, '--server', api.url], { env: env(token) });

const get = (url: string, token: string | null) =>
  fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
  }));

describe('chatgpu service', () => {
  it('prints the URL and the first token once, then readiness, requests and latency; --new-token and --stop', async () => {
    const dir = path.join(tmp, 'app');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'app.py'), APP);
    const waiting = startCli(['submit', dir, '-m', 'give me an endpoint for this app', '--wait', '--server', api.url], { env: env() });
    const jobId = (await waiting.waitFor(/Job (\S+) submitted: /))[1]!;
    // Once the readiness check passed, --wait says where the service answers and how to get its token.
    const SERVICE_READY =
      /◉ service ready: (\S+)\n +for programs: (\S+) \(send "Authorization: Bearer TOKEN"\)\n +token: `chatgpu service (\S+)` issues it and prints it once/;
    const announced = await waiting.waitFor(SERVICE_READY, 90_000);
    expect(announced[1]).toMatch(/^http:\/\/[0-9a-f]{16}\.svc\.localhost:\d+\/$/);
    expect(announced[2]).toBe(`${api.server.resources.baseUrl}/svc/${new URL(announced[1]!).hostname.split('.')[0]}/`);
    expect(announced[3]).toBe(jobId);
    // `chatgpu watch` replays the same lines for a job already serving (then stops following: 130).
    const watching = startCli(['watch', jobId, '--server', api.url], { env: env() });
    expect((await watching.waitFor(SERVICE_READY, 30_000)).slice(1)).toEqual(announced.slice(1));
    watching.child.kill('SIGINT');
    expect(await watching.exited).toBe(130);

    // The first call issues the first token and prints it once, with the URL.
    const first = await cli(['service', jobId]);
    expect(first.code, first.stderr).toBe(0);
    const url = /URL: +(\S+)/.exec(first.stdout)?.[1];
    const apiUrl = /API URL: +(\S+)/.exec(first.stdout)?.[1];
    const token = /token: +(cgv_\S+)/.exec(first.stdout)?.[1];
    expect([url, apiUrl]).toEqual([announced[1], announced[2]]);
    expect(token, first.stdout).toBeTruthy();
    expect(first.stdout).toContain('shown once');
    expect(first.stdout).toMatch(/status: +(STARTING|READY)/);
    const local = `${api.url}${new URL(apiUrl!).pathname}`;

    // That token opens the URL once the worker's readiness check passed; none → 401.
    const answered = await waitFor(
      async () => {
        const r = await get(`${local}hi`, token!);
        return r.status === 200 ? r : null;
      },
      60_000,
      'the service to answer',
    );
    expect(answered.text).toBe('hello at /hi');
    expect((await get(`${local}hi`, null)).status).toBe(401);
    // The service's own host (what `curl` and browsers reach) answers the same token at the app's root.
    expect(await hostFetch(`${url}hi`, { headers: { authorization: `Bearer ${token}` } })).toMatchObject({
      status: 200,
      text: 'hello at /hi',
    });

    // Later calls do not show it again; they show readiness and, once flushed, the counts.
    await waitFor(
      async () =>
        Number(
          (await api.gql(`query($id: ID!) { job(id: $id) { service { requestCount } } }`, { id: jobId }, user.token)).data.job.service
            .requestCount,
        ) >= 1,
      15_000,
      'request counts',
    );
    await waitFor(
      async () =>
        Number(
          (await api.gql(`query($id: ID!) { job(id: $id) { service { readinessChecks } } }`, { id: jobId }, user.token)).data.job.service
            .readinessChecks,
        ) >= 1,
      15_000,
      'readiness checks counted',
    );
    const again = await cli(['service', jobId]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain('cgv_');
    expect(again.stdout).toMatch(/token: +issued \d+[smhd] ago, not shown again/);
    expect(again.stdout).toMatch(/status: +READY since \d+[smhd]/);
    expect(again.stdout).toMatch(/requests: +[1-9]\d* \(0 failed\), mean latency [\d.]+ ms/);
    expect(again.stdout).toMatch(/checks: +[1-9]\d* readiness checks \(\d+ failed; not in the app's log\)/);
    const json = await cli(['service', jobId, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      url,
      apiUrl,
      status: 'READY',
      ready: true,
      requestCount: expect.any(Number),
      meanLatencyMs: expect.any(Number),
      readinessChecks: expect.any(Number),
      jobStatus: 'RUNNING',
    });
    expect(JSON.parse(json.stdout).token).toBeUndefined();

    // --new-token: a new one, printed once; the old one is refused at once.
    const rotated = await cli(['service', jobId, '--new-token']);
    const token2 = /token: +(cgv_\S+)/.exec(rotated.stdout)?.[1];
    expect(token2 && token2 !== token).toBe(true);
    expect((await get(`${local}x`, token!)).status).toBe(403);
    expect((await get(`${local}x`, token2!)).status).toBe(200);

    // Another user's job and a job without a service are refused with a clear line.
    const stranger = await api.signUp();
    const theirs = await cli(['service', jobId], stranger.token);
    expect({ code: theirs.code, err: theirs.stderr }).toEqual({ code: 1, err: expect.stringContaining('No job') });
    const plain = await createJobWithFile(api, user.token);
    const none = await cli(['service', plain.gid]);
    expect({ code: none.code, err: none.stderr }).toEqual({ code: 1, err: expect.stringMatching(/has no service/) });

    // --stop: 410 at once, the job SUCCEEDED; a second --stop says it is stopped.
    const stopped = await cli(['service', jobId, '--stop']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toMatch(/status: +STOPPED/);
    expect(stopped.stdout).toMatch(/job: +SUCCEEDED: The service ran until its owner stopped it\./);
    expect((await get(`${local}x`, token2!)).status).toBe(410);
    expect((await api.gql(`query($id: ID!) { job(id: $id) { status } }`, { id: jobId }, user.token)).data.job.status).toBe('SUCCEEDED');
    const stoppedAgain = await cli(['service', jobId, '--stop']);
    expect(stoppedAgain.code, stoppedAgain.stderr).toBe(0);
    expect(stoppedAgain.stdout).toMatch(/status: +STOPPED/);
    // The waiting submit saw the job end.
    expect(await waiting.exited, waiting.output().slice(-2000)).toBe(0);
    expect(waiting.stdout()).toContain('Job SUCCEEDED');
  }, 240_000);

  it('--stop of a service that never answered its readiness check: the job is CANCELLED, never SUCCEEDED', async () => {
    const dir = path.join(tmp, 'never-ready');
    await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, 'app.py'),
      APP.replace('b"ok" if self.path == "/healthz"', 'b"warming up" if self.path == "/healthz"').replace(
        'self.send_response(200)',
        'self.send_response(503 if self.path == "/healthz" else 200)',
      ),
    );
    const submitted = await cli(['submit', dir, '-m', 'give me an endpoint for this app']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const jobId = /Job (\S+) submitted/.exec(submitted.stdout)![1]!;
    // Running, checked and never ready.
    await waitFor(
      async () => {
        const s = (await api.gql(`query($id: ID!) { job(id: $id) { status service { readinessFailures } } }`, { id: jobId }, user.token))
          .data.job;
        return s.status === 'RUNNING' && Number(s.service?.readinessFailures) >= 1 ? s : null;
      },
      90_000,
      'failed readiness checks',
    );
    const shown = await cli(['service', jobId]);
    expect(shown.stdout).toMatch(/status: +STARTING/);
    expect(shown.stdout).toMatch(/checks: +[1-9]\d* readiness checks \([1-9]\d* failed; not in the app's log\)/);
    const stopped = await cli(['service', jobId, '--stop']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toMatch(/status: +STOPPED/);
    expect(stopped.stdout).toMatch(/job: +CANCELLED: The service was stopped by its owner before it ever answered its readiness check\./);
    expect((await api.gql(`query($id: ID!) { job(id: $id) { status } }`, { id: jobId }, user.token)).data.job.status).toBe('CANCELLED');
  }, 180_000);
});
