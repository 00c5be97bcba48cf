/**
 * The worker's status orders race its owner's own requests. A heartbeat answered before the
 * owner's drain (or pause) committed carries the status it read then; applied after the drain,
 * its RESUME used to undo the drain on the machine (seen in drain-checkpoint.test.ts under
 * load: "draining…" then "resumed: taking new tasks again" 23 ms later). Here the real API's
 * heartbeat answer is held on its way back by a proxy on 127.0.0.1 while the owner drains —
 * or the drain's own request is held on its way to the API while a heartbeat goes and comes
 * back (seen in drain-checkpoint.test.ts in a full run: the same 24 ms undo).
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Session } from '../../worker/src/session.js';
import { startTestApi } from './helpers/api.js';
import { CPU_CAPS, createWorkerToken } from './helpers/protocolClient.js';

const api = await startTestApi({ HEARTBEAT_SEC: '3600' });
const owner = await api.signUp();

/**
 * Forwards to the API, holding what matches until `release()`: the requests whose body contains
 * `holdRequest` on their way to the API, or the answers to those containing `holdAnswer` on
 * their way back.
 */
async function holdingProxy(hold: { holdAnswer?: string; holdRequest?: string } = { holdAnswer: 'heartbeat(' }) {
  let held: (() => void)[] = [];
  let onHeld: (() => void) | null = null;
  const keep = (fn: () => void) => {
    held.push(fn);
    onHeld?.();
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = () => {
        // A connection of its own per request (no kept-alive socket the API may have closed
        // meanwhile), and an API that hangs up (its shutdown at the end of the file, while the
        // worker's long poll is open) is a 502 to the worker, not an uncaught error here.
        const up = request(
          `${api.url}${req.url}`,
          { method: req.method, headers: { ...req.headers, host: new URL(api.url).host }, agent: false },
          (upRes) => {
            const out: Buffer[] = [];
            upRes.on('data', (c) => out.push(c));
            upRes.on('end', () => {
              const send = () => res.writeHead(upRes.statusCode ?? 502, upRes.headers).end(Buffer.concat(out));
              if (hold.holdAnswer && body.includes(hold.holdAnswer)) keep(send);
              else send();
            });
          },
        );
        up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
        up.end(body);
      };
      if (hold.holdRequest && body.includes(hold.holdRequest)) keep(forward);
      else forward();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    heldOne: () => new Promise<void>((r) => (held.length ? r() : (onHeld = r))),
    release() {
      for (const s of held) s();
      held = [];
    },
  };
}

describe("a heartbeat answered before the owner's own request does not undo it", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  async function session(name: string, proxyUrl: string) {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-session-'));
    dirs.push(dataDir);
    const s = new Session({
      server: proxyUrl,
      token: await createWorkerToken(api, owner.token, name),
      name,
      slots: 1,
      dataDir,
      caps: CPU_CAPS as never,
      sandbox: 'none',
      memoryLimit: () => null,
      log: { info: () => {}, warn: () => {} },
    });
    await s.start();
    afterAll(() => s.stop());
    return s;
  }
  const dbStatus = async (s: Session) => (await api.server.db.prisma.worker.findUniqueOrThrow({ where: { id: s.workerId! } })).status;

  it('drain: the in-flight heartbeat read ONLINE (RESUME); the worker stays DRAINING, as the API says', async () => {
    const proxy = await holdingProxy();
    const s = await session('drain-race', proxy.url);
    expect(s.status).toBe('ONLINE');
    const beat = s.heartbeat();
    await proxy.heldOne(); // the API answered RESUME (it is ONLINE), the answer is on its way
    const drained = await s.drain();
    expect(drained.status).toBe('DRAINING');
    expect(await dbStatus(s)).toBe('DRAINING');
    proxy.release();
    await beat;
    expect(s.status).toBe('DRAINING');
    // The next heartbeat carries the API's current status: DRAIN, still draining.
    const next = s.heartbeat();
    await proxy.heldOne();
    proxy.release();
    await next;
    expect(s.status).toBe('DRAINING');
  });

  it("drain: a heartbeat sent while the drain's request is still on its way reads ONLINE (RESUME); the worker stays DRAINING", async () => {
    const proxy = await holdingProxy({ holdRequest: 'drainOwnWorker(' });
    const s = await session('drain-race-2', proxy.url);
    const drained = s.drain();
    await proxy.heldOne(); // the drain is decided on the machine; the API has not seen it yet
    expect(s.status).toBe('DRAINING');
    await s.heartbeat(); // answered by an API that still has the worker ONLINE
    expect(s.status).toBe('DRAINING');
    proxy.release();
    expect((await drained).status).toBe('DRAINING');
    expect(await dbStatus(s)).toBe('DRAINING');
  });

  it('pause: the in-flight heartbeat read ONLINE; the worker stays PAUSED', async () => {
    const proxy = await holdingProxy();
    const s = await session('pause-race', proxy.url);
    const beat = s.heartbeat();
    await proxy.heldOne();
    expect(await s.setPaused(true)).toBe('PAUSED');
    proxy.release();
    await beat;
    expect(s.status).toBe('PAUSED');
    expect(await dbStatus(s)).toBe('PAUSED');
  });
});
