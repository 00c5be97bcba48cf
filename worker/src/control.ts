/**
 * Local control for the machine's owner: `chatgpu-worker pause|resume|drain|status` talk to
 * the running worker over a Unix socket in its data directory (no network port). `drain`
 * answers once the machine is free (every drained task checkpointed and gone, or killed). The
 * socket is also the data folder's lock: one worker per folder (claimControl).
 */
import { rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { connect } from 'node:net';
import path from 'node:path';

export function controlSocketPath(dataDir: string): string {
  return path.join(dataDir, 'worker.sock');
}

export type ControlCommand = 'pause' | 'resume' | 'drain' | 'status';

type Handlers = { pause(): Promise<unknown>; resume(): Promise<unknown>; drain(): Promise<unknown>; status(): unknown };

/** What a control socket answers while the worker is still starting (probe, connect). */
const starting: Handlers = {
  pause: () => Promise.reject(new Error('the worker is still starting: try again in a moment')),
  resume: () => Promise.reject(new Error('the worker is still starting: try again in a moment')),
  drain: () => Promise.reject(new Error('the worker is still starting: try again in a moment')),
  status: () => ({ status: 'STARTING' }),
};

export interface Control {
  server: Server;
  /** Hands the socket to the running worker's handlers (until then it answers "starting"). */
  serve(handlers: Handlers): void;
  close(): void;
}

const listen = (server: Server, socket: string) =>
  new Promise<NodeJS.ErrnoException | null>((resolve) => {
    const onError = (err: NodeJS.ErrnoException) => resolve(err);
    server.once('error', onError);
    server.listen(socket, () => {
      server.off('error', onError);
      resolve(null);
    });
  });

/**
 * Takes the data folder's control socket, which is also its lock: binding a Unix socket is atomic,
 * so of two workers started on one folder at once only one gets it. A socket file nobody answers
 * on is a worker killed outright: it is removed and taken. Resolves null when another worker holds
 * the folder. Call it first thing, before anything else touches the folder.
 */
export async function claimControl(dataDir: string): Promise<Control | null> {
  const socket = controlSocketPath(dataDir);
  let handlers = starting;
  const server = createServer(async (req, res) => {
    try {
      const body =
        req.url === '/pause'
          ? await handlers.pause()
          : req.url === '/resume'
            ? await handlers.resume()
            : req.url === '/drain'
              ? await handlers.drain()
              : handlers.status();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (err as Error).message }));
    }
  });
  // A drain waits for its grace period: no request timeout on this local socket.
  server.requestTimeout = 0;
  let err = await listen(server, socket);
  if (err?.code === 'EADDRINUSE') {
    if (await answers(socket)) return null;
    rmSync(socket, { force: true });
    err = await listen(server, socket);
    // Another worker took the stale socket's place between the two tries.
    if (err?.code === 'EADDRINUSE') return null;
  }
  if (err) throw err;
  // The socket never keeps the process alive by itself (a start that fails later still exits).
  server.unref();
  return {
    server,
    serve: (h) => (handlers = h),
    close: () => server.close(),
  };
}

/** Whether something listens on the socket (a connection is accepted). */
function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(socket);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

export function callControl(dataDir: string, what: ControlCommand): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: controlSocketPath(dataDir), path: `/${what}`, method: 'POST' }, (res) => {
      let data = '';
      res.on('data', (c) => (data += c));
      res.on('end', () => {
        try {
          const body = JSON.parse(data) as { error?: string };
          if (body.error) reject(new Error(body.error));
          else resolve(body);
        } catch (err) {
          reject(err as Error);
        }
      });
    });
    req.on('error', () => reject(new Error(`no worker is running with data directory ${dataDir}`)));
    req.end();
  });
}
