/**
 * A hosted service's worker side (DESIGN §10). The service runs in the attempt's sandbox like
 * any task; the only way in is a Unix socket in the attempt directory that the bridge
 * (python/chatgpu/service_bridge.py) pipes to the app's $PORT on the sandbox's own loopback.
 *
 *   readiness: GET <path> through the socket every intervalSec (timeoutSec each); the first
 *              2xx makes it ready, 3 failures in a row make it not ready again
 *   tunnel:    a WebSocket this worker opens to the API (outbound only), authenticated by the
 *              worker token, the attempt id and its fencing token; re-opened with backoff when
 *              it drops; refused as stale (409) → given up (the lease is gone)
 *   streams:   each request the API sends is replayed on the socket with node's HTTP client;
 *              response bytes go back only within the stream's window (tunnelFrames.ts), so a
 *              slow client pauses reading from the app for that request and nothing else.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { WebSocket } from 'ws';
import { sleep } from './client.js';
import { creditFrame, decodeFrame, encodeFrame, FRAME, WINDOW } from './tunnelFrames.js';

export interface ServiceRuntime {
  readinessPath: string;
  intervalSec: number;
  timeoutSec: number;
  durationSec: number | null;
}

interface Stream {
  req: ClientRequest;
  res?: IncomingMessage;
  unacked: number;
}

export class ServiceHost {
  private ready = false;
  private failures = 0;
  private ws: WebSocket | null = null;
  private readonly streams = new Map<number, Stream>();
  private readonly stopping = new AbortController();
  private loops: Promise<void>[] = [];

  constructor(
    private readonly o: {
      server: string;
      token: string;
      attemptId: string;
      fencingToken: string;
      socketPath: string;
      runtime: ServiceRuntime;
      /** a line in the attempt's logs */
      note: (line: string) => void;
    },
  ) {}

  private pid: number | undefined;

  /** Starts checking readiness and opens the tunnel; `pid` leads the process group of the app and its bridge. */
  start(pid: number | undefined) {
    this.pid = pid;
    this.loops = [this.readinessLoop(), this.tunnelLoop()];
  }

  /** The app exited (or is being stopped): close the tunnel, and end the bridge if it outlived the app (no sandbox). */
  async stop() {
    this.stopping.abort();
    if (this.pid) {
      try {
        process.kill(-this.pid, 'SIGKILL');
      } catch {
        /* gone with the sandbox */
      }
    }
    this.ws?.terminate();
    for (const s of this.streams.values()) s.req.destroy();
    this.streams.clear();
    await Promise.allSettled(this.loops);
  }

  private async readinessLoop() {
    const { readinessPath, intervalSec, timeoutSec } = this.o.runtime;
    while (!this.stopping.signal.aborted) {
      const status = await this.check(readinessPath, timeoutSec * 1000);
      const ok = status !== null && status >= 200 && status < 300;
      if (ok) this.failures = 0;
      else this.failures++;
      if (ok && !this.ready) this.setReady(true, `worker: service ready (${readinessPath} answered ${status}).`);
      else if (!ok && this.ready && this.failures >= 3) this.setReady(false, `worker: service not ready (${readinessPath}: ${status ?? 'no answer'}, 3 times in a row).`);
      await sleep(intervalSec * 1000, this.stopping.signal);
    }
  }

  private setReady(ready: boolean, line: string) {
    this.ready = ready;
    this.o.note(line);
    this.sendReady();
  }

  private sendReady() {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(encodeFrame(FRAME.READY, 0, { ready: this.ready }));
  }

  /** One readiness check through the socket: its HTTP status, or null (refused, timed out). */
  private check(path: string, timeoutMs: number): Promise<number | null> {
    return new Promise((resolve) => {
      const req = httpRequest({ socketPath: this.o.socketPath, path, method: 'GET', headers: { host: 'localhost' }, timeout: timeoutMs }, (res) => {
        res.resume();
        resolve(res.statusCode ?? null);
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(null));
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
        headers: { authorization: `Bearer ${this.o.token}`, 'x-chatgpu-attempt': this.o.attemptId, 'x-chatgpu-fencing-token': this.o.fencingToken },
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
        const req = httpRequest({ socketPath: this.o.socketPath, method: head.method ?? 'GET', path: head.path ?? '/', headers: { ...head.headers, host: 'localhost' } }, (res) => this.respond(id, res));
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
 * sandbox the loopback is its own), the bridge's socket in the attempt directory, the command
 * that starts the bridge beside the app, and the host that checks readiness and holds the tunnel.
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
  const host = new ServiceHost({ server: o.server, token: o.token, attemptId: o.attemptId, fencingToken: o.fencingToken, socketPath: path.join(o.dir, '.chatgpu', 'svc.sock'), runtime: o.runtime, note: o.note });
  return {
    host,
    port,
    // The bridge runs beside the app in the same process group; `$1` is the app's command.
    command: (appCommand: string) => ['sh', '-c', 'python3 -m chatgpu.service_bridge & exec sh -c "$1"', 'sh', appCommand],
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
