/**
 * (f) A large checkpoint through the S3 blob backend: upload and download of one blob
 * (default 2 GiB) through a real API process with BLOB_STORE=s3, against an S3-compatible
 * server on 127.0.0.1 (s3rver, its own process, writing to this machine's disk).
 *
 * Figures: MB/s (10^6 bytes/s) of the upload (PUT /blobs/:sha256: hashed while streaming,
 * multipart, completed after the hash matched) and of the download (GET, written to a file
 * and hashed), against a plain copy of the same file on the same disk (read stream → write
 * stream, the ceiling of any path that stores the bytes once); and the API process's memory:
 * RSS sampled every 100 ms during each transfer, and its peak (VmHWM) over the whole run. The
 * S3 server stores the bytes twice (parts, then the completed object), so the transfer
 * figures include its work too; the API's RSS is the bound this benchmark is about.
 * `--store postgres` runs the same through the PostgreSQL backend (BlobChunk rows) instead.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { repoRoot, setUpOwner, startApi } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';
import { round, sleep } from './lib/stats.js';

const DEFAULTS = { sizeMib: 2048, store: 's3', partMib: 8, queue: 4, chunkKb: 1024, dir: tmpdir() };
const USAGE = `usage: node --import tsx bench/blobStream.ts [--size-mib 2048] [--store s3|postgres] [--part-mib 8] [--queue 4] [--chunk-kb 1024] [--dir /tmp]
                 [--pg postgres://postgres@127.0.0.1:5432/postgres]   (needs ~4 × size free on --dir)`;

/** VmRSS and VmHWM (peak) of a process, MiB. */
async function memory(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Runs `fn` while sampling the API's RSS; returns its result, seconds taken and the largest RSS seen. */
async function measured<T>(pid: number, fn: () => Promise<T>): Promise<{ value: T; sec: number; maxRss: number }> {
  let maxRss = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      maxRss = Math.max(maxRss, (await memory(pid)).rss);
      await sleep(100);
    }
  })();
  const t0 = performance.now();
  try {
    const value = await fn();
    return { value, sec: (performance.now() - t0) / 1000, maxRss };
  } finally {
    sampling = false;
    await sampler;
  }
}

async function startS3(dir: string, bucket: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'bench/lib/s3ServerProcess.ts'), dir, bucket], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the S3 server exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function blobStream(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const size = o.sizeMib * 1024 ** 2;
  const mb = (sec: number) => round(size / 1e6 / sec, 1);
  if (o.store !== 's3' && o.store !== 'postgres') throw new Error(`--store must be s3 or postgres\n${USAGE}`);
  const { machine, startedAt } = await startBench(`blobStream (${o.sizeMib} MiB through the ${o.store} backend)`, o.pg);
  const work = await mkdtemp(path.join(o.dir, 'chatgpu-blobstream-'));
  const db = await createDatabase(o.pg, 'blobstream');
  const bucket = 'chatgpu-bench';
  const s3 = o.store === 's3' ? await startS3(path.join(work, 's3'), bucket) : null;
  const storeEnv: Record<string, string> = s3
    ? {
        BLOB_STORE: 's3',
        S3_ENDPOINT: s3.url,
        S3_BUCKET: bucket,
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_FORCE_PATH_STYLE: 'true',
        S3_PART_MB: String(o.partMib),
        S3_QUEUE_SIZE: String(o.queue),
      }
    : { BLOB_STORE: 'postgres', BLOB_PG_CHUNK_KB: String(o.chunkKb) };
  const api = await startApi(db.url, {
    ...storeEnv,
    BLOB_MAX_BYTES: String(size + 1),
    BENCH_SCHEDULER: '0',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  });
  try {
    const owner = await setUpOwner(api, 0);
    const auth = { authorization: `Bearer ${owner.userToken}` };

    // The checkpoint: incompressible bytes (an 8 MiB random block repeated), hashed as written.
    const source = path.join(work, 'checkpoint.bin');
    const block = randomBytes(8 * 1024 ** 2);
    const hash = createHash('sha256');
    const fh = await open(source, 'w');
    for (let done = 0; done < size; done += block.length) {
      const piece = block.subarray(0, Math.min(block.length, size - done));
      hash.update(piece);
      await fh.write(piece);
    }
    await fh.close();
    const sha = hash.digest('hex');
    console.log(`  wrote ${o.sizeMib} MiB checkpoint ${sha.slice(0, 12)}…`);

    const copy = await measured(api.pid, () => pipeline(createReadStream(source), createWriteStream(path.join(work, 'copy.bin'))));
    await rm(path.join(work, 'copy.bin'));
    console.log(`  plain copy: ${round(copy.sec, 1)} s, ${mb(copy.sec)} MB/s`);

    const idle = await memory(api.pid);
    const upload = await measured(api.pid, async () => {
      const res = await fetch(`${api.url}/blobs/${sha}`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/octet-stream', 'content-length': String(size) },
        body: Readable.toWeb(createReadStream(source)) as never,
        duplex: 'half',
      } as RequestInit);
      if (res.status !== 201) throw new Error(`upload: HTTP ${res.status} ${await res.text()}`);
    });
    console.log(`  upload: ${round(upload.sec, 1)} s, ${mb(upload.sec)} MB/s, API RSS max ${round(upload.maxRss)} MiB`);

    const dest = path.join(work, 'download.bin');
    const download = await measured(api.pid, async () => {
      const res = await fetch(`${api.url}/blobs/${sha}`, { headers: auth });
      if (res.status !== 200 || !res.body) throw new Error(`download: HTTP ${res.status}`);
      const h = createHash('sha256');
      const tap = new Transform({ transform: (c: Buffer, _e, cb) => (h.update(c), cb(null, c)) });
      await pipeline(Readable.fromWeb(res.body as never), tap, createWriteStream(dest));
      if (h.digest('hex') !== sha) throw new Error('download: the bytes differ');
    });
    if ((await stat(dest)).size !== size) throw new Error('download: wrong size');
    console.log(`  download: ${round(download.sec, 1)} s, ${mb(download.sec)} MB/s, API RSS max ${round(download.maxRss)} MiB`);
    const end = await memory(api.pid);

    return {
      name: 'blobStream',
      command: commandFor('blobStream', o, { ...DEFAULTS, pg: o.pg }),
      machine,
      options: o,
      startedAt: startedAt.toISOString(),
      durationSec: round((Date.now() - startedAt.getTime()) / 1000),
      headline: `${o.sizeMib} MiB via ${o.store} backend: upload ${mb(upload.sec)} MB/s, download ${mb(download.sec)} MB/s (plain copy ${mb(copy.sec)} MB/s); API RSS peak ${round(end.peak)} MiB (idle ${round(idle.rss)} MiB)`,
      figures: {
        'blob size (MiB)': o.sizeMib,
        store: o.store,
        ...(s3 ? { 'S3 part size (MiB) × parts in flight': `${o.partMib} × ${o.queue}` } : { 'chunk size (KiB)': o.chunkKb }),
        'plain copy, same disk (MB/s)': mb(copy.sec),
        'upload through the API (MB/s)': mb(upload.sec),
        'download through the API (MB/s)': mb(download.sec),
        'API RSS idle before (MiB)': round(idle.rss),
        'API RSS max during upload (MiB)': round(upload.maxRss),
        'API RSS max during download (MiB)': round(download.maxRss),
        'API peak RSS over the run, VmHWM (MiB)': round(end.peak),
      },
    };
  } finally {
    await api.stop();
    await s3?.stop();
    await db.drop();
    await rm(work, { recursive: true, force: true });
  }
}

if (isMain(import.meta)) runAsScript(blobStream);
