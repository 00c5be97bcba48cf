/**
 * A hosted app attacks from inside (DESIGN §10, serviceOrigin.ts), in real headless Chromium
 * with everything real: the API with the builtin planner and the scheduler, a real worker
 * process, two real Python (stdlib http.server) apps submitted with "give me an endpoint" by
 * the same user, who is signed in to the dashboard and opens both apps in the same browser.
 *
 * The hostile app's page script tries to read the dashboard's session token (its own
 * localStorage, the dashboard in an iframe, window.opener), to call /graphql with the
 * visitor's credentials, and to fetch the other service with the visitor's cookie (that app
 * even answers with permissive CORS, so only the API's refusal stands in the way). All must
 * fail — and the other app must never see the request — while the hostile app's own pages,
 * cookies and same-origin calls to its own API work. The dashboard's /svc/<slug>/ path does
 * not serve the app's page on the dashboard's origin: a browser is sent to the service's host.
 */
import { describe, expect, it } from 'vitest';
import { hostFetch } from '../../api/test/helpers/serviceHost.js';
import { waitFor } from '../../api/test/helpers/waitFor.js';
import { startDashboardWithWorker, type Dashboard } from './helpers/dashboard.js';

// One app for both services: the hostile page at /attack, a secret at /secret (with CORS that
// lets any origin read it with credentials), and a count of the requests that reached it.
const APP = `import json, os
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

SECRET_HITS = []

ATTACK = """<!doctype html><title>hostile app</title><pre id="results">running</pre><script>
(async () => {
  const out = {};
  const p = new URLSearchParams(location.hash.slice(1));
  const dash = p.get('dash'), other = p.get('other');
  out.origin = location.origin;
  out.localStorage = localStorage.getItem('chatgpu.token');
  out.opener = window.opener === null ? 'none' : 'present';
  try { out.openerStorage = 'read: ' + window.opener.localStorage.getItem('chatgpu.token'); } catch (e) { out.openerStorage = 'blocked: ' + e.name; }
  try {
    const r = await fetch(dash + '/graphql', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { email } }' }) });
    out.graphql = 'read: ' + (await r.text());
  } catch (e) { out.graphql = 'blocked: ' + e.name; }
  out.frame = await new Promise((resolve) => {
    const f = document.createElement('iframe');
    f.onload = () => { try { resolve('read: ' + f.contentWindow.localStorage.getItem('chatgpu.token')); } catch (e) { resolve('blocked: ' + e.name); } };
    f.src = dash + '/';
    document.body.appendChild(f);
  });
  try { const r = await fetch(other + 'secret', { credentials: 'include' }); out.other = 'read: ' + r.status + ' ' + (await r.text()); } catch (e) { out.other = 'blocked: ' + e.name; }
  try { await fetch(other + 'secret?no-cors', { credentials: 'include', mode: 'no-cors' }); out.otherNoCors = 'sent (opaque)'; } catch (e) { out.otherNoCors = 'blocked: ' + e.name; }
  const login = await fetch('/api/login', { method: 'POST' });
  const echo = await fetch('/api/echo');
  out.own = login.status + ' ' + echo.status + ' ' + (await echo.text());
  document.getElementById('results').textContent = JSON.stringify(out);
})();
</script>"""

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, body, ctype="text/plain", headers=()):
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/healthz":
            return self.reply(200, b"ok")
        if self.path.startswith("/attack"):
            return self.reply(200, ATTACK.encode(), "text/html")
        if self.path.startswith("/secret"):
            SECRET_HITS.append(self.path)
            origin = self.headers.get("origin") or "*"
            return self.reply(200, ("SECRET of " + os.environ["CHATGPU_ATTEMPT_ID"]).encode(), headers=[("access-control-allow-origin", origin), ("access-control-allow-credentials", "true")])
        if self.path == "/hits":
            return self.reply(200, json.dumps(SECRET_HITS).encode(), "application/json")
        if self.path == "/api/echo":
            return self.reply(200, json.dumps({"cookie": self.headers.get("cookie")}).encode(), "application/json")
        self.reply(200, ("<h1>app page " + self.path + "</h1>").encode(), "text/html")

    def do_POST(self):
        if self.path == "/api/login":
            return self.reply(200, b"in", headers=[("set-cookie", "appsession=own-cookie; Path=/; HttpOnly"), ("set-cookie", "spill=1; Domain=svc.localhost; Path=/")])
        self.reply(404, b"no")

if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
`;

const { d, user } = await startDashboardWithWorker('service-box', ['--python', '/usr/bin/python3', '--slots', '2']);
const WAIT = { timeout: 60_000 };

/** A service submitted with "give me an endpoint", ready, with its first token. */
async function readyService(dash: Dashboard, title: string) {
  const sha = await dash.putBlob(APP, user.token);
  const created = await dash.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
    { i: { title, request: 'Give me an endpoint for this app', files: [{ path: 'app.py', sha256: sha }] } },
    user.token,
  );
  const jobId: string = created.data.createJob.id;
  const service: { slug: string; url: string } = await waitFor(
    async () => {
      const s = (await dash.gql(`query($id: ID!) { job(id: $id) { service { slug url ready } } }`, { id: jobId }, user.token)).data.job
        .service;
      return s?.ready ? s : null;
    },
    90_000,
    `${title} ready`,
  );
  const token: string = (
    await dash.gql(
      `mutation($id: ID!) { rotateServiceToken(jobId: $id, firstOnly: true) { ... on ServiceToken { token } } }`,
      { id: jobId },
      user.token,
    )
  ).data.rotateServiceToken.token;
  return { jobId, ...service, token };
}

describe("a hosted app's page cannot reach the dashboard or another service", () => {
  it("its script cannot read the session, call /graphql as the visitor or read another service with the visitor's cookie; its own pages and API work", async () => {
    const [hostile, other] = await Promise.all([readyService(d, 'hostile app'), readyService(d, 'other app')]);
    expect(hostile.url).toBe(`http://${hostile.slug}.svc.localhost:${d.server.port}/`);

    // The visitor: signed in to the dashboard, opens the hostile app from its job page and the other one by its link.
    // Signed in on the dashboard's origin only (d.page's init script would write the token into every origin's storage).
    const page = await d.page(null);
    await page.goto(`${d.url}/`);
    await page.evaluate((t) => localStorage.setItem('chatgpu.token', t), user.token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(hostile.jobId)}`);
    const panel = page.getByTestId('service-panel');
    expect(await panel.getByLabel('Service URL').textContent(WAIT)).toBe(hostile.url);
    const [tab] = await Promise.all([page.waitForEvent('popup'), panel.getByRole('button', { name: 'Open in browser' }).click()]);
    await tab.getByText('app page /').waitFor(WAIT);
    expect(new URL(tab.url()).origin).toBe(new URL(hostile.url).origin);
    const link = (
      await d.gql(
        `mutation($id: ID!) { openServiceInBrowser(jobId: $id) { ... on ServiceBrowserLink { url } } }`,
        { id: other.jobId },
        user.token,
      )
    ).data.openServiceInBrowser.url as string;
    const otherTab = await page.context().newPage();
    await otherTab.goto(link);
    await otherTab.getByText('app page /').waitFor(WAIT);
    // Each cookie belongs to its own host only (no Domain), HttpOnly, SameSite=Lax.
    const cookies = await page.context().cookies();
    for (const s of [hostile, other]) {
      expect(cookies.find((c) => c.name === 'chatgpu_svc' && c.domain === `${s.slug}.svc.localhost`)).toMatchObject({
        httpOnly: true,
        sameSite: 'Lax',
        path: '/',
      });
    }

    // The attack, from the hostile app's own page.
    await tab.goto(`${hostile.url}attack#dash=${encodeURIComponent(d.url)}&other=${encodeURIComponent(other.url)}`);
    await tab.locator('#results').getByText(/^\{/).waitFor(WAIT);
    const out = JSON.parse((await tab.locator('#results').textContent())!) as Record<string, string>;
    expect(out.origin).toBe(new URL(hostile.url).origin);
    expect(out.localStorage).toBeNull(); // the dashboard's session is in the dashboard's origin only
    expect(out.opener).toBe('none'); // the panel opened it without an opener…
    expect(out.openerStorage).toMatch(/^blocked: /);
    expect(out.graphql).toMatch(/^blocked: TypeError/); // no CORS on /graphql: the answer cannot be read
    expect(out.frame).toBe('blocked: SecurityError'); // the dashboard framed: cross-origin
    expect(out.other).toMatch(/^blocked: TypeError/); // the other service's own CORS would allow it: the API refused it (403)
    expect(out.otherNoCors).toBe('sent (opaque)');
    const secretHits = JSON.parse(
      (await hostFetch(`${other.url}hits`, { headers: { authorization: `Bearer ${other.token}` } })).text,
    ) as string[];
    expect(secretHits).toEqual([]); // neither request reached the other app
    for (const v of Object.values(out)) expect(v ?? '').not.toContain(user.token);
    // Its own API works: same origin, its own cookie (a Domain cookie for every service was dropped), never the service's credential.
    expect(out.own).toBe('200 200 {"cookie": "appsession=own-cookie"}');
    expect((await page.context().cookies()).filter((c) => c.name === 'spill')).toEqual([]);

    // The other service still opens at the top level (a navigation carries its cookie).
    await otherTab.goto(`${other.url}after`);
    await otherTab.getByText('app page /after').waitFor(WAIT);

    // The dashboard's /svc/<slug>/ does not serve the app's page on the dashboard's origin: the browser lands on the service's host.
    const old = await page.context().newPage();
    await old.goto(`${d.apiUrl}/svc/${hostile.slug}/old-link`);
    await old.getByText('app page /old-link').waitFor(WAIT);
    expect(new URL(old.url()).origin).toBe(new URL(hostile.url).origin);
    await Promise.all([tab.close(), otherTab.close(), old.close(), page.close()]);
  }, 240_000);
});
