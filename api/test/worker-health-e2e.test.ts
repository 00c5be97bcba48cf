/**
 * A worker whose machine breaks under it (invariant 13), with a real API and real worker
 * processes: its Python vanishes as the task launches (the launch exits 127). The attempt ends as
 * an infrastructure error (WORKER_ERROR, not the program's failure), the task — one attempt
 * allowed — is retried on another worker and succeeds; the broken worker goes UNHEALTHY with the
 * reason (in the database, for the Workers page, and in `chatgpu-worker status`) and claims
 * nothing more; once its Python is back it is ONLINE and takes work again.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createTask } from '../src/domain/jobs/createTask.js';
import { startTestApi } from './helpers/api.js';
import { repoRoot } from './helpers/processes.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker, type TestWorker } from './helpers/worker.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', RETRY_BASE_SEC: '0' }, { scheduler: true });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const wt = (
  await api.gql(`mutation { createWorkerToken(input: {name: "health"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token)
).data.createWorkerToken.token as string;
const dir = await mkdtemp(path.join(tmpdir(), 'worker-health-'));
const workers: TestWorker[] = [];
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop('SIGTERM').catch(() => {})));
  await rm(dir, { recursive: true, force: true });
});

// The worker's --python: Debian's Python behind a script. `vanishing` removes itself when the
// task's program starts (the probe at start-up runs it with -c) and exits 127, as a shell does
// for a command it cannot find.
const python = path.join(dir, 'py', 'bin', 'python3');
// (`exec -a` keeps the script's path as sys.executable, so the probe chooses it.)
const vanishing = `#!/bin/bash\ncase "$1" in main.py) rm -f "$(readlink -f "$0")"; echo "python3: not found" >&2; exit 127;; esac\nexec -a "$0" /usr/bin/python3 "$@"\n`;
const steady = '#!/bin/bash\nexec -a "$0" /usr/bin/python3 "$@"\n';
async function writePython(text: string) {
  await mkdir(path.dirname(python), { recursive: true });
  await writeFile(python, text);
  await chmod(python, 0o755);
}

const MAIN = 'import os\nprint("ran", flush=True)\nopen(os.path.join(os.environ["CHATGPU_OUTPUT_DIR"], "r.txt"), "w").write("ok")\n';
async function newTask(name: string) {
  const blob = await api.putBlob(MAIN, user.token);
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
    { i: { title: name, request: 'r', files: [{ path: 'main.py', sha256: blob.sha256 }] } },
    user.token,
  );
  const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
  return createTask(api.server.resources, {
    jobId,
    kind: 'RUN',
    name,
    codeVersionId: r.data.createJob.originalCode.id,
    command: 'python main.py',
    requirements: { workload: 'python' },
    maxAttempts: 1,
  });
}
const taskDone = (id: string) =>
  waitFor(
    async () => {
      const t = await prisma.task.findUniqueOrThrow({ where: { id } });
      return ['SUCCEEDED', 'FAILED'].includes(t.status) ? t : null;
    },
    60_000,
    `task ${id}`,
  );
const statusOf = async (w: TestWorker) =>
  JSON.parse(
    (await promisify(execFile)(process.execPath, [path.join(repoRoot, 'worker/bin/chatgpu-worker.mjs'), 'status', '--data-dir', w.dataDir]))
      .stdout,
  );

describe('a worker whose Python vanishes', () => {
  it(
    'fails the launch as an infrastructure error, goes UNHEALTHY, the task succeeds elsewhere; with Python back it works again',
    { timeout: 180_000 },
    async () => {
      await writePython(vanishing);
      const broken = await startWorker(api.url, wt, 'broken', ['--python', python, '--sandbox', 'none']);
      workers.push(broken);
      const task = await newTask('first');
      const failed = await waitFor(
        () => prisma.attempt.findFirst({ where: { taskId: task.id, status: 'FAILED' } }),
        60_000,
        'the failed attempt',
      ).catch((err) => {
        throw new Error(`${(err as Error).message}; the worker said:\n${broken.output().slice(-3000)}`);
      });
      expect(failed.exitCode).toBe(127);
      expect(failed.errorClass).toBe('WORKER_ERROR');
      expect(failed.errorMessage).toBe(
        `the worker could not start the program (exit code 127): the interpreter ${python} is missing or not executable (reinstall it, or restart the worker with --python PATH)`,
      );
      // Retried, its one attempt not used up.
      expect(await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({
        status: 'QUEUED',
        attemptCount: 1,
        infraFailures: 1,
      });

      const sick = await waitFor(
        async () => {
          const w = await prisma.worker.findFirst({ where: { name: 'broken' } });
          return w?.status === 'UNHEALTHY' ? w : null;
        },
        30_000,
        'UNHEALTHY',
      );
      expect(sick.statusReason).toBe(
        `the interpreter ${python} is missing or not executable (reinstall it, or restart the worker with --python PATH)`,
      );
      const owners = await api.gql(`query { workers(first: 10) { edges { node { name status statusReason } } } }`, {}, user.token);
      expect(owners.data.workers.edges.map((e: { node: unknown }) => e.node)).toContainEqual({
        name: 'broken',
        status: 'UNHEALTHY',
        statusReason: sick.statusReason,
      });
      expect(await statusOf(broken)).toMatchObject({ name: 'broken', status: 'UNHEALTHY', reason: sick.statusReason });
      await broken.waitFor(/UNHEALTHY: the interpreter .* is missing/, 10_000);

      const good = await startWorker(api.url, wt, 'good', ['--python', '/usr/bin/python3', '--sandbox', 'none']);
      workers.push(good);
      expect(await taskDone(task.id)).toMatchObject({ status: 'SUCCEEDED', attemptCount: 2, infraFailures: 1 });
      const attempts = await prisma.attempt.findMany({
        where: { taskId: task.id },
        orderBy: { number: 'asc' },
        include: { worker: { select: { name: true } } },
      });
      expect(attempts.map((a) => [a.number, a.worker.name, a.status])).toEqual([
        [1, 'broken', 'FAILED'],
        [2, 'good', 'SUCCEEDED'],
      ]);
      // The broken worker took nothing more.
      expect(await prisma.attempt.count({ where: { worker: { name: 'broken' } } })).toBe(1);

      // Python is back: ONLINE again, and it takes work (the other worker gone).
      await good.stop('SIGTERM');
      await writePython(steady);
      await waitFor(
        async () => (await prisma.worker.findFirst({ where: { name: 'broken', status: 'ONLINE' } })) ?? null,
        30_000,
        'ONLINE again',
      );
      expect((await prisma.worker.findFirstOrThrow({ where: { name: 'broken' } })).statusReason).toBeNull();
      expect((await statusOf(broken)).status).toBe('ONLINE');
      const again = await newTask('second');
      expect(await taskDone(again.id)).toMatchObject({ status: 'SUCCEEDED', attemptCount: 1, infraFailures: 0 });
      expect((await prisma.attempt.findFirstOrThrow({ where: { taskId: again.id }, include: { worker: true } })).worker.name).toBe(
        'broken',
      );
    },
  );
});
