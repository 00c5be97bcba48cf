/**
 * Composition root: database, pub/sub, HTTP (GraphQL over HTTP, blobs, health, the
 * dashboard), graphql-ws on the same port and path, and the scheduler tick.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { GraphQLError, parse, validate, type ExecutionArgs, type GraphQLFormattedError } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/client.js';
import { databaseUnavailable, UNAVAILABLE_RETRY_AFTER_SEC } from './db/unavailable.js';
import { authenticate } from './domain/auth/users.js';
import type { Principal } from './domain/auth/principal.js';
import { createBlobStore } from './domain/blobs/createBlobStore.js';
import { DomainError } from './domain/errors.js';
import { consoleLogger, type Logger, type Resources } from './domain/resources.js';
import type { Context } from './graphql/context.js';
import { schema } from './graphql/index.js';
import { checkLimits } from './graphql/limits.js';
import { PubSub } from './graphql/pubsub.js';
import { handleBlob, sendJson } from './http/blobRoutes.js';
import { handleOutputsArchive } from './http/outputsArchive.js';
import { HTTP_ROUTES } from './http/routes.js';
import { serveStatic } from './http/staticFiles.js';
import { ServiceTunnels } from './http/serviceTunnel.js';
import { serviceBase, slugOfHost } from './domain/services/serviceOrigin.js';
import { startScheduler } from './scheduler/startScheduler.js';
import { resumeAfterOutage } from './scheduler/tick.js';
import { modelFor } from './agents/modelFor.js';
import type { ModelClient } from './agents/models/types.js';
import { AgentTurns } from './agents/agentTurns.js';
import { JobEngine } from './domain/jobs/engine.js';
import { flushTelemetry, initApiTelemetry, reportError } from './telemetry/sentry.js';
import { inRepo } from './paths.js';
import { ping } from './db/sql/ping.js';

export interface StartOptions {
  config: Config;
  db?: Database;
  log?: Logger;
  now?: () => Date;
  /** Passed to the agents' turns (crash tests inject a kill after a side effect commits). */
  afterAction?: (toolName: string) => void;
  /** Built dashboard to serve at / (default web/dist when it exists). */
  webDir?: string | null;
  /** Run the scheduler tick on node-cron (default true; tests drive ticks directly). */
  scheduler?: boolean;
  /** The agents' model (default: openai when OPENAI_API_KEY is set, else builtin); null: no agents (the job engine still runs). */
  model?: ModelClient | null;
  /**
   * Start the job engine (domain/jobs/engine.ts; default true, whatever the agents). Only tests
   * that drive a job's tasks by hand, or play a process that died before it reacted, turn it off.
   */
  engine?: boolean;
}

export interface RunningServer {
  url: string;
  port: number;
  db: Database;
  pubsub: PubSub;
  resources: Resources;
  engine: JobEngine | null;
  agents: AgentTurns | null;
  close(): Promise<void>;
}

const SAFE_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'OPERATION_RESOLUTION_FAILURE',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'QUERY_TOO_DEEP',
  'QUERY_TOO_COSTLY',
  'UNAVAILABLE',
]);

/** The GraphQL error for a database outage: retryable, with how long to wait (seconds). */
export function unavailableError(path?: GraphQLFormattedError['path']): GraphQLFormattedError {
  return {
    message: `The database is unavailable (restarting or unreachable); retry in ${UNAVAILABLE_RETRY_AFTER_SEC} s.`,
    ...(path ? { path } : {}),
    extensions: { code: 'UNAVAILABLE', retryAfter: UNAVAILABLE_RETRY_AFTER_SEC },
  };
}

/**
 * Known errors keep their message and get a code; a database outage is UNAVAILABLE
 * (retryable, logged as a warning); anything else is masked and logged.
 */
export function formatError(log: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    if (original instanceof DomainError) {
      return { message: original.message, path: formatted.path, extensions: { code: original.code } };
    }
    const outage = databaseUnavailable(original);
    if (outage) {
      log.warn('database unavailable (GraphQL)', { reason: outage, path: formatted.path?.join('.') });
      return unavailableError(formatted.path);
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && SAFE_CODES.has(code)) {
      const { stacktrace: _s, ...ext } = formatted.extensions ?? {};
      return { ...formatted, extensions: ext };
    }
    if (original instanceof GraphQLError && !original.originalError && original.message.startsWith('Variable ')) {
      return { message: formatted.message, extensions: { code: 'BAD_USER_INPUT' } };
    }
    const ref = randomUUID();
    log.error('unexpected GraphQL error', { ref, message: (original as Error)?.message, stack: (original as Error)?.stack });
    reportError(original, { ref, path: formatted.path });
    return { message: `Internal error (reference ${ref}).`, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR', ref } };
  };
}

export async function startServer(opts: StartOptions): Promise<RunningServer> {
  const { config } = opts;
  const log = opts.log ?? consoleLogger;
  await initApiTelemetry(config.sentryDsn);
  const db =
    opts.db ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      waitSec: config.databaseWaitSec,
      dataDir: config.dataDir,
      leaseSec: config.scheduler.leaseSec,
      ...(opts.now ? { now: opts.now } : {}),
      log: (m) => log.warn(m),
    }));
  const pubsub = new PubSub(db);
  await pubsub.start();
  const resources: Resources = {
    prisma: db.prisma,
    events: pubsub,
    blobs: createBlobStore(config, db.prisma),
    config,
    log,
    now: opts.now ?? (() => new Date()),
  };
  const model = opts.model === undefined ? await modelFor(config) : opts.model;
  const engine = opts.engine === false ? null : new JobEngine(resources);
  engine?.listen(pubsub);
  const agents = model ? new AgentTurns(resources, model, opts.afterAction ? { afterAction: opts.afterAction } : {}) : null;
  if (agents && engine) agents.attach(engine);
  agents?.listen(pubsub);
  // What uploads cut off by a crash left (a temporary file, orphan chunks, an incomplete
  // multipart upload) is never read; what is over a day old is removed. Start-up does not
  // wait on the store (close() does).
  const sweeping = resources.blobs.sweep(24 * 3600_000).then(
    (n) => void (n && log.info(`removed ${n} leftover(s) of interrupted blob uploads`)),
    (err) => log.warn('blob sweep failed', { message: (err as Error).message }),
  );
  const makeContext = (principal: Principal): Context => ({ ...resources, principal, pubsub });
  const services = new ServiceTunnels(resources);

  const limitsPlugin: ApolloServerPlugin<Context> = {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request }) {
          const err = checkLimits(schema, document, request.variables, request.operationName, config.graphql);
          if (err) throw err;
        },
      };
    },
  };
  const apollo = new ApolloServer<Context>({
    schema,
    // No cache hints are set anywhere: Apollo's default cache-control plugin would only add a
    // hook per resolved field to every request.
    plugins: [limitsPlugin, ApolloServerPluginCacheControlDisabled()],
    includeStacktraceInErrorResponses: false,
    formatError: formatError(log),
    introspection: true,
  });
  await apollo.start();

  const webDir = opts.webDir === undefined ? inRepo('web/dist') : opts.webDir;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // A service's own host serves that service and nothing else (serviceOrigin.ts): its pages
    // never share an origin with the dashboard or with another service.
    const hostSlug = slugOfHost(resources.serviceBase!, req.headers.host);
    if (hostSlug !== null) return services.handleRequest(req, res, hostSlug, req.url ?? '/', 'host');
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (HTTP_ROUTES.healthz.pattern.test(url.pathname)) {
      // A database outage reaches the error path below: 503 + Retry-After, unhealthy.
      await ping(db.prisma);
      return sendJson(res, 200, { ok: true, database: db.kind });
    }
    // Hosted services for programs: their bearer token, checked before anything reaches a worker.
    const svc = HTTP_ROUTES.service.pattern.exec(url.pathname);
    if (svc) return services.handleRequest(req, res, svc[1]!, `/${svc[2] ?? ''}${url.search}`, 'api');
    if (HTTP_ROUTES.serviceTunnel.pattern.test(url.pathname))
      return sendJson(res, 426, { error: { code: 'UPGRADE_REQUIRED', message: 'The service tunnel is a WebSocket.' } });
    // Authenticated only on the API's routes: the dashboard's files need no database.
    const principal = () => authenticate(resources, req.headers.authorization);
    const outputs = HTTP_ROUTES.outputsArchive.pattern.exec(url.pathname);
    if (outputs && req.method === 'GET') return handleOutputsArchive(resources, await principal(), res, decodeURIComponent(outputs[1]!));
    const blob = HTTP_ROUTES.blob.pattern.exec(url.pathname);
    if (blob) return handleBlob(resources, await principal(), req, res, blob[1]!, url.searchParams);
    if (HTTP_ROUTES.graphql.pattern.test(url.pathname))
      return graphqlHttp(req, res, url, withClientGone(makeContext(await principal()), res));
    if (webDir && (req.method === 'GET' || req.method === 'HEAD') && (await serveStatic(webDir, url.pathname, res))) return;
    sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'No such route.' } });
  };

  /**
   * The context's `signal`: aborted when the client leaves before its answer (a long-poll claim
   * then ends). Made only when a resolver reads it (the claim): a controller and a 'close'
   * listener per request were ≈ 1.5 % of a heartbeat's CPU. Only a client gone first aborts:
   * abort() after every answer cost ≈ 9 % (a DOMException with its stack per request).
   */
  const withClientGone = (context: Context, res: ServerResponse): Context => {
    let abort: AbortController | undefined;
    return Object.defineProperty(context, 'signal', {
      enumerable: true,
      get() {
        if (!abort) {
          const made = (abort = new AbortController());
          if (res.closed) {
            if (!res.writableFinished) made.abort();
          } else {
            res.once('close', () => {
              if (!res.writableFinished) made.abort();
            });
          }
        }
        return abort.signal;
      },
    });
  };

  const graphqlHttp = async (req: IncomingMessage, res: ServerResponse, url: URL, contextValue: Context) => {
    const headers = new HeaderMap();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    let body: unknown = undefined;
    if (req.method === 'POST') {
      const raw = await readBody(req, 32 * 1024 * 1024);
      if (raw === null)
        return sendJson(res, 413, { errors: [{ message: 'Request body too large.', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
      try {
        body = raw.length ? JSON.parse(raw.toString('utf8')) : {};
      } catch {
        return sendJson(res, 400, { errors: [{ message: 'The request body is not valid JSON.', extensions: { code: 'BAD_REQUEST' } }] });
      }
    }
    const result = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: url.search, body },
      context: async () => contextValue,
    });
    for (const [k, v] of result.headers) res.setHeader(k, v);
    res.statusCode = result.status ?? 200;
    if (result.body.kind === 'complete') {
      // An answer carrying UNAVAILABLE (a database outage) is a 503 with Retry-After, so
      // HTTP-level clients and proxies retry it like any other route's outage.
      if (result.body.string.includes('"UNAVAILABLE"') && hasUnavailable(result.body.string)) {
        res.statusCode = 503;
        res.setHeader('retry-after', String(UNAVAILABLE_RETRY_AFTER_SEC));
      }
      return void res.end(result.body.string);
    }
    for await (const chunk of result.body.asyncIterator) res.write(chunk);
    res.end();
  };

  // Requests being handled: close() lets them finish before it stops GraphQL and closes the
  // database (a stop mid-request must not leave half of its work done, or log a masked 500).
  const inFlight = new Set<Promise<void>>();
  const server: Server = createServer((req, res) => {
    const done: Promise<void> = handle(req, res).catch((err) => {
      const outage = databaseUnavailable(err);
      if (outage) {
        // Every route, /healthz and /graphql included: 503 + Retry-After (GraphQL-shaped on /graphql).
        log.warn('database unavailable', { url: req.url, reason: outage });
        if (res.headersSent) return void res.destroy();
        req.resume(); // an upload refused before its body was read: drain it so the client reads the 503
        res.setHeader('retry-after', String(UNAVAILABLE_RETRY_AFTER_SEC));
        const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
        if (pathname === '/graphql') return sendJson(res, 503, { errors: [unavailableError()] });
        if (pathname === '/healthz') return sendJson(res, 503, { ok: false, database: db.kind, error: 'The database is unavailable.' });
        return sendJson(res, 503, {
          error: { code: 'UNAVAILABLE', message: unavailableError().message, retryAfter: UNAVAILABLE_RETRY_AFTER_SEC },
        });
      }
      if (clientHungUp(req, err)) {
        // The client closed its connection mid-request (a worker killed or cut off mid-upload):
        // nobody is left to answer, and it is no fault of the server.
        log.warn('client hung up mid-request', { url: req.url });
        return void res.destroy();
      }
      log.error('request failed', { url: req.url, message: (err as Error).message, stack: (err as Error).stack });
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'INTERNAL', message: 'Internal error.' } });
      else res.destroy();
    });
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
  });
  server.requestTimeout = 0; // uploads and long-polls may take long; sockets are bounded by keepAlive below
  server.keepAliveTimeout = 65_000;

  // One upgrade handler: graphql-ws on /graphql, service tunnels on /svc-tunnel.
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (slugOfHost(resources.serviceBase!, req.headers.host) !== null) {
      return void socket.end('HTTP/1.1 501 Not Implemented\r\nconnection: close\r\ncontent-length: 0\r\n\r\n'); // the tunnel carries HTTP requests only
    }
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (HTTP_ROUTES.serviceTunnel.pattern.test(pathname)) return void services.handleUpgrade(req, socket, head);
    if (HTTP_ROUTES.graphql.pattern.test(pathname)) return wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  const wsServer = useServer<Record<string, unknown>, { authorization?: string | undefined; principal?: Principal }>(
    {
      schema,
      onConnect: async (ctx) => {
        const auth = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        ctx.extra.authorization = typeof auth === 'string' ? auth : undefined;
        return true;
      },
      onSubscribe: async (ctx, _id, payload) => {
        // Authenticated per subscription, like every HTTP request: a token revoked or
        // rotated while the socket is open is refused at its next subscription.
        try {
          ctx.extra.principal = await authenticate(resources, ctx.extra.authorization);
        } catch (err) {
          if (!databaseUnavailable(err)) throw err;
          const e = unavailableError();
          return [new GraphQLError(e.message, { extensions: e.extensions })];
        }
        let document;
        try {
          document = parse(payload.query);
        } catch (err) {
          return [err as GraphQLError];
        }
        const errors = validate(schema, document);
        if (errors.length) return errors;
        const limit = checkLimits(schema, document, payload.variables ?? undefined, payload.operationName, config.graphql);
        if (limit) return [limit];
        const args: ExecutionArgs = {
          schema,
          document,
          variableValues: payload.variables ?? null,
          operationName: payload.operationName ?? null,
          contextValue: makeContext(ctx.extra.principal ?? { kind: 'anonymous' }),
        };
        return args;
      },
      onError: (_ctx, _id, _payload, errors) => {
        const fmt = formatError(log);
        return errors.map((e) => fmt(e.toJSON(), e) as GraphQLError);
      },
      onNext: (_ctx, _id, _payload, _args, result) => {
        if (!('errors' in result) || !result.errors?.length) return result;
        const fmt = formatError(log);
        return { ...result, errors: result.errors.map((e) => fmt(e.toJSON(), e)) } as never;
      },
    },
    wss,
  );

  let scheduler: ReturnType<typeof startScheduler> | null = null;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await scheduler?.stop();
    await sweeping;
    agents?.stop();
    engine?.stop();
    await Promise.race([Promise.all([agents?.idle(), engine?.idle()]), new Promise((r) => setTimeout(r, 5000))]);
    await services.close();
    await wsServer.dispose();
    wss.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    // Their sockets are closed (a long-poll's signal aborts it); what is still running finishes.
    let drainTimer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => (drainTimer = setTimeout(r, 10_000)))]);
    clearTimeout(drainTimer);
    await apollo.stop();
    await pubsub.stop();
    await flushTelemetry();
    if (!opts.db) await db.close();
  };

  // Leases that ran out while no API process was running are resumed before any worker's
  // heartbeat can be refused as expired (scheduler/tick.ts, resumeAfterOutage).
  if (opts.scheduler !== false) await resumeAfterOutage(resources, resources.now());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (err) {
    await close();
    throw listenError(err, config);
  }
  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  resources.baseUrl = config.publicUrl ?? `http://localhost:${port}`;
  resources.serviceBase = serviceBase(config.services.publicUrl, config.publicUrl, port);
  services.selfUrl = config.internalUrl ?? `http://${host}:${port}`;

  if (opts.scheduler !== false) scheduler = startScheduler(resources);

  return { url: `http://${host}:${port}`, port, db, pubsub, resources, engine, agents, close };
}

/**
 * The API could not listen, in one sentence a user can act on (`startServer` throws it;
 * `npm start` prints its message alone, without a stack trace).
 */
export class ListenError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'ListenError';
  }
}

/** Turns listen's EADDRINUSE / EACCES / EADDRNOTAVAIL into a ListenError; anything else is returned as it is. */
export function listenError(err: unknown, where: { port: number; host: string }): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  const change = `start it on another one with --port N (or PORT=N)`;
  if (code === 'EADDRINUSE') {
    return new ListenError(
      `Port ${where.port} on ${where.host} is already in use (ChatGPU or another program is listening there): stop that program, or ${change}.`,
      code,
    );
  }
  if (code === 'EACCES')
    return new ListenError(`This user may not listen on port ${where.port} (ports below 1024 need root): ${change}.`, code);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new ListenError(
      `${where.host} is not an address of this machine, so the API cannot listen on it: give one of its addresses with --host ADDRESS (or HOST=ADDRESS), or leave it out for 127.0.0.1.`,
      code,
    );
  }
  return err;
}

/** Node's "aborted" error: the request's connection closed before its body was read to the end. */
function clientHungUp(req: IncomingMessage, err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; syscall?: unknown } | null;
  return req.socket.destroyed && e?.code === 'ECONNRESET' && e.message === 'aborted' && e.syscall === undefined;
}

/** Whether a GraphQL response body carries an UNAVAILABLE error. */
function hasUnavailable(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { errors?: { extensions?: { code?: unknown } }[] };
    return !!parsed.errors?.some((e) => e.extensions?.code === 'UNAVAILABLE');
  } catch {
    return false;
  }
}

async function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > max) {
      req.resume();
      return null;
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}
