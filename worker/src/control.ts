/**
 * Local control for the machine's owner: `chatgpu-worker pause|resume|drain|status` talk to
 * the running worker over a Unix socket in its data directory (no network port). `drain`
 * answers once the machine is free (every drained task checkpointed and gone, or killed).
 */
import { existsSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import path from 'node:path';

export function controlSocketPath(dataDir: string): string {
  return path.join(dataDir, 'worker.sock');
}

export type ControlCommand = 'pause' | 'resume' | 'drain' | 'status';

export function serveControl(
  dataDir: string,
  handlers: { pause(): Promise<unknown>; resume(): Promise<unknown>; drain(): Promise<unknown>; status(): unknown },
): Server {
  const socket = controlSocketPath(dataDir);
  if (existsSync(socket)) rmSync(socket);
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
  server.listen(socket);
  return server;
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
