/**
 * Local control for the machine's owner: `chatgpu-worker pause|resume|status` talk to
 * the running worker over a Unix socket in its data directory (no network port).
 */
import { existsSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import path from 'node:path';

export function controlSocketPath(dataDir: string): string {
  return path.join(dataDir, 'worker.sock');
}

export function serveControl(dataDir: string, handlers: { pause(): Promise<unknown>; resume(): Promise<unknown>; status(): unknown }): Server {
  const socket = controlSocketPath(dataDir);
  if (existsSync(socket)) rmSync(socket);
  const server = createServer(async (req, res) => {
    try {
      const body = req.url === '/pause' ? await handlers.pause() : req.url === '/resume' ? await handlers.resume() : handlers.status();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (err as Error).message }));
    }
  });
  server.listen(socket);
  return server;
}

export function callControl(dataDir: string, what: 'pause' | 'resume' | 'status'): Promise<unknown> {
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
