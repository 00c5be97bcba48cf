/**
 * One stuck heartbeat request must not lose the worker's leases. A real worker process talks to
 * a real API through a proxy on 127.0.0.1 that, once the task's program runs, holds one heartbeat
 * carrying its lease and never answers it. Heartbeats are 1 s apart and leases 12 s; the program
 * runs 2 leases long. The worker gives up the held request (its own time limit, under a third of
 * the lease), does not wait for it before the next heartbeat, and the next ones renew the lease:
 * the task succeeds on its first attempt, nothing is LOST. (The worker used to send heartbeats one
 * after another, each with a 60 s limit and retries without end: the held one stalled every later
 * renewal and the lease ran out.)
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startTestApi } from './helpers/api.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const LEASE_SEC = 12;
const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: String(LEASE_SEC) }, { scheduler: true });
const user = await api.signUp();
const prisma = api.server.db.prisma;

/** What the proxy saw of the heartbeats that carried the watched attempt's lease, in arrival order. */
interface Beat {
  held: boolean;
  /** the worker closed the request before any answer (its time limit) */
  abandoned: boolean;
  answered: boolean;
}

/**
 * Forwards everything to the API; once armed, the first heartbeat that names `attemptId` is held
 * (never forwarded, never answered) until the worker gives up on it or the file ends.
 */
async function stallingProxy() {
  const beats: Beat[] = [];
  let watch: string | null = null;
  let armed = false;
  let heldOpen = false;
  let arrivedWhileHeld = 0;
  const open = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = body.toString();
      const isBeat = watch !== null && text.includes('heartbeat(') && text.includes(watch);
      if (isBeat) {
        if (heldOpen) arrivedWhileHeld++;
        if (armed) {
          armed = false;
          heldOpen = true;
          const beat: Beat = { held: true, abandoned: false, answered: false };
          beats.push(beat);
          const end = () => res.destroy();
          open.add(end);
          res.on('close', () => {
            open.delete(end);
            heldOpen = false;
            if (!res.writableEnded) beat.abandoned = true;
          });
          return;
        }
      }
      const beat: Beat | null = isBeat ? { held: false, abandoned: false, answered: false } : null;
      if (beat) beats.push(beat);
      const up = request(
        `${api.url}${req.url}`,
        { method: req.method, headers: { ...req.headers, host: new URL(api.url).host }, agent: false },
        (upRes) => {
          const out: Buffer[] = [];
          upRes.on('data', (c: Buffer) => out.push(c));
          upRes.on('end', () => {
            if (beat) beat.answered = upRes.statusCode === 200;
            res.writeHead(upRes.statusCode ?? 502, upRes.headers).end(Buffer.concat(out));
          });
        },
      );
      up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      up.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  afterAll(() => {
    for (const end of open) end();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    beats,
    arrivedWhileHeld: () => arrivedWhileHeld,
    /** Holds the next heartbeat that carries this attempt's lease. */
    holdNext(attemptId: string) {
      watch = attemptId;
      armed = true;
    },
  };
}

it('a heartbeat request that never answers loses no lease: the next heartbeats renew it', async () => {
  const proxy = await stallingProxy();
  const wt = await api.gql(
    `mutation { createWorkerToken(input: {name: "stall"}) { ... on CreatedWorkerToken { token } } }`,
    {},
    user.token,
  );
  const w = await startWorker(proxy.url, wt.data.createWorkerToken.token, 'stall', ['--python', '/usr/bin/python3']);
  afterAll(() => w.stop());
  const files = [
    {
      path: 'run.py',
      sha256: (await api.putBlob(`import time\nprint("started", flush=True)\ntime.sleep(${2 * LEASE_SEC})\nprint("done")\n`, user.token))
        .sha256,
    },
  ];
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
    { i: { title: 't', request: 'r', files } },
    user.token,
  );
  const jobId = Buffer.from(r.data.createJob.id as string, 'base64')
    .toString()
    .split(':')[1]!;
  const task = await createTask(api.server.resources, {
    jobId,
    kind: 'RUN',
    name: 'run',
    codeVersionId: r.data.createJob.originalCode.id,
    command: 'python run.py',
    requirements: { workload: 'python' },
    maxAttempts: 1,
  });

  const running = await waitFor(
    () => prisma.attempt.findFirst({ where: { taskId: task.id, status: 'RUNNING' } }),
    60_000,
    'the program running',
  );
  // From now on every heartbeat naming the attempt is the worker's periodic one: hold the next.
  proxy.holdNext(running.id);
  await waitFor(async () => proxy.beats.some((b) => b.held), 30_000, 'a heartbeat held');

  const done = await waitFor(
    async () => {
      const t = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
      return t.status === 'SUCCEEDED' || t.status === 'FAILED' ? t : null;
    },
    4 * LEASE_SEC * 1000,
    'the task to end',
  );
  const attempts = await prisma.attempt.findMany({ where: { taskId: task.id }, orderBy: { number: 'asc' } });
  expect(attempts.map((a) => `${a.number}:${a.status}`)).toEqual(['1:SUCCEEDED']);
  expect(done.status).toBe('SUCCEEDED');
  // The worker gave up the held request itself (its own time limit), well before the program ended.
  const held = proxy.beats.find((b) => b.held)!;
  expect(held).toMatchObject({ abandoned: true, answered: false });
  // The heartbeats after the held one were sent without waiting for it, and the API renewed with them.
  const after = proxy.beats.slice(proxy.beats.indexOf(held) + 1);
  expect(after.filter((b) => b.answered).length).toBeGreaterThan(0);
  expect(proxy.arrivedWhileHeld()).toBeGreaterThan(0);
  // The program ran past the lease the held heartbeat would have renewed.
  const log = await prisma.logChunk.findMany({ where: { attemptId: running.id }, select: { text: true } });
  expect(log.map((l) => l.text).join('\n')).toContain('done');
}, 180_000);
