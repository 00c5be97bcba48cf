/**
 * How hosted services end (DESIGN §6 invariant 14), with real processes: a real API with the
 * builtin planner, real `chatgpu-worker` processes with and without their bwrap sandbox, real
 * Python apps. An app that exits at once ends its attempt FAILED with the app's own last lines,
 * leaves no process behind (its process group and its whole tree are checked), frees its slot
 * for the next queued task, and fails its job with the app's error — never SUCCEEDED. An app
 * that never answers its readiness check is stopped at its start timeout. A service stopped
 * by its owner before it was ever ready is CANCELLED, not SUCCEEDED. Readiness checks are not
 * the user's log lines (they are counted in the service's figures), and `chatgpu-worker status`
 * lists only attempts whose processes exist.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startTestApi } from './helpers/api.js';
import { repoRoot } from './helpers/processes.js';
import { descendants, processGroup, stillRunning, subtreeOf } from './helpers/processTree.js';
import { createJobWithFile, createWorkerToken } from './helpers/protocolClient.js';
import { startWorker, type TestWorker } from './helpers/worker.js';
import { waitFor } from './helpers/waitFor.js';

/** Recognized as a service by the planner (it reads $PORT), but it fails before it listens, leaving a child behind. */
const EXITS = `import os, subprocess, sys, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

if __name__ == "__main__":
    port = int(os.environ["PORT"])
    subprocess.Popen(["sleep", "300"])  # outlives the app and holds its output open
    print("loading weights.bin", flush=True)
    time.sleep(2)
    sys.exit("boom: cannot load weights.bin")
    ThreadingHTTPServer(("127.0.0.1", port), BaseHTTPRequestHandler).serve_forever()
`;

/** Listens, logs every request (http.server's own access log on stderr), and is ready on /healthz unless NEVER_READY. */
const SERVES = (neverReady: boolean) => `import os, sys
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        code = ${neverReady ? '503' : '200'} if self.path == "/healthz" else 200
        body = ("hello at " + self.path).encode()
        self.send_response(code)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

if __name__ == "__main__":
    print("${neverReady ? 'warming up, forever' : 'serving'}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
`;

const FAST = { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '4', WORKER_OFFLINE_SEC: '4', RETRY_BASE_SEC: '0' };
const api = await startTestApi(FAST, { scheduler: true, model: createBuiltinClient() });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const workerToken = await createWorkerToken(api, user.token, 'svc-end');
const PY = ['--python', '/usr/bin/python3'];
const FINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'];

/** A job whose plan is a service of `app`, planned (its SERVICE task queued) before any worker of this test runs. */
async function serviceJob(app: string, title: string, startTimeoutSec?: number) {
  const blob = await api.putBlob(app, user.token);
  const created = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
    { i: { title, request: 'Give me an endpoint for this app', files: [{ path: 'app.py', sha256: blob.sha256 }] } },
    user.token,
  );
  const gid: string = created.data.createJob.id;
  const task = await waitFor(
    async () => {
      const j = (await api.gql(`query($id: ID!) { job(id: $id) { status statusReason service { slug } } }`, { id: gid }, user.token)).data
        .job;
      if (FINAL.includes(j.status)) throw new Error(`job ${j.status}: ${j.statusReason}`);
      return j.service ? prisma.task.findFirst({ where: { job: { title }, kind: 'SERVICE' } }) : null;
    },
    60_000,
    'the service task',
  );
  if (startTimeoutSec) {
    // What a plan saying readiness.startTimeoutSec gives the worker (serviceSpec.ts#serviceRuntime).
    const req = task.requirements as { service: Record<string, unknown> };
    await prisma.task.update({ where: { id: task.id }, data: { requirements: { ...req, service: { ...req.service, startTimeoutSec } } } });
  }
  return { gid, jobId: task.jobId, taskId: task.id };
}

const jobQuery = `query($id: ID!) { job(id: $id) { status statusReason service { status ready readinessChecks readinessFailures } } }`;
const finalJob = (gid: string) =>
  waitFor(
    async () => {
      const j = (await api.gql(jobQuery, { id: gid }, user.token)).data.job;
      return FINAL.includes(j.status) ? j : null;
    },
    60_000,
    'the job to end',
  );
const endedAttempt = (taskId: string) =>
  waitFor(() => prisma.attempt.findFirst({ where: { taskId, status: { notIn: ['LEASED', 'RUNNING'] } } }), 60_000, 'the attempt to end');

/** `chatgpu-worker status` of a running worker, as its owner runs it. */
async function workerStatus(w: TestWorker): Promise<{ running: string[] }> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs'),
    'status',
    '--data-dir',
    w.dataDir,
  ]);
  return JSON.parse(stdout) as { running: string[] };
}

/** The processes of the worker's service run (the bridge's tree), once `ready` says they are all up. */
function serviceProcesses(w: TestWorker, ready: (procs: ReturnType<typeof descendants>) => boolean) {
  return waitFor(
    async () => {
      const procs = subtreeOf(w.child.pid!, descendants(w.child.pid!), /chatgpu\.service_bridge/);
      return procs.length && ready(procs) ? procs : null;
    },
    60_000,
    'the service processes',
    20,
  );
}

describe('services end honestly', () => {
  for (const sandbox of ['bwrap', 'none'] as const) {
    it(`an app that exits at once (sandbox ${sandbox}): the attempt FAILS with its lines, nothing of it remains, the slot takes the next task, the job FAILS`, async () => {
      const job = await serviceJob(EXITS, `exits-${sandbox}`, 30);
      const other = await createJobWithFile(api, user.token, { content: 'print("next in line")\n' });
      const next = await createTask(api.server.resources, {
        jobId: other.jobId,
        kind: 'RUN',
        name: 'next',
        codeVersionId: other.codeVersionId,
        command: 'python main.py',
        requirements: { workload: 'python' },
        priority: -1,
      });
      const w = await startWorker(api.url, workerToken, `exits-${sandbox}`, [...PY, '--slots', '1', '--sandbox', sandbox]);
      try {
        // The whole tree of the run while the app lives: the bridge, the app and the child it leaves behind.
        const procs = await serviceProcesses(w, (ps) => ps.some((p) => p.cmdline === 'sleep 300'));
        const group = procs[0]!.pid; // the run's first process leads its process group (spawned detached)

        const attempt = await endedAttempt(job.taskId);
        expect(attempt.status).toBe('FAILED');
        expect(attempt.errorClass).toBe('SERVICE_FAILED');
        expect(attempt.errorMessage).toMatch(
          /^the app exited with code 1 before it passed its readiness check \(GET \/\); its last lines:\nloading weights\.bin\nboom: cannot load weights\.bin$/,
        );
        expect(attempt.finishedAt!.getTime() - attempt.startedAt!.getTime()).toBeLessThan(30_000); // within the start timeout
        expect(stillRunning(procs)).toEqual([]);
        expect(processGroup(group)).toEqual([]);
        expect((await workerStatus(w)).running).not.toContain(attempt.id);

        // The only slot is free at once: the next queued task runs there.
        const nextDone = await waitFor(
          async () => {
            const t = await prisma.task.findUniqueOrThrow({ where: { id: next.id }, include: { currentAttempt: true } });
            return t.status === 'SUCCEEDED' ? t : null;
          },
          60_000,
          'the next task on the freed slot',
        );
        expect(nextDone.currentAttempt!.workerId).toBe(attempt.workerId);

        const end = await finalJob(job.gid);
        expect(end.status).toBe('FAILED');
        expect(end.statusReason).toContain('boom: cannot load weights.bin');
        expect(end.service.status).toBe('STOPPED');
        expect(await prisma.attempt.count({ where: { taskId: job.taskId } })).toBe(1); // the app's own failure: not retried
        expect(
          await prisma.jobEvent.count({
            where: { jobId: job.jobId, kind: 'job.status', payload: { path: ['status'], equals: 'SUCCEEDED' } },
          }),
        ).toBe(0);
      } finally {
        await w.stop();
      }
    }, 180_000);
  }

  it('an app that never answers its readiness check is stopped at its start timeout: FAILED, with its lines and the last check', async () => {
    const job = await serviceJob(SERVES(true), 'never-ready', 4);
    const w = await startWorker(api.url, workerToken, 'never-ready', [...PY, '--sandbox', 'none']);
    try {
      const procs = await serviceProcesses(w, (ps) => ps.some((p) => /app\.py/.test(p.cmdline)));
      const attempt = await endedAttempt(job.taskId);
      expect(attempt.status).toBe('FAILED');
      // The last check: the app's 503, or (on a machine so loaded that Python did not bind the
      // port within the 4 s) that nothing listened yet; either way its lines come with it.
      expect(attempt.errorMessage).toMatch(
        /^the app did not pass its readiness check \(GET \/healthz\) within its start timeout of 4s \(last check: (HTTP 503|no answer \(the app is not listening yet\))\); its last lines:\nwarming up, forever$/,
      );
      // How long the app ran, by the worker's clock (the API learns of the start a little later).
      const ran = (attempt.usage as { runSeconds: number }).runSeconds;
      expect(ran).toBeGreaterThanOrEqual(4);
      expect(ran).toBeLessThan(15);
      expect(stillRunning(procs)).toEqual([]);
      const end = await finalJob(job.gid);
      expect(end.status).toBe('FAILED');
      expect(end.statusReason).toContain('within its start timeout of 4s');
    } finally {
      await w.stop();
    }
  }, 120_000);

  it('a service stopped by its owner before it was ever ready ends CANCELLED, not SUCCEEDED', async () => {
    const job = await serviceJob(SERVES(true), 'stopped-unready');
    const w = await startWorker(api.url, workerToken, 'stopped-unready', [...PY, '--sandbox', 'none']);
    try {
      const procs = await serviceProcesses(w, (ps) => ps.some((p) => /app\.py/.test(p.cmdline)));
      // A few failed checks have been made and counted.
      await waitFor(
        async () => ((await api.gql(jobQuery, { id: job.gid }, user.token)).data.job.service.readinessFailures >= 2 ? true : null),
        30_000,
        'failed checks counted',
      );
      const stopped = await api.gql(
        `mutation($id: ID!) { stopService(jobId: $id) { __typename ... on Service { status } } }`,
        { id: job.gid },
        user.token,
      );
      expect(stopped.data.stopService).toEqual({ __typename: 'Service', status: 'STOPPED' });
      const end = await finalJob(job.gid);
      expect(end.status).toBe('CANCELLED');
      expect(end.statusReason).toBe('The service was stopped by its owner before it ever answered its readiness check.');
      await waitFor(async () => stillRunning(procs).length === 0, 15_000, 'the stopped service to be gone');
      await waitFor(async () => ((await workerStatus(w)).running.length === 0 ? true : null), 15_000, 'status without the stopped attempt');
    } finally {
      await w.stop();
    }
  }, 120_000);

  it("readiness checks are counted in the service's figures, not written into the user's log; status lists the live attempt only", async () => {
    const job = await serviceJob(SERVES(false), 'quiet-checks');
    const w = await startWorker(api.url, workerToken, 'quiet-checks', [...PY, '--sandbox', 'bwrap']);
    try {
      const ready = await waitFor(
        async () => {
          const s = (await api.gql(jobQuery, { id: job.gid }, user.token)).data.job.service;
          return s.ready ? s : null;
        },
        60_000,
        'the service to be ready',
      );
      expect(ready.status).toBe('READY');
      const token: string = (
        await api.gql(
          `mutation($id: ID!) { rotateServiceToken(jobId: $id, firstOnly: true) { ... on ServiceToken { token } } }`,
          { id: job.gid },
          user.token,
        )
      ).data.rotateServiceToken.token;
      const slug = (await prisma.service.findFirstOrThrow({ where: { jobId: job.jobId } })).slug;
      const res = await fetch(`${api.url}/svc/${slug}/hello`, { headers: { authorization: `Bearer ${token}` } });
      expect(await res.text()).toBe('hello at /hello');
      const attempt = await prisma.attempt.findFirstOrThrow({ where: { taskId: job.taskId } });
      // The user's request is in the app's log; the checks (once a second) are not, but are counted.
      const logs = await waitFor(
        async () => {
          const text = (
            await prisma.logChunk.findMany({
              where: { attemptId: attempt.id, stream: { in: ['stdout', 'stderr'] } },
              orderBy: { seq: 'asc' },
            })
          )
            .map((c) => c.text)
            .join('\n');
          return text.includes('"GET /hello HTTP/1.1" 200') ? text : null;
        },
        20_000,
        "the user's request in the log",
      );
      const counted = await waitFor(
        async () => {
          const s = (await api.gql(jobQuery, { id: job.gid }, user.token)).data.job.service;
          return s.readinessChecks >= 3 ? s : null;
        },
        30_000,
        'readiness checks counted',
      );
      expect(counted.readinessFailures).toBeLessThan(counted.readinessChecks);
      expect(logs).toContain('serving');
      expect(logs).not.toContain('/healthz');
      expect(logs).not.toContain('127.0.0.2');
      expect((await workerStatus(w)).running).toEqual([attempt.id]);

      await api.gql(`mutation($id: ID!) { stopService(jobId: $id) { __typename } }`, { id: job.gid }, user.token);
      expect((await finalJob(job.gid)).status).toBe('SUCCEEDED'); // it was ready: it did what was asked
      await waitFor(async () => ((await workerStatus(w)).running.length === 0 ? true : null), 15_000, 'status without the stopped attempt');
    } finally {
      await w.stop();
    }
  }, 120_000);
});
