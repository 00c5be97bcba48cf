/**
 * An API process that stops (a clean restart) while requests are in flight: their sockets
 * close, but the handlers already running finish their work before the database closes —
 * never an "unexpected error" (a masked 500, a Sentry report) from a pool that was ended under
 * them, and never half of a request's work done (its writes without its notification). Found
 * by the chaos suite's API restarts (bench/lib/chaos.ts): a log batch stored, then its NOTIFY
 * met the ended pool. Likewise a client that hangs up mid-upload (a worker killed or cut
 * off) is nobody's 500: a warning, nothing stored.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../src/domain/resources.js';
import { startTestApi } from './helpers/api.js';
import { addTask, createJobWithFile, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';

const errors: string[] = [];
const log: Logger = { info: () => {}, warn: () => {}, error: (m, d) => void errors.push(`${m} ${JSON.stringify(d ?? {})}`) };
const api = await startTestApi({}, { log });

describe('an API stopping with requests in flight', () => {
  it('lets running handlers finish before the database closes: no unexpected error', async () => {
    const user = await api.signUp();
    const token = await createWorkerToken(api, user.token);
    const job = await createJobWithFile(api, user.token);
    await addTask(api, job);
    const w = new ProtocolWorker(api, token, 'closing-box');
    await w.hello();
    const [a] = await w.claim();

    // 16 senders of log batches without pause, and the stop while they run.
    let seq = 0;
    let stopping = false;
    const sender = async () => {
      while (!stopping) await w.appendLogs(a!, [{ seq: seq++, text: `line ${seq}` }]).catch(() => null);
    };
    const senders = Array.from({ length: 16 }, sender);
    await new Promise((r) => setTimeout(r, 500));
    await api.server.close();
    stopping = true;
    await Promise.all(senders);
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);
});

describe('a client that hangs up mid-upload', () => {
  it('is no server error (nobody is left to answer): logged as a warning, nothing stored, the retried upload completes', async () => {
    const other = await startTestApi({}, { log });
    errors.length = 0;
    const user = await other.signUp();
    const content = Buffer.alloc(4 * 1024 * 1024, 7);
    const sha = createHash('sha256').update(content).digest('hex');
    const { port } = new URL(other.url);
    // Half of the body, then the connection drops (a worker killed or cut off mid-upload).
    await new Promise<void>((resolve) => {
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: `/blobs/${sha}`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream', 'content-length': content.length },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write(content.subarray(0, content.length / 2), () => setTimeout(() => req.destroy(), 200));
    });
    await new Promise((r) => setTimeout(r, 500)); // the server notices the hang-up
    expect(await other.server.db.prisma.blob.count({ where: { sha256: sha } })).toBe(0);
    const put = await other.putBlob(content, user.token);
    expect(put.status).toBe(201);
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);
});
