/**
 * (f) Log streaming: a task printing R MB/s of stdout (lines of L bytes) for T seconds through a
 * real `chatgpu-worker` (its sandbox, its batching and backpressure: worker/src/logStream.ts) to a
 * real API process; the same program run directly with stdout to /dev/null is the baseline.
 *
 * The program paces itself (each second's share, then a sleep to the second's end) and writes its
 * own wall time to outputs/elapsed.txt; a program slowed by the worker's backpressure takes longer.
 * Then, from the database: lines stored (LogChunk rows) against lines printed, gaps in seq (lost
 * lines), the API's CPU per MB of log, and LogChunk storage per million lines
 * (pg_total_relation_size before and after).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cpuSeconds, setUpOwner, startApi, taskFactory } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { round, sleep } from './lib/stats.js';
import { killWorker, startWorker, type WorkerProc } from './lib/workerProcess.js';

const DEFAULTS = { mbPerSec: 10, seconds: 30, lineBytes: 100, python: '/usr/bin/python3', sandbox: 'auto' };
const USAGE = `usage: node --import tsx bench/logStream.ts [--mb-per-sec 10] [--seconds 30] [--line-bytes 100]
                 [--python /usr/bin/python3] [--sandbox auto|bwrap|none] [--pg postgres://postgres@127.0.0.1:5432/postgres]`;

/** Prints `rate` MB/s in lines of `width` bytes (newline included) for `seconds`, paced per second; writes its wall time. */
const PROGRAM = `import os, sys, time
rate, seconds, width = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
per_second = int(rate * 1_000_000 / width)
out = sys.stdout
start = time.monotonic()
n = 0
for s in range(seconds):
    block = "".join("%0*d\\n" % (width - 1, n + i) for i in range(per_second))
    out.write(block)
    out.flush()
    n += per_second
    wait = start + s + 1 - time.monotonic()
    if wait > 0:
        time.sleep(wait)
elapsed = time.monotonic() - start
os.makedirs("outputs", exist_ok=True)
open("outputs/elapsed.txt", "w").write("%.4f %d" % (elapsed, n))
`;

export async function logStream(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const { machine, startedAt } = await startBench(
    `log streaming (${o.mbPerSec} MB/s of ${o.lineBytes}-byte lines for ${o.seconds} s through a real worker)`,
    o.pg,
  );
  const lines = Math.floor((o.mbPerSec * 1_000_000) / o.lineBytes) * o.seconds;
  const megabytes = (lines * o.lineBytes) / 1e6;
  // The baseline: the same program, no worker, stdout to /dev/null.
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-logstream-'));
  await writeFile(path.join(dir, 'spew.py'), PROGRAM);
  execFileSync(o.python, ['spew.py', String(o.mbPerSec), String(o.seconds), String(o.lineBytes)], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [direct] = (await readFile(path.join(dir, 'outputs/elapsed.txt'), 'utf8')).split(' ').map(Number);
  console.log(`directly: ${round(direct!, 2)} s for ${lines.toLocaleString('en')} lines (${round(megabytes, 1)} MB)`);

  const db = await createDatabase(o.pg, 'logstream');
  const api = await startApi(db.url, {});
  let worker: WorkerProc | undefined;
  let factory: Awaited<ReturnType<typeof taskFactory>> | undefined;
  try {
    const owner = await setUpOwner(api, 1, { mainPy: PROGRAM });
    factory = await taskFactory(db.url, owner, 2);
    const prisma = factory.resources.prisma;
    worker = await startWorker(api.url, owner.workerTokens[0]!, 'spewer', o);
    const size = async () => Number((await prisma.$queryRaw<{ n: bigint }[]>`SELECT pg_total_relation_size('"LogChunk"') AS n`)[0]!.n);
    const [bytes0, api0] = [await size(), await api.stats()];
    const w0 = Date.now();
    const task = await factory.create({
      name: 'spew',
      command: `python main.py ${o.mbPerSec} ${o.seconds} ${o.lineBytes}`,
      requirements: { workload: 'python', timeoutSec: 3600 },
    });
    let attempt = null;
    for (;;) {
      attempt = await prisma.attempt.findFirst({
        where: { taskId: task.id, status: { in: ['SUCCEEDED', 'FAILED', 'LOST', 'CANCELLED'] } },
      });
      if (attempt) break;
      if (Date.now() - w0 > (o.seconds * 20 + 120) * 1000) throw new Error(`the task did not finish:\n${worker.output().slice(-2000)}`);
      await sleep(250);
    }
    const wallSec = (Date.now() - w0) / 1000;
    const [bytes1, api1] = [await size(), await api.stats()];
    if (attempt.status !== 'SUCCEEDED')
      throw new Error(`the task ended ${attempt.status}: ${attempt.errorMessage ?? ''}\n${worker.output().slice(-2000)}`);
    const stats = (
      await prisma.$queryRaw<{ n: bigint; top: number | null; stdout: bigint }[]>`
      SELECT count(*) AS n, max(seq) AS top, count(*) FILTER (WHERE stream = 'stdout') AS stdout FROM "LogChunk" WHERE "attemptId" = ${attempt.id}::uuid`
    )[0]!;
    const stored = Number(stats.stdout);
    const gaps = stats.top === null ? lines : stats.top + 1 - Number(stats.n);
    const result = (await prisma.task.findUniqueOrThrow({ where: { id: task.id }, select: { result: true } })).result as {
      outputs?: { path: string; sha256: string }[];
    } | null;
    const elapsedFile = result?.outputs?.find((x) => x.path === 'outputs/elapsed.txt');
    const got = elapsedFile
      ? await fetch(`${api.url}/blobs/${elapsedFile.sha256}`, { headers: { authorization: `Bearer ${owner.userToken}` } })
      : null;
    const elapsed = got?.ok ? Number((await got.text()).split(' ')[0]) : NaN;
    const apiCpu = cpuSeconds(api0, api1);
    const figures = {
      linesPrinted: lines,
      stdoutLinesStored: stored,
      linesLost: lines - stored,
      seqGaps: gaps,
      directSec: round(direct!, 2),
      underWorkerSec: round(elapsed, 2),
      slowdownPercent: round((elapsed / direct! - 1) * 100, 1),
      taskWallSec: round(wallSec, 1),
      apiCpuSecPerMB: round(apiCpu / megabytes, 3),
      apiCpuPercent: round((apiCpu / wallSec) * 100, 1),
      logChunkMiBPerMillionLines: round((bytes1 - bytes0) / 2 ** 20 / (Number(stats.n) / 1e6), 1),
    };
    return {
      name: 'logStream',
      command: commandFor('logStream', o, DEFAULTS),
      machine,
      options: o,
      figures,
      headline: `(f) ${o.mbPerSec} MB/s × ${o.seconds} s: ${figures.linesLost} of ${lines.toLocaleString('en')} lines lost, task slowed ${figures.slowdownPercent} % (goal < 2 %), API ${figures.apiCpuSecPerMB} s CPU per MB, LogChunk ${figures.logChunkMiBPerMillionLines} MiB per million lines`,
      startedAt: startedAt.toISOString(),
      durationSec: round((Date.now() - startedAt.getTime()) / 1000, 1),
    };
  } finally {
    if (worker) await killWorker(worker, 'SIGTERM');
    await factory?.close();
    await api.stop();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta)) runAsScript(logStream);
