/**
 * The job page's service panel in a real browser, with everything real: the API with the
 * builtin planner and the scheduler, a real worker process serving a real Python (stdlib
 * http.server) app submitted with "give me an endpoint". The panel shows the URL and the
 * readiness (starting, then ready) — the URL is the service's own host, with the API-address
 * form for programs beside it; "Issue token" shows the token once and it opens both;
 * "Open in browser" opens the service's host in a new tab through its cookie (no token handled);
 * requests and latency appear; "Rotate token" voids the old one; "Stop service" stops it.
 */
import { describe, expect, it } from 'vitest';
import { hostFetch } from '../../api/test/helpers/serviceHost.js';
import { screenshot, startDashboardWithWorker } from './helpers/dashboard.js';

const APP = `import os
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = b"ok" if self.path == "/healthz" else ("<h1>hello from the app at " + self.path + "</h1>").encode()
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
`;

const { d, user } = await startDashboardWithWorker('service-box', ['--python', '/usr/bin/python3']);
const WAIT = { timeout: 60_000 };

const get = (url: string, token: string) =>
  fetch(url, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => ({ status: r.status, text: await r.text() }));

describe('the service panel of the job page', () => {
  it('shows the URL and readiness of a running service; issues, uses and rotates its token; opens it in the browser; stops it', async () => {
    const sha = await d.putBlob(APP, user.token);
    const created = await d.gql(
      `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
      { i: { title: 'my endpoint', request: 'Give me an endpoint for this app', files: [{ path: 'app.py', sha256: sha }] } },
      user.token,
    );
    const jobId: string = created.data.createJob.id;
    const page = await d.page(user.token);
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${d.url}/jobs/${encodeURIComponent(jobId)}`);

    const panel = page.getByTestId('service-panel');
    await panel.waitFor(WAIT);
    const url = await panel.getByLabel('Service URL').textContent();
    expect(url).toMatch(/^http:\/\/[0-9a-f]{16}\.svc\.localhost:\d+\/$/); // a host of its own, not the dashboard's origin
    const slug = new URL(url!).hostname.split('.')[0]!;
    expect(await panel.getByLabel('Service API URL').textContent()).toBe(`${d.server.resources.baseUrl}/svc/${slug}/`);
    // Ready once the worker's readiness check passed (it may already be by the time the panel shows).
    await panel
      .getByTestId('service-readiness')
      .getByText(/^Ready since .*requests reach the app\.$/)
      .waitFor(WAIT);
    expect(await panel.locator('[data-status]').first().getAttribute('data-status')).toBe('READY');
    expect(await panel.getByTestId('service-token').textContent()).toContain('None issued yet.');

    // Issue token: shown once, and it opens the URL and the API-address form.
    await panel.getByRole('button', { name: 'Issue token' }).click();
    const token = (await panel.getByLabel('Service token').textContent(WAIT))!;
    expect(token).toMatch(/^cgv_/);
    const direct = `${d.apiUrl}/svc/${slug}/`;
    expect(await hostFetch(`${url}from-test`, { headers: { authorization: `Bearer ${token}` } })).toMatchObject({
      status: 200,
      text: '<h1>hello from the app at /from-test</h1>',
    });
    expect(await get(`${direct}from-test`, token)).toEqual({ status: 200, text: '<h1>hello from the app at /from-test</h1>' });

    // Open in browser: a new tab on the service's host shows the app, authenticated by that host's cookie.
    const [tab] = await Promise.all([page.waitForEvent('popup'), panel.getByRole('button', { name: 'Open in browser' }).click()]);
    await tab.getByText('hello from the app at /').waitFor(WAIT);
    expect(new URL(tab.url()).origin).toBe(new URL(url!).origin);
    expect(new URL(tab.url()).search).toBe(''); // the ticket is gone from the address
    const cookies = await tab.context().cookies();
    expect(cookies.find((c) => c.name === 'chatgpu_svc')).toMatchObject({
      httpOnly: true,
      domain: new URL(url!).hostname,
      path: '/',
      sameSite: 'Lax',
    });
    await tab.close();

    // Requests and latency (flushed by the API every 2 s, polled by the panel).
    await panel
      .getByTestId('service-requests')
      .getByText(/^\d+ \(0 failed\) · mean latency [\d.]+ ms$/)
      .waitFor(WAIT);
    // The readiness checks are figures here, not lines of the app's log.
    await panel
      .getByTestId('service-checks')
      .getByText(/^[1-9]\d* \(\d+ failed\)/)
      .waitFor(WAIT);
    await screenshot(page, 'job-service-panel');

    // Rotate: a new token shown, the old one refused at once.
    await panel.getByRole('button', { name: 'Rotate token' }).click();
    await panel.getByLabel('Service token').getByText(/^cgv_/).filter({ hasNotText: token }).waitFor(WAIT);
    const token2 = (await panel.getByLabel('Service token').textContent())!;
    expect((await get(`${direct}x`, token)).status).toBe(403);
    expect((await get(`${direct}x`, token2)).status).toBe(200);

    // Stop: the panel says stopped, the URL answers 410, the job ends.
    await panel.getByRole('button', { name: 'Stop service' }).click();
    await panel
      .getByTestId('service-readiness')
      .getByText(/^Stopped .*answers 410\.$/)
      .waitFor(WAIT);
    expect((await get(`${direct}x`, token2)).status).toBe(410);
    expect(await panel.getByRole('button', { name: 'Stop service' }).count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.close();
  }, 180_000);
});
