/**
 * The API end of hosted services' tunnels (DESIGN §10). A worker running a SERVICE attempt
 * opens a WebSocket to /svc-tunnel (outbound: the worker never listens), authenticated by
 * its worker token and fenced by the attempt's fencing token. Requests to a service — on its
 * own host `<slug>.<suffix>` (browsers; serviceOrigin.ts) or at /svc/:slug/* on the API's
 * origin (programs with the bearer token) — are multiplexed over it as streams
 * (tunnelFrames.ts): streamed bodies both ways, a window of unacknowledged bytes per stream
 * (a slow client stalls only its own stream), a body size limit (413, also for a body of
 * undeclared size: the answer is released only once the request body has ended within the
 * limit, as nginx's request buffering does), a time limit to the response head (504) and a
 * cap on concurrent streams (503).
 *
 * This process's tunnels live in memory only as transport; the routing decision is made from
 * PostgreSQL (services.ts, routeFor): the service row names the process holding the current
 * attempt's tunnel (tunnelUrl), and a request reaching another process is forwarded there.
 */
import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { databaseUnavailable } from '../db/unavailable.js';
import { authenticate } from '../domain/auth/users.js';
import { DomainError, StaleAttemptError } from '../domain/errors.js';
import type { Resources } from '../domain/resources.js';
import {
  appSetCookies,
  cookieValues,
  SERVICE_COOKIE,
  SERVICE_TICKET_PARAM,
  withoutServiceCookie,
} from '../domain/services/serviceCookie.js';
import { serviceOriginUrl } from '../domain/services/serviceOrigin.js';
import {
  openTunnel,
  recordServiceStats,
  routeFor,
  setServiceReady,
  type ServiceCredential,
  type ServiceStats,
} from '../domain/services/services.js';
import { sendJson } from './blobRoutes.js';
import { creditFrame, decodeFrame, encodeFrame, FRAME, WINDOW } from './tunnelFrames.js';

/** Headers that belong to one hop (RFC 9110 §7.6.1) or to ChatGPU, never passed to the app (its own cookies are: see proxy). */
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
  'cookie',
  'x-chatgpu-svc-forwarded',
]);
const FORWARDED = 'x-chatgpu-svc-forwarded';
/** After a 413 the rest of the body is read and dropped (so the client reads the answer), up to this much; beyond it the connection is cut. */
const DRAIN_MAX = 64 * 1024 * 1024;
/** Added to every answer served on the API's origin (bearer clients): a page there could never script the dashboard. */
const API_ORIGIN_HEADERS = { 'content-security-policy': 'sandbox', 'x-content-type-options': 'nosniff' };

/** Where a request came in: on the service's own host, or under /svc/<slug>/ on the API's origin. */
export type ServiceVia = 'host' | 'api';
const STATS_FLUSH_MS = 2000;
const CURRENT_CHECK_MS = 5000;

type Frame = NonNullable<ReturnType<typeof decodeFrame>>;

interface Stream {
  res: ServerResponse;
  req: IncomingMessage;
  /** Request body bytes sent and not yet credited by the worker. */
  unacked: number;
  done: boolean;
  /** The request body has ended within the limit; until then the answer is held (`held`). */
  reqEnded: boolean;
  held: Frame[];
  via: ServiceVia;
  timer: NodeJS.Timeout;
  started: number;
}

class Tunnel {
  private readonly streams = new Map<number, Stream>();
  private nextId = 1;
  ready = false;
  constructor(
    readonly ws: WebSocket,
    readonly serviceId: string,
    readonly attemptId: string,
    private readonly owner: ServiceTunnels,
  ) {}

  get open(): number {
    return this.streams.size;
  }

  onFrame(data: Buffer) {
    const f = decodeFrame(data);
    if (!f) return;
    const held = f.stream !== 0 && f.type !== FRAME.CREDIT ? this.streams.get(f.stream) : undefined;
    if (held && !held.done && !held.reqEnded) {
      // The app answered before the whole body arrived: held until it did (a 413 may still come first).
      if (f.type === FRAME.RES_HEAD) clearTimeout(held.timer);
      held.held.push(f);
      return;
    }
    this.deliver(f);
  }

  private deliver(f: Frame) {
    if (f.type === FRAME.READY && f.stream === 0) {
      let ready = false;
      try {
        ready = (JSON.parse(f.payload.toString('utf8')) as { ready?: unknown }).ready === true;
      } catch {
        /* malformed: not ready */
      }
      this.ready = ready;
      void this.owner.readiness(this, ready);
      return;
    }
    if (f.type === FRAME.CHECKS && f.stream === 0) {
      const n = safeCounts(f.payload);
      if (n) this.owner.countChecks(this.serviceId, n.checks, n.failures);
      return;
    }
    const s = this.streams.get(f.stream);
    if (!s || s.done) return;
    switch (f.type) {
      case FRAME.RES_HEAD: {
        clearTimeout(s.timer);
        let head: { status?: number; headers?: Record<string, string | string[]> } = {};
        try {
          head = JSON.parse(f.payload.toString('utf8'));
        } catch {
          return this.fail(f.stream, 502, 'The service sent a malformed response.');
        }
        const status = Number.isInteger(head.status) && head.status! >= 100 && head.status! <= 599 ? head.status! : 502;
        const headers: OutgoingHttpHeaders = s.via === 'api' ? { ...API_ORIGIN_HEADERS } : {};
        for (const [k, v] of Object.entries(head.headers ?? {})) {
          const key = k.toLowerCase();
          if (HOP.has(key) || key === 'set-cookie') continue;
          // Ours comes in addition to the app's own policy (both apply), never instead of it.
          headers[k] = key === 'content-security-policy' && s.via === 'api' ? ['sandbox', ...[v].flat()] : v;
        }
        const cookies = appSetCookies(
          Object.entries(head.headers ?? {}).find(([k]) => k.toLowerCase() === 'set-cookie')?.[1],
          s.via === 'host',
        );
        if (cookies.length) headers['set-cookie'] = cookies;
        this.owner.count(this.serviceId, Date.now() - s.started, status >= 500);
        s.res.writeHead(status, headers);
        return;
      }
      case FRAME.RES_BODY: {
        const n = f.payload.length;
        // Credit goes back only once the bytes left for the client: a slow client holds its stream.
        s.res.write(Buffer.from(f.payload), () => this.send(creditFrame(f.stream, n)));
        return;
      }
      case FRAME.RES_END:
        this.finish(f.stream);
        s.res.end();
        return;
      case FRAME.RESET: {
        const msg = safeMessage(f.payload);
        if (!s.res.headersSent) this.owner.count(this.serviceId, Date.now() - s.started, true);
        this.fail(f.stream, 502, `The service failed to answer: ${msg}`);
        return;
      }
      case FRAME.CREDIT: {
        s.unacked = Math.max(0, s.unacked - (f.payload.length >= 4 ? f.payload.readUInt32BE(0) : 0));
        if (s.unacked < WINDOW && s.req.isPaused()) s.req.resume();
        return;
      }
    }
  }

  /** Proxies one request over the tunnel; resolves when the stream is over. */
  proxy(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    limits: { maxRequestBytes: number; requestTimeoutSec: number },
    via: ServiceVia,
  ) {
    const id = this.nextId++;
    const timer = setTimeout(() => {
      this.owner.count(this.serviceId, limits.requestTimeoutSec * 1000, true);
      this.fail(id, 504, `The service did not answer within ${limits.requestTimeoutSec} s.`, true);
    }, limits.requestTimeoutSec * 1000);
    const s: Stream = { req, res, unacked: 0, done: false, reqEnded: false, held: [], via, timer, started: Date.now() };
    this.streams.set(id, s);
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
    // The app's own cookies on its own host; on the API's origin the cookies would be the dashboard's.
    const cookie = via === 'host' ? withoutServiceCookie(req.headers.cookie) : undefined;
    if (cookie) headers.cookie = cookie;
    this.send(encodeFrame(FRAME.REQ_HEAD, id, { method: req.method ?? 'GET', path, headers }));
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (s.done) {
        if (size > limits.maxRequestBytes + DRAIN_MAX) req.destroy();
        return;
      }
      if (size > limits.maxRequestBytes)
        return this.fail(id, 413, `The request body is over the limit of ${limits.maxRequestBytes} bytes.`, true);
      this.send(encodeFrame(FRAME.REQ_BODY, id, c));
      s.unacked += c.length;
      if (s.unacked >= WINDOW) req.pause();
    });
    req.on('end', () => {
      if (s.done) return;
      this.send(encodeFrame(FRAME.REQ_END, id));
      s.reqEnded = true;
      for (const f of s.held.splice(0)) this.deliver(f);
    });
    // The client went away first: the app's side of the stream is reset.
    res.on('close', () => {
      if (!s.done) {
        this.send(encodeFrame(FRAME.RESET, id, { message: 'client closed' }));
        this.finish(id);
      }
    });
  }

  private send(frame: Buffer) {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(frame);
  }

  private finish(id: number) {
    const s = this.streams.get(id);
    if (!s) return;
    s.done = true;
    clearTimeout(s.timer);
    this.streams.delete(id);
    if (s.req.isPaused()) s.req.resume(); // drain what is left so the socket can be reused
  }

  /** Ends a stream with an error answer (or cuts a response already under way). */
  fail(id: number, status: number, message: string, resetWorker = false) {
    const s = this.streams.get(id);
    if (!s) return;
    if (resetWorker) this.send(encodeFrame(FRAME.RESET, id, { message }));
    this.finish(id);
    if (s.res.headersSent) s.res.destroy();
    else {
      sendJson(s.res, status, {
        error: { code: status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 504 ? 'TIMEOUT' : 'BAD_GATEWAY', message },
      });
    }
  }

  closeAll(message: string) {
    for (const id of [...this.streams.keys()]) this.fail(id, 502, message);
  }
}

/** A CHECKS frame's counts; null when malformed (whole, non-negative, failures within checks). */
function safeCounts(b: Buffer): { checks: number; failures: number } | null {
  try {
    const { checks, failures } = JSON.parse(b.toString('utf8')) as { checks?: unknown; failures?: unknown };
    const ok = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0 && (n as number) <= 1e6;
    return ok(checks) && ok(failures) && failures <= checks ? { checks, failures } : null;
  } catch {
    return null;
  }
}

function safeMessage(b: Buffer): string {
  try {
    return String((JSON.parse(b.toString('utf8')) as { message?: unknown }).message ?? 'reset').slice(0, 300);
  } catch {
    return 'reset';
  }
}

export class ServiceTunnels {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 + 16 });
  /** This process's tunnels by attempt id. */
  private readonly tunnels = new Map<string, Tunnel>();
  private readonly stats = new Map<string, ServiceStats>();
  private readonly flushTimer: NodeJS.Timeout;
  private readonly checkTimer: NodeJS.Timeout;
  /** How other API processes reach this one; set once it listens. */
  selfUrl = '';

  constructor(private readonly r: Resources) {
    this.flushTimer = setInterval(() => void this.flushStats(), STATS_FLUSH_MS);
    this.checkTimer = setInterval(() => void this.dropStale(), CURRENT_CHECK_MS);
  }

  /** The WebSocket upgrade of /svc-tunnel: worker token, attempt id and fencing token in headers. */
  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    };
    try {
      const principal = await authenticate(this.r, req.headers.authorization);
      if (principal.kind !== 'worker') return refuse(401, 'Unauthorized');
      const attemptId = String(req.headers['x-chatgpu-attempt'] ?? '');
      const fencing = String(req.headers['x-chatgpu-fencing-token'] ?? '');
      const { service, attempt } = await openTunnel(this.r, principal.workerTokenId, attemptId, fencing);
      this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws, service.id, attempt.id));
    } catch (err) {
      if (err instanceof StaleAttemptError) return refuse(409, 'Conflict');
      if (err instanceof DomainError) return refuse(404, 'Not Found');
      if (databaseUnavailable(err)) return refuse(503, 'Service Unavailable');
      this.r.log.error('tunnel upgrade failed', { message: (err as Error).message });
      refuse(500, 'Internal Server Error');
    }
  }

  private attach(ws: WebSocket, serviceId: string, attemptId: string) {
    this.tunnels.get(attemptId)?.ws.terminate(); // a reconnect replaces the old socket
    const t = new Tunnel(ws, serviceId, attemptId, this);
    this.tunnels.set(attemptId, t);
    ws.on('message', (data, isBinary) => {
      if (isBinary) t.onFrame(Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer));
    });
    ws.on('close', () => {
      if (this.tunnels.get(attemptId) === t) this.tunnels.delete(attemptId);
      t.closeAll('The service tunnel closed.');
      void this.readiness(t, false);
    });
    ws.on('error', () => ws.terminate());
  }

  async readiness(t: Tunnel, ready: boolean) {
    try {
      // Not-ready clears only this process's claim; a replaced socket's close leaves the new one's.
      if (!ready && this.tunnels.get(t.attemptId) && this.tunnels.get(t.attemptId) !== t) return;
      await setServiceReady(this.r, t.serviceId, t.attemptId, ready, this.selfUrl);
    } catch (err) {
      this.r.log.warn('service readiness not recorded', { attemptId: t.attemptId, message: (err as Error).message });
    }
  }

  /** Tunnels whose attempt is no longer its task's current live attempt are closed. */
  private async dropStale() {
    if (this.tunnels.size === 0) return;
    try {
      const ids = [...this.tunnels.keys()];
      const live = await this.r.prisma.attempt.findMany({
        where: { id: { in: ids }, status: { in: ['LEASED', 'RUNNING'] }, currentFor: { isNot: null } },
        select: { id: true },
      });
      const keep = new Set(live.map((a) => a.id));
      for (const id of ids) if (!keep.has(id)) this.tunnels.get(id)?.ws.close(4409, 'attempt no longer current');
    } catch {
      /* the next check retries */
    }
  }

  private statsOf(serviceId: string): ServiceStats {
    let s = this.stats.get(serviceId);
    if (!s) this.stats.set(serviceId, (s = { requests: 0, errors: 0, latencyMsSum: 0, readinessChecks: 0, readinessFailures: 0 }));
    return s;
  }

  count(serviceId: string, latencyMs: number, error: boolean) {
    const s = this.statsOf(serviceId);
    s.requests++;
    if (error) s.errors++;
    s.latencyMsSum += latencyMs;
  }

  /** The worker's readiness checks since its last report (FRAME.CHECKS). */
  countChecks(serviceId: string, checks: number, failures: number) {
    const s = this.statsOf(serviceId);
    s.readinessChecks += checks;
    s.readinessFailures += failures;
  }

  private async flushStats() {
    const batch = [...this.stats];
    this.stats.clear();
    for (const [id, s] of batch) await recordServiceStats(this.r, id, s).catch(() => {});
  }

  /**
   * A request to a service, on its own host (`via` 'host': browsers, with the ticket → cookie
   * exchange) or at /svc/:slug/rest on the API's origin ('api': the bearer token only, see
   * serviceOrigin.ts). The credential decides before anything reaches a worker; then the
   * current attempt's tunnel, here or in the process the database names.
   */
  async handleRequest(req: IncomingMessage, res: ServerResponse, slug: string, rest: string, via: ServiceVia) {
    const browserUrl = () => new URL(rest.replace(/^\//, ''), serviceOriginUrl(this.r.serviceBase!, slug)).toString();
    const cred = credentialOf(req, via);
    if (cred === 'cross-site') {
      // Fetch metadata (resource isolation): a page elsewhere — another service under the same
      // suffix is same-site — may link here, but not make the visitor's cookie send a request.
      return refuseRequest(
        req,
        res,
        403,
        'CROSS_SITE',
        "This service's browser cookie is only accepted from its own pages and top-level navigation; other clients send 'Authorization: Bearer <token>'.",
      );
    }
    if (
      !cred &&
      via === 'api' &&
      req.headers['sec-fetch-mode'] === 'navigate' &&
      (req.method === 'GET' || req.method === 'HEAD') &&
      /^[0-9a-f]{16}$/.test(slug)
    ) {
      // A browser opening the old path: it is served on the service's own host only.
      res.setHeader('location', browserUrl());
      return refuseRequest(req, res, 308, 'MOVED', 'Browsers open this service on its own host.');
    }
    const route = await routeFor(this.r, slug, cred, this.r.now());
    const limits = this.r.config.services;
    if (route.kind === 'unauthorized') {
      res.setHeader('www-authenticate', 'Bearer realm="chatgpu-service"');
      const where = via === 'api' ? ` Here, on the API's address, only the bearer token is accepted; browsers open ${browserUrl()}.` : '';
      return refuseRequest(
        req,
        res,
        401,
        'UNAUTHENTICATED',
        `This service needs its access token: 'Authorization: Bearer <token>' (the job page or \`chatgpu service JOB\` issues it; the job page also opens it in your browser).${where}`,
      );
    }
    if (route.kind === 'open-in-browser') {
      // The ticket becomes an HttpOnly cookie of this host only (no Domain: no other service
      // receives it); the redirect drops the ticket from the URL.
      const secure = this.r.serviceBase?.protocol === 'https:' ? '; Secure' : '';
      res.setHeader('set-cookie', `${SERVICE_COOKIE}=${route.cookie}; Path=/; Max-Age=${route.maxAgeSec}; HttpOnly; SameSite=Lax${secure}`);
      const back = new URL(req.url ?? '/', 'http://x');
      back.searchParams.delete(SERVICE_TICKET_PARAM);
      res.setHeader('location', `${back.pathname}${back.search}`);
      res.setHeader('cache-control', 'no-store');
      return refuseRequest(req, res, 303, 'SEE_OTHER', 'Opening the service.');
    }
    if (route.kind === 'forbidden') return refuseRequest(req, res, 403, 'FORBIDDEN', 'This token does not open this service.');
    if (route.kind === 'gone') return refuseRequest(req, res, 410, 'GONE', route.reason);
    if (route.kind === 'not-ready') {
      res.setHeader('retry-after', String(route.retryAfterSec));
      return refuseRequest(req, res, 503, 'NOT_READY', 'The service is not ready (starting, or moving to another worker); retry shortly.');
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limits.maxRequestBytes)
      return refuseRequest(req, res, 413, 'PAYLOAD_TOO_LARGE', `The request body is over the limit of ${limits.maxRequestBytes} bytes.`);
    const local = this.tunnels.get(route.attemptId);
    if (route.tunnelUrl === this.selfUrl || local) {
      if (!local || !local.ready) {
        res.setHeader('retry-after', '1');
        return refuseRequest(req, res, 503, 'NOT_READY', 'The service is not ready (its tunnel is reconnecting); retry shortly.');
      }
      if (local.open >= limits.maxStreams) {
        res.setHeader('retry-after', '1');
        return refuseRequest(req, res, 503, 'BUSY', `The service has ${limits.maxStreams} requests in flight; retry shortly.`);
      }
      return local.proxy(req, res, rest, limits, via);
    }
    if (req.headers[FORWARDED]) {
      res.setHeader('retry-after', '1');
      return refuseRequest(req, res, 503, 'NOT_READY', 'The service is not ready (its tunnel moved); retry shortly.');
    }
    return this.forward(req, res, route.tunnelUrl, limits.maxRequestBytes);
  }

  /** Another API process holds the tunnel: the request goes there as it came (it checks the token again). */
  private forward(req: IncomingMessage, res: ServerResponse, tunnelUrl: string, maxBytes: number) {
    const target = new URL(req.url ?? '/', tunnelUrl);
    const headers: IncomingHttpHeaders = { ...req.headers, [FORWARDED]: '1' };
    delete headers.connection;
    // The Host header goes with it: the holder routes by it as this process did.
    let over = false;
    const out = httpRequest(target, { method: req.method ?? 'GET', headers }, (up) => {
      res.writeHead(
        up.statusCode ?? 502,
        Object.fromEntries(Object.entries(up.headers).filter(([k]) => k !== 'connection' && k !== 'transfer-encoding')),
      );
      up.pipe(res);
      // The holder refused the body first (its own 413): its answer is passed on whole, then the half-sent request dropped.
      up.on('end', () => over && out.destroy());
    });
    out.on('error', () => {
      if (!res.headersSent) {
        res.setHeader('retry-after', '1');
        sendJson(res, 503, {
          error: { code: 'NOT_READY', message: 'The API process holding the service tunnel is unreachable; retry shortly.' },
        });
      } else res.destroy();
    });
    res.on('close', () => out.destroy());
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (over) {
        if (size > maxBytes + DRAIN_MAX) req.destroy();
      } else if (size > maxBytes) {
        // The rest of the body is read and dropped here, so the client reads the 413.
        over = true;
        req.unpipe(out);
        req.resume(); // unpipe paused it
        if (!res.headersSent) {
          out.destroy();
          sendJson(res, 413, { error: { code: 'PAYLOAD_TOO_LARGE', message: `The request body is over the limit of ${maxBytes} bytes.` } });
        }
      }
    });
    req.pipe(out);
  }

  async close() {
    clearInterval(this.flushTimer);
    clearInterval(this.checkTimer);
    for (const t of this.tunnels.values()) t.ws.terminate();
    this.wss.close();
    await this.flushStats();
  }
}

/**
 * The bearer token wins. On the service's own host only, the dashboard's ticket (query) or the
 * service cookie; the cookie only from the service's own pages, a top-level navigation or a
 * client that sends no fetch metadata (Sec-Fetch-Site/-Mode): 'cross-site' otherwise. On the
 * API's origin a ticket or cookie is no credential (the cookie is never sent there anyway).
 */
function credentialOf(req: IncomingMessage, via: ServiceVia): ServiceCredential | 'cross-site' {
  const bearer = req.headers.authorization?.replace(/^Bearer\s+/i, '').trim();
  if (bearer) return { bearer };
  if (via === 'api') return null;
  const ticket = new URL(req.url ?? '/', 'http://x').searchParams.get(SERVICE_TICKET_PARAM);
  if (ticket) return { ticket };
  const cookies = cookieValues(req.headers.cookie, SERVICE_COOKIE);
  if (!cookies.length) return null;
  const site = req.headers['sec-fetch-site'];
  const navigation = req.headers['sec-fetch-mode'] === 'navigate' && (req.method === 'GET' || req.method === 'HEAD');
  if (site !== undefined && site !== 'same-origin' && site !== 'none' && !navigation) return 'cross-site';
  return { cookies };
}

/**
 * An answer that never reached a worker. The unread body is read and dropped (so the client,
 * still sending, reads the answer instead of a reset), up to DRAIN_MAX; then the connection is cut.
 */
function refuseRequest(req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string) {
  let drained = 0;
  req.on('data', (c: Buffer) => {
    drained += c.length;
    if (drained > DRAIN_MAX) req.destroy();
  });
  req.resume();
  sendJson(res, status, { error: { code, message } });
}
