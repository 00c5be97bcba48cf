/**
 * A service's worker side without an API: the bridge (service_bridge.py) as a real process —
 * it ends with the app, with the app's code or signal, and the app ends with it — and the
 * host's filter of readiness lines and its account of how a service ended.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ServiceHost } from './service.js';

const HELPERS = fileURLToPath(new URL('../python', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'service-test-'));
let n = 0;

function host(runtime: Partial<ConstructorParameters<typeof ServiceHost>[0]['runtime']> = {}) {
  const notes: string[] = [];
  const h = new ServiceHost({
    server: 'http://127.0.0.1:9',
    token: 't',
    attemptId: 'a',
    fencingToken: 'f',
    socketPath: path.join(dir, 'none.sock'),
    readySocketPath: path.join(dir, 'none-ready.sock'),
    runtime: { readinessPath: '/healthz', intervalSec: 1, timeoutSec: 1, durationSec: null, ...runtime },
    note: (l) => notes.push(l),
  });
  return { h, notes };
}

function collect(r: Readable): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    r.on('data', (c: Buffer) => (out += c.toString()));
    r.on('end', () => resolve(out));
  });
}

/** The bridge with `app` as its command, as the runner starts it (no sandbox), in its own process group. */
function bridge(app: string) {
  const i = n++;
  const sockets = { traffic: path.join(dir, `svc-${i}.sock`), ready: path.join(dir, `ready-${i}.sock`) };
  const child = spawn('/usr/bin/python3', ['-m', 'chatgpu.service_bridge', app], {
    env: {
      PATH: '/usr/bin:/bin',
      PYTHONPATH: HELPERS,
      PORT: String(20000 + Math.floor(Math.random() * 20000)),
      CHATGPU_SERVICE_SOCKET: sockets.traffic,
      CHATGPU_SERVICE_READY_SOCKET: sockets.ready,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('close', (code, signal) => r({ code, signal })),
  );
  return { child, sockets, ended, output: () => out };
}

function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return false;
  }
}

async function until<T>(fn: () => T | null | undefined | false, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the service bridge', () => {
  it('ends with the app, with its exit code, and takes the environment of the bridge out of the app', async () => {
    const b = bridge('env | grep -c CHATGPU_SERVICE || true; echo "the app failed" >&2; exit 3');
    expect(await b.ended).toEqual({ code: 3, signal: null });
    expect(b.output()).toContain('the app failed');
    expect(b.output()).toMatch(/^0\n/m); // neither socket's path is in the app's environment
  });

  it('ends the way the app ended when a signal killed it', async () => {
    const b = bridge('kill -KILL $$');
    expect(await b.ended).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('serves readiness checks from 127.0.0.2 and requests from 127.0.0.1, and a SIGTERM for the app leaves it until the app is gone', async () => {
    const app = `exec python3 -c '
import os, signal, sys
from http.server import HTTPServer, BaseHTTPRequestHandler
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = self.client_address[0].encode()
        self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
'`;
    const b = bridge(app);
    const get = (socketPath: string) =>
      new Promise<string>((resolve, reject) => {
        const req = request({ socketPath, path: '/', headers: { host: 'x' } }, (res) => collect(res).then(resolve, reject));
        req.on('error', reject);
        req.end();
      });
    let ready: string | null = null;
    for (let i = 0; i < 200 && ready === null; i++)
      ready = await get(b.sockets.ready).catch(() => new Promise<null>((r) => setTimeout(() => r(null), 50)));
    expect(ready).toBe('127.0.0.2');
    expect(await get(b.sockets.traffic)).toBe('127.0.0.1');
    process.kill(-b.child.pid!, 'SIGTERM'); // a stop: the whole group, the app exits 0 on it
    expect(await b.ended).toEqual({ code: 0, signal: null });
  });

  it('takes the app with it when it is killed itself', async () => {
    const b = bridge('echo app $$; exec sleep 300');
    const pid = Number((await until(() => /app (\d+)/.exec(b.output())))[1]);
    expect(alive(pid)).toBe(true);
    b.child.kill('SIGKILL'); // the bridge alone, not its group
    await b.ended;
    await until(() => !alive(pid), 5000);
  });
});

describe('ServiceHost', () => {
  it("leaves the app's lines about readiness checks out of its output, in any log format, and keeps the rest", async () => {
    const { h } = host();
    const src = new PassThrough();
    const out = collect(h.quiet(src));
    src.write(
      '127.0.0.2 - - [07/Dec/2026 01:34:57] "GET /healthz HTTP/1.1" 200 -\nserving on 8000\nINFO:     127.0.0.2:41234 - "GET /healthz HTTP/1.1" 200 OK\n',
    );
    src.write(
      '127.0.0.1 - - [07/Dec/2026 01:34:58] "GET /hello HTTP/1.1" 200 -\nhost 127.0.0.20 and 10.127.0.0.2 are not the check\n{"client": "127.0.0.2", "path": "/healthz"}\n',
    );
    src.end('no newline at the end');
    expect(await out).toBe(
      'serving on 8000\n127.0.0.1 - - [07/Dec/2026 01:34:58] "GET /hello HTTP/1.1" 200 -\nhost 127.0.0.20 and 10.127.0.0.2 are not the check\nno newline at the end',
    );
  });

  it('passes on a line without its newline once the app pauses (a prompt, a progress bar)', async () => {
    const { h } = host();
    const src = new PassThrough();
    const seen: string[] = [];
    h.quiet(src).on('data', (c: Buffer) => seen.push(c.toString()));
    src.write('50%');
    await until(() => seen.length > 0, 2000);
    expect(seen).toEqual(['50%']);
    src.end();
  });

  it("says how a service ended: its app's exit before it was ready, with the last lines; a whole duration served is no failure", async () => {
    const { h } = host({ durationSec: 60 });
    const src = new PassThrough();
    const out = collect(h.quiet(src));
    src.end(Array.from({ length: 25 }, (_, i) => `line ${i}`).join('\n') + '\n');
    await out;
    const f = h.failure({ code: 1, signal: null, timedOut: false });
    expect(f?.errorClass).toBe('SERVICE_FAILED');
    expect(f?.errorMessage).toBe(
      `the app exited with code 1 before it passed its readiness check (GET /healthz); its last lines:\n${Array.from({ length: 20 }, (_, i) => `line ${i + 5}`).join('\n')}`,
    );
    expect(h.failure({ code: null, signal: 'SIGKILL', timedOut: true })?.errorMessage).toBe(
      'the app never passed its readiness check (GET /healthz) in its duration of 60s (last check: none yet); its last lines:\n' +
        Array.from({ length: 20 }, (_, i) => `line ${i + 5}`).join('\n'),
    );
    expect(host().h.failure({ code: 0, signal: null, timedOut: false })?.errorMessage).toBe(
      'the app exited with code 0 before it passed its readiness check (GET /healthz); it printed nothing',
    );
  });
});
