/**
 * An API process that stops (a clean restart) while requests are in flight: their sockets
 * close, but the handlers already running finish their work before the database closes —
 * never an "unexpected error" (a masked 500, a Sentry report) from a pool that was ended under
 * them, and never half of a request's work done (its writes without its notification). Found
 * by the chaos suite's API restarts (bench/lib/chaos.ts): a log batch stored, then its NOTIFY
 * met the ended pool.
 */
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
