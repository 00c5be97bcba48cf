/**
 * Requests from Node to a service's own host (`http://<slug>.svc.localhost:PORT/…`, see
 * api/src/domain/services/serviceOrigin.ts). Browsers and curl map every `*.localhost` name
 * to the loopback; Node's resolver does not, so this connects to 127.0.0.1 on the URL's port
 * and sends the URL's host in the Host header, as a browser would. Other URLs are requested
 * as they are; unlike fetch, every header is sent as given (Sec-Fetch-*, Cookie).
 */
import { request, type IncomingHttpHeaders } from 'node:http';

export interface HostAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export function hostFetch(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer | AsyncIterable<Buffer> } = {},
): Promise<HostAnswer> {
  const u = new URL(url);
  return new Promise((resolve, fail) => {
    const reject = (err: Error) => fail(new Error(`${init.method ?? 'GET'} ${url}: ${err.message}`));
    const req = request(
      {
        host: u.hostname.endsWith('.localhost') ? '127.0.0.1' : u.hostname,
        port: Number(u.port || 80),
        path: `${u.pathname}${u.search}`,
        method: init.method ?? 'GET',
        headers: { host: u.host, ...init.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    const body = init.body;
    if (body === undefined) req.end();
    else if (Buffer.isBuffer(body)) req.end(body);
    else
      void (async () => {
        // A body of undeclared size (chunked), written as it comes.
        for await (const c of body) if (!req.write(c)) await new Promise((r) => req.once('drain', r));
        req.end();
      })().catch(reject);
  });
}
