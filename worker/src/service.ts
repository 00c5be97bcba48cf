/**
 * A hosted service's worker side (DESIGN §10). The service runs in the attempt's sandbox like
 * any task, started by the bridge (python/chatgpu/service_bridge.py): the bridge starts the
 * app, lives exactly as long as it does, and is the only way in — Unix sockets in the attempt
 * directory piped to the app's $PORT on the sandbox's own loopback.
 *
 *   readiness: GET <path> through the bridge's readiness socket every intervalSec (timeoutSec
 *              each); the first 2xx makes it ready, 3 failures in a row make it not ready
 *              again. Not ready within startTimeoutSec of the start: the app is stopped and
 *              the attempt fails. The checks reach the app from 127.0.0.2, and the app's lines
 *              that name that address (its access log of them) are left out of the attempt's
 *              logs; the checks are counted in the service's figures instead (FRAME.CHECKS).
 *   end:       the app exiting (whatever its code) before its duration, or never answering,
 *              is the attempt's failure (SERVICE_FAILED) with the app's last lines; when the
 *              bridge ends, whatever is left of its process group is killed at once.
 *   tunnel:    a WebSocket this worker opens to the API (outbound only), authenticated by the
 *              worker token, the attempt id and its fencing token; re-opened with backoff when
 *              it drops; refused as stale (409) → given up (the lease is gone)
 *   streams:   each request the API sends is replayed on the socket with node's HTTP client;
 *              response bytes go back only within the stream's window (tunnelFrames.ts), so a
 *              slow client pauses reading from the app for that request and nothing else.
 */
import type { ChildProcess } from 'node:child_process';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { WebSocket } from 'ws';
import { sleep } from './client.js';
import { creditFrame, decodeFrame, encodeFrame, FRAME, WINDOW } from './tunnelFrames.js';

export interface ServiceRuntime {
  readinessPath: string;
  intervalSec: number;
  timeoutSec: number;
  /** how long the app may take to pass its first check (older APIs send none: DEFAULT_START_TIMEOUT_SEC) */
  startTimeoutSec?: number;
  durationSec: number | null;
}

export const DEFAULT_START_TIMEOUT_SEC = 300;

/** A line of the app's output about a readiness check: it names the bridge's readiness address (service_bridge.py). */
const READINESS_LINE = /(?:^|[^\d.])127\.0\.0\.2(?!\d)/;
/** The app's last lines kept for the failure message, and the most characters of each. */
const TAIL_LINES = 20;
const TAIL_LINE_CHARS = 300;
/** Readiness counts are sent to the API at most this often. */
const CHECKS_FLUSH_MS = 5000;
/** A partial line (no newline yet) is passed on after this long without more output. */
const PARTIAL_LINE_MS = 200;

interface Stream {
  req: ClientRequest;
  res?: IncomingMessage;
  unacked: number;
}

/** A service that ended as a failure: why, with the app's last lines. */
export interface ServiceFailure {
  errorClass: 'SERVICE_FAILED';
  errorMessage: string;
}

export class ServiceHost {
  private ready = false;
  private everReady = false;
  private failures = 0;
  private lastCheck = 'none yet';
  /** Checks and failed checks not yet sent to the API. */
  private unsent = { checks: 0, failures: 0 };
  private lastSent = 0;
  /** The app's last lines (stdout and stderr, in arrival order, readiness lines left out). */
  private readonly tail: string[] = [];
  private ws: WebSocket | null = null;
  private readonly streams = new Map<number, Stream>();
  private readonly stopping = new AbortController();
  private loops: Promise<void>[] = [];
  private pid: number | undefined;
  private startTimer: NodeJS.Timeout | undefined;
  /** Stopped by the worker because it was not ready within its start timeout. */
  startTimedOut = false;

  constructor(
    private readonly o: {
      server: string;
      token: string;
      attemptId: string;
      fencingToken: string;
      /** the bridge's socket for the API's requests */
      socketPath: string;
      /** the bridge's socket for readiness checks */
      readySocketPath: string;
      runtime: ServiceRuntime;
      /** a line in the attempt's logs */
      note: (line: string) => void;
    },
  ) {}

  private get startTimeoutSec(): number {
    return this.o.runtime.startTimeoutSec ?? DEFAULT_START_TIMEOUT_SEC;
  }

  /**
   * Starts checking readiness and opens the tunnel. `child` is the bridge (or the sandbox
   * around it) and leads the process group of the attempt: once it has exited, whatever is
   * left in that group (a process the app forked off) is killed, so the run ends with it.
   */
  start(child: ChildProcess) {
    this.pid = child.pid;
    child.once('exit', () => this.killGroup('SIGKILL'));
    this.startTimer = setTimeout(() => {
      if (this.everReady || this.stopping.signal.aborted) return;
      this.startTimedOut = true;
      this.o.note(
        `worker: the service did not answer its readiness check within its start timeout of ${this.startTimeoutSec}s (last check: ${this.lastCheck}); stopping it.`,
      );
      this.killGroup('SIGTERM');
      setTimeout(() => this.killGroup('SIGKILL'), 2000).unref();
    }, this.startTimeoutSec * 1000);
    this.loops = [this.readinessLoop(), this.tunnelLoop()];
  }

  private killGroup(signal: NodeJS.Signals) {
    if (!this.pid) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      /* gone */
    }
  }

  /** The app exited (or is being stopped): close the tunnel, and end what is left of its process group. */
  async stop() {
    clearTimeout(this.startTimer);
    this.stopping.abort();
    this.killGroup('SIGKILL');
    this.sendChecks(true);
    this.ws?.terminate();
    for (const s of this.streams.values()) s.req.destroy();
    this.streams.clear();
    await Promise.allSettled(this.loops);
  }

  /**
   * The app's output on its way to the attempt's logs: its lines about readiness checks are
   * left out, and its last lines are kept for a failure's message.
   */
  quiet(source: Readable): Readable {
    let pending: Buffer = Buffer.alloc(0);
    let timer: NodeJS.Timeout | undefined;
    const keep = (t: Transform, bytes: Buffer, complete: boolean) => {
      const lines = bytes.toString('utf8').split('\n');
      if (complete) lines.pop(); // the empty string after the last newline
      const kept = lines.filter((l) => !READINESS_LINE.test(l));
      for (const l of kept) if (l.trim()) this.remember(l);
      if (kept.length) t.push(kept.join('\n') + (complete ? '\n' : ''));
    };
    const t = new Transform({
      transform(chunk: Buffer, _enc, done) {
        clearTimeout(timer);
        pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
        const nl = pending.lastIndexOf(0x0a);
        if (nl >= 0) {
          keep(this, pending.subarray(0, nl + 1), true);
          pending = pending.subarray(nl + 1);
        }
        if (pending.length > 65536) {
          keep(this, pending, false);
          pending = Buffer.alloc(0);
        }
        if (pending.length) {
          timer = setTimeout(() => {
            if (!pending.length) return;
            keep(t, pending, false);
            pending = Buffer.alloc(0);
          }, PARTIAL_LINE_MS);
          timer.unref();
        }
        done();
      },
      flush(done) {
        clearTimeout(timer);
        if (pending.length) keep(this, pending, false);
        done();
      },
    });
    source.on('error', (err) => t.destroy(err));
    return source.pipe(t);
  }

  private remember(line: string) {
    this.tail.push(line.length > TAIL_LINE_CHARS ? `${line.slice(0, TAIL_LINE_CHARS)}…` : line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
  }

  /**
   * How the service ended, when that was a failure: the app exited (whatever its code) or was
   * stopped for not being ready in time, or reached the end of its duration without ever having
   * been ready. null: it served until the end of its duration.
   */
  failure(e: { code: number | null; signal: NodeJS.Signals | null; timedOut: boolean }): ServiceFailure | null {
    const { readinessPath, durationSec } = this.o.runtime;
    const check = `its readiness check (GET ${readinessPath})`;
    let what: string;
    if (this.startTimedOut)
      what = `the app did not pass ${check} within its start timeout of ${this.startTimeoutSec}s (last check: ${this.lastCheck})`;
    else if (e.timedOut) {
      if (this.everReady) return null;
      what = `the app never passed ${check} in its duration of ${durationSec}s (last check: ${this.lastCheck})`;
    } else {
      const how = e.signal ? `was killed by ${e.signal}` : `exited with code ${e.code}`;
      what = this.everReady ? `the app ${how} while it was serving` : `the app ${how} before it passed ${check}`;
    }
    const lines = this.tail.length ? `; its last lines:\n${this.tail.join('\n')}` : '; it printed nothing';
    return { errorClass: 'SERVICE_FAILED', errorMessage: `${what}${lines}` };
  }

  private async readinessLoop() {
    const { readinessPath, intervalSec, timeoutSec } = this.o.runtime;
    while (!this.stopping.signal.aborted) {
      const status = await this.check(readinessPath, timeoutSec * 1000);
      if (this.stopping.signal.aborted) break;
      const ok = typeof status === 'number' && status >= 200 && status < 300;
      this.lastCheck = typeof status === 'number' ? `HTTP ${status}` : status;
      this.unsent.checks++;
      if (ok) this.failures = 0;
      else {
        this.failures++;
        this.unsent.failures++;
      }
      if (ok && !this.ready) this.setReady(true, `worker: service ready (${readinessPath} answered ${status}).`);
      else if (!ok && this.ready && this.failures >= 3)
        this.setReady(false, `worker: service not ready (${readinessPath}: ${this.lastCheck}, 3 times in a row).`);
      this.sendChecks(false);
      await sleep(intervalSec * 1000, this.stopping.signal);
    }
  }

  private setReady(ready: boolean, line: string) {
    this.ready = ready;
    if (ready) {
      this.everReady = true;
      clearTimeout(this.startTimer);
    }
    this.o.note(line);
    this.sendReady();
  }

  private sendReady() {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(encodeFrame(FRAME.READY, 0, { ready: this.ready }));
  }

  /** The readiness counts since the last report, every CHECKS_FLUSH_MS (or now); kept while the tunnel is down. */
  private sendChecks(now: boolean) {
    if (!this.unsent.checks || (!now && Date.now() - this.lastSent < CHECKS_FLUSH_MS)) return;
    if (this.ws?.readyState !== WebSocket.OPEN) return;
    this.ws.send(encodeFrame(FRAME.CHECKS, 0, this.unsent));
    this.unsent = { checks: 0, failures: 0 };
    this.lastSent = Date.now();
  }

  /** One readiness check through the bridge's readiness socket: its HTTP status, or why there was none. */
  private check(path: string, timeoutMs: number): Promise<number | string> {
    return new Promise((resolve) => {
      const req = httpRequest(
        { socketPath: this.o.readySocketPath, path, method: 'GET', headers: { host: 'localhost' }, timeout: timeoutMs },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 'no status');
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000}s`)));
      req.on('error', (err) =>
        resolve(
          /ENOENT|ECONNREFUSED|socket hang up|ECONNRESET/.test(err.message) ? 'no answer (the app is not listening yet)' : err.message,
        ),
      );
      req.end();
    });
  }

  private async tunnelLoop() {
    let delay = 250;
    while (!this.stopping.signal.aborted) {
      const outcome = await this.connectOnce();
      if (outcome === 'stale') {
        this.o.note('worker: the API refused the service tunnel: this attempt is no longer current.');
        return;
      }
      if (outcome === 'served') delay = 250;
      await sleep(delay, this.stopping.signal);
      delay = Math.min(delay * 2, 5000);
    }
  }

  /** Opens the tunnel and serves it until it closes. */
  private connectOnce(): Promise<'served' | 'failed' | 'stale'> {
    return new Promise((resolve) => {
      const url = `${this.o.server.replace(/^http/, 'ws')}/svc-tunnel`;
      const ws = new WebSocket(url, {
        headers: {
          authorization: `Bearer ${this.o.token}`,
          'x-chatgpu-attempt': this.o.attemptId,
          'x-chatgpu-fencing-token': this.o.fencingToken,
        },
        handshakeTimeout: 10_000,
      });
      let opened = false;
      ws.on('unexpected-response', (_req, res) => {
        ws.terminate();
        resolve(res.statusCode === 409 || res.statusCode === 404 ? 'stale' : 'failed');
      });
      ws.on('open', () => {
        opened = true;
        this.ws = ws;
        this.sendReady();
      });
      ws.on('message', (data, isBinary) => {
        if (isBinary) this.onFrame(Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer));
      });
      ws.on('error', () => {});
      ws.on('close', () => {
        if (this.ws === ws) this.ws = null;
        for (const s of this.streams.values()) s.req.destroy();
        this.streams.clear();
        resolve(opened ? 'served' : 'failed');
      });
    });
  }

  private send(frame: Buffer) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(frame);
  }

  private onFrame(data: Buffer) {
    const f = decodeFrame(data);
    if (!f) return;
    const id = f.stream;
    switch (f.type) {
      case FRAME.REQ_HEAD: {
        let head: { method?: string; path?: string; headers?: Record<string, string | string[]> };
        try {
          head = JSON.parse(f.payload.toString('utf8'));
        } catch {
          return this.send(encodeFrame(FRAME.RESET, id, { message: 'malformed request head' }));
        }
        const req = httpRequest(
          {
            socketPath: this.o.socketPath,
            method: head.method ?? 'GET',
            path: head.path ?? '/',
            headers: { ...head.headers, host: 'localhost' },
          },
          (res) => this.respond(id, res),
        );
        req.on('error', (err) => {
          if (!this.streams.has(id)) return;
          this.streams.delete(id);
          this.send(encodeFrame(FRAME.RESET, id, { message: err.message }));
        });
        this.streams.set(id, { req, unacked: 0 });
        return;
      }
      case FRAME.REQ_BODY: {
        const s = this.streams.get(id);
        if (!s) return;
        const n = f.payload.length;
        // Credit once the app's socket took the bytes: a slow app holds back its own upload only.
        s.req.write(Buffer.from(f.payload), () => this.send(creditFrame(id, n)));
        return;
      }
      case FRAME.REQ_END:
        this.streams.get(id)?.req.end();
        return;
      case FRAME.RESET: {
        const s = this.streams.get(id);
        this.streams.delete(id);
        s?.req.destroy();
        s?.res?.destroy();
        return;
      }
      case FRAME.CREDIT: {
        const s = this.streams.get(id);
        if (!s) return;
        s.unacked = Math.max(0, s.unacked - (f.payload.length >= 4 ? f.payload.readUInt32BE(0) : 0));
        if (s.unacked < WINDOW && s.res?.isPaused()) s.res.resume();
        return;
      }
    }
  }

  private respond(id: number, res: IncomingMessage) {
    const s = this.streams.get(id);
    if (!s) return void res.destroy();
    s.res = res;
    this.send(encodeFrame(FRAME.RES_HEAD, id, { status: res.statusCode, headers: res.headers }));
    res.on('data', (c: Buffer) => {
      this.send(encodeFrame(FRAME.RES_BODY, id, c));
      s.unacked += c.length;
      if (s.unacked >= WINDOW) res.pause();
    });
    res.on('end', () => {
      if (!this.streams.has(id)) return;
      this.streams.delete(id);
      this.send(encodeFrame(FRAME.RES_END, id));
    });
    res.on('error', () => {
      if (!this.streams.delete(id)) return;
      this.send(encodeFrame(FRAME.RESET, id, { message: 'the app closed the response' }));
    });
  }
}

/**
 * A SERVICE attempt's set-up (runner.ts): the app's port ($PORT; any free one: inside the
 * sandbox the loopback is its own), the bridge's sockets in the attempt directory, the command
 * that starts the bridge (which starts the app), and the host that checks readiness and holds
 * the tunnel.
 */
export async function prepareService(o: {
  dir: string;
  /** the attempt directory as the task sees it */
  insideDir: string;
  env: Record<string, string>;
  runtime: ServiceRuntime;
  server: string;
  token: string;
  attemptId: string;
  fencingToken: string;
  note: (line: string) => void;
}) {
  const port = await freePort();
  o.env.PORT = String(port);
  o.env.CHATGPU_SERVICE_SOCKET = `${o.insideDir}/.chatgpu/svc.sock`;
  o.env.CHATGPU_SERVICE_READY_SOCKET = `${o.insideDir}/.chatgpu/ready.sock`;
  const host = new ServiceHost({
    server: o.server,
    token: o.token,
    attemptId: o.attemptId,
    fencingToken: o.fencingToken,
    socketPath: path.join(o.dir, '.chatgpu', 'svc.sock'),
    readySocketPath: path.join(o.dir, '.chatgpu', 'ready.sock'),
    runtime: o.runtime,
    note: o.note,
  });
  return {
    host,
    port,
    // The bridge starts the app (`$1`) and ends with it (service_bridge.py).
    command: (appCommand: string) => ['sh', '-c', 'exec python3 -m chatgpu.service_bridge "$1"', 'sh', appCommand],
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
