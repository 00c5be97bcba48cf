/**
 * Several API hosts sharing one PostgreSQL and one blob store, each with its own data folder
 * (standing in for separate machines): host A in this process, host B a real `npm start`
 * process, and a scenario suite that every shared backend must pass (multiHost-*.test.ts).
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { registerBlob } from '../../src/domain/blobs/blobAccess.js';
import { putBuffer } from '../../src/domain/blobs/blobStore.js';
import { createTask } from '../../src/domain/jobs/createTask.js';
import { startTestApi, type TestApi } from './api.js';
import { createTestDatabase } from './db.js';
import { freePort, repoRoot, spawnProc, type Proc } from './processes.js';
import { createWorkerToken } from './protocolClient.js';
import { startTestS3, type TestS3 } from './s3Server.js';
import { waitFor } from './waitFor.js';
import { startWorker } from './worker.js';

const run = promisify(execFile);
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const MiB = 1024 ** 2;
const FAST = { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '6', WORKER_OFFLINE_SEC: '6', RETRY_BASE_SEC: '0' };
const PY = ['--python', '/usr/bin/python3'];

export interface Host {
  url: string;
  dataDir: string;
  proc?: Proc;
}

export interface MultiHost {
  backend: 's3' | 'postgres';
  a: TestApi;
  b: Host;
  s3: TestS3 | null;
  databaseUrl: string;
  storeEnv: Record<string, string>;
  /** Another API host (a real process, its own data folder) on the same database and store. */
  startHost(): Promise<Host>;
}

export async function startMultiHost(backend: 's3' | 'postgres'): Promise<MultiHost> {
  const databaseUrl = await createTestDatabase();
  const s3 = backend === 's3' ? await startTestS3() : null;
  // 5 MiB parts (S3's minimum) and 256 KiB chunks: the files below span several of each.
  const storeEnv: Record<string, string> = s3 ? { ...s3.env, S3_PART_MB: '5' } : { BLOB_STORE: 'postgres', BLOB_PG_CHUNK_KB: '256' };
  const a = await startTestApi({ ...FAST, ...storeEnv }, { databaseUrl, scheduler: true });
  const startHost = async (): Promise<Host> => {
    const port = await freePort();
    const dataDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-host-'));
    const proc = spawnProc(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], {
      env: {
        ...process.env,
        ...FAST,
        ...storeEnv,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        HOST: '127.0.0.1',
        CHATGPU_DATA_DIR: dataDir,
      },
    });
    await proc.waitFor(/ChatGPU API and dashboard/);
    return { url: `http://127.0.0.1:${port}`, dataDir, proc };
  };
  const b = await startHost();
  return { backend, a, b, s3, databaseUrl, storeEnv, startHost };
}

async function put(url: string, body: Buffer, token: string): Promise<{ status: number; sha: string }> {
  const sha = sha256(body);
  const res = await fetch(`${url}/blobs/${sha}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}` },
    body: new Uint8Array(body),
  });
  await res.arrayBuffer();
  return { status: res.status, sha };
}

async function get(url: string, token: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, ...headers } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function gql(url: string, token: string, query: string, variables: Record<string, unknown> = {}) {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as any;
}

/** Files under `dir`/blobs: a shared store keeps none on a host's own disk. */
async function localBlobs(dataDir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      if (e.isDirectory()) await walk(path.join(d, e.name));
      else out.push(path.join(d, e.name));
    }
  };
  await walk(path.join(dataDir, 'blobs'));
  return out;
}

/** Is a blob visible anywhere a reader could look (the store, the API of either host)? */
async function visible(m: MultiHost, sha: string, token: string): Promise<string[]> {
  const seen: string[] = [];
  if (await m.a.server.resources.blobs.stat(sha)) seen.push('store');
  if (m.s3 && (await m.s3.keys()).some((k) => k.endsWith(sha))) seen.push('bucket listing');
  if (m.backend === 'postgres' && (await m.a.server.db.prisma.storedBlob.count({ where: { sha256: sha } }))) seen.push('StoredBlob');
  for (const url of [m.a.url, m.b.url]) if ((await get(`${url}/blobs/${sha}`, token)).status !== 404) seen.push(url);
  return seen;
}

/** The scenarios every shared backend passes. */
export function multiHostSuite(m: MultiHost): void {
  const { a, b } = m;
  const prisma = a.server.db.prisma;
  /** Chunks of uploads that no StoredBlob names (in progress, refused or killed). */
  const orphanChunks = async () => {
    const ids = (await prisma.storedBlob.findMany({ select: { uploadId: true } })).map((s) => s.uploadId);
    return prisma.blobChunk.count({ where: { uploadId: { notIn: ids } } });
  };

  describe(`two API hosts sharing PostgreSQL and the ${m.backend} blob store`, () => {
    let user: { token: string; userId: string };
    let job: { gid: string; jobId: string; codeVersionId: string };
    let model: Buffer;
    let outputs: { path: string; sha256: string; size: number; mode: number }[];

    it('code uploaded through B runs on a worker of A; its outputs, uploaded through A, are the inputs of a worker of B', async () => {
      user = await a.signUp();
      const workerToken = await createWorkerToken(a, user.token);
      // 6 MiB + 7 of deterministic bytes: more than one S3 part, many PostgreSQL chunks.
      const train = [
        'import hashlib, os',
        'os.makedirs("outputs", exist_ok=True)',
        'data = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(6 * 1024 * 1024 // 32)) + b"tail!!!"',
        'open("outputs/model.bin", "wb").write(data)',
        'open("outputs/metrics.json", "w").write(\'{"loss": 0.25}\')',
        'print("trained", len(data))',
      ].join('\n');
      const check = [
        'import hashlib, os, sys',
        'data = open("inputs/model.bin", "rb").read()',
        'os.makedirs("outputs", exist_ok=True)',
        'open("outputs/verified.txt", "w").write(hashlib.sha256(data).hexdigest())',
        'print("checked", len(data))',
      ].join('\n');
      const files = [];
      for (const [p, content] of [
        ['train.py', train],
        ['check.py', check],
      ] as const) {
        const up = await put(b.url, Buffer.from(content), user.token);
        expect(up.status).toBe(201);
        files.push({ path: p, sha256: up.sha });
      }
      const created = await gql(
        b.url,
        user.token,
        `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
        { i: { title: 'multi-host', request: 'train', files } },
      );
      const gid: string = created.data.createJob.id;
      job = { gid, jobId: Buffer.from(gid, 'base64').toString().split(':')[1]!, codeVersionId: created.data.createJob.originalCode.id };

      const wa = await startWorker(a.url, workerToken, `wa-${m.backend}`, PY);
      const wb = await startWorker(b.url, workerToken, `wb-${m.backend}`, PY);
      const idOf = (name: string) =>
        waitFor(() => prisma.worker.findFirst({ where: { name, status: 'ONLINE' } }), 20_000, `${name} online`);
      const [workerA, workerB] = [await idOf(wa.name), await idOf(wb.name)];

      const t1 = await createTask(a.server.resources, {
        jobId: job.jobId,
        kind: 'RUN',
        name: 'train',
        codeVersionId: job.codeVersionId,
        command: 'python train.py',
        requirements: { workload: 'python' },
        pinnedWorkerId: workerA.id,
      });
      const done1 = await waitFor(
        async () => {
          const t = await prisma.task.findUniqueOrThrow({ where: { id: t1.id } });
          return t.status === 'SUCCEEDED' || t.status === 'FAILED' ? t : null;
        },
        60_000,
        'train on A',
      );
      expect(done1.status).toBe('SUCCEEDED');
      outputs = (done1.result as any).outputs;
      const modelOut = outputs.find((o) => o.path === 'outputs/model.bin')!;
      expect(modelOut.size).toBe(6 * MiB + 7);

      const t2 = await createTask(a.server.resources, {
        jobId: job.jobId,
        kind: 'RUN',
        name: 'check',
        codeVersionId: job.codeVersionId,
        command: 'python check.py',
        environment: { inputs: [{ ...modelOut, path: 'inputs/model.bin' }] },
        requirements: { workload: 'python' },
        pinnedWorkerId: workerB.id,
      });
      const done2 = await waitFor(
        async () => {
          const t = await prisma.task.findUniqueOrThrow({ where: { id: t2.id } });
          return t.status === 'SUCCEEDED' || t.status === 'FAILED' ? t : null;
        },
        60_000,
        'check on B',
      );
      expect(done2.status).toBe('SUCCEEDED');
      const attempt2 = await prisma.attempt.findFirstOrThrow({ where: { taskId: t2.id, status: 'SUCCEEDED' } });
      expect(attempt2.workerId).toBe(workerB.id);
      const verified = ((done2.result as any).outputs as typeof outputs).find((o) => o.path === 'outputs/verified.txt')!;
      // The worker of B read, through B, exactly the bytes the worker of A uploaded through A.
      expect((await get(`${b.url}/blobs/${verified.sha256}`, user.token)).bytes.toString()).toBe(modelOut.sha256);
      model = (await get(`${b.url}/blobs/${modelOut.sha256}`, user.token)).bytes;
      expect(sha256(model)).toBe(modelOut.sha256);
      // Neither host kept a blob on its own disk.
      expect(await localBlobs(a.dataDir)).toEqual([]);
      expect(await localBlobs(b.dataDir)).toEqual([]);
      if (m.s3) expect(await m.s3.keys()).toContain(`blobs/${modelOut.sha256.slice(0, 2)}/${modelOut.sha256}`);
      await Promise.all([wa.stop(), wb.stop()]);
    }, 240_000);

    it('a user downloads the outputs archive, an evidence bundle and ranges of a checkpoint through B', async () => {
      const archive = await get(`${b.url}/jobs/${encodeURIComponent(job.gid)}/outputs.tar.gz`, user.token);
      expect(archive.status).toBe(200);
      const dir = await mkdtemp(path.join(tmpdir(), 'outputs-'));
      const file = path.join(dir, 'o.tgz');
      await import('node:fs/promises').then((f) => f.writeFile(file, archive.bytes));
      await run('tar', ['-xzf', file, '-C', dir]);
      expect(sha256(await readFile(path.join(dir, 'outputs/model.bin')))).toBe(sha256(model));
      expect(await readFile(path.join(dir, 'outputs/verified.txt'), 'utf8')).toBe(sha256(model));

      // An evidence bundle stored by host A, the way preparation stores one (a blob its owner may read).
      const bundle = Buffer.concat([Buffer.from('evidence bundle\n'), randomBytes(64 * 1024)]);
      const stored = await putBuffer(a.server.resources.blobs, bundle);
      await registerBlob(a.server.resources, stored.sha256, stored.size, user.userId);
      const got = await get(`${b.url}/blobs/${stored.sha256}?download=evidence.tar.gz`, user.token);
      expect(got.status).toBe(200);
      expect(got.bytes.equals(bundle)).toBe(true);
      expect(got.headers.get('content-disposition')).toContain('evidence.tar.gz');

      // Ranges: a download resumed after 5 MiB, an inner slice across a part/chunk boundary, one past the end.
      const url = `${b.url}/blobs/${sha256(model)}`;
      const tail = await get(url, user.token, { range: `bytes=${5 * MiB}-` });
      expect(tail.status).toBe(206);
      expect(tail.headers.get('content-range')).toBe(`bytes ${5 * MiB}-${model.length - 1}/${model.length}`);
      expect(tail.bytes.equals(model.subarray(5 * MiB))).toBe(true);
      const inner = await get(url, user.token, { range: `bytes=${256 * 1024 - 3}-${5 * MiB + 3}` });
      expect(inner.bytes.equals(model.subarray(256 * 1024 - 3, 5 * MiB + 4))).toBe(true);
      expect((await get(url, user.token, { range: `bytes=${model.length}-` })).status).toBe(416);
      // Authorization is still the API's, on every host: another user sees nothing.
      const other = await a.signUp();
      expect((await get(url, other.token)).status).toBe(404);
      expect((await get(`${b.url}/jobs/${encodeURIComponent(job.gid)}/outputs.tar.gz`, other.token)).status).toBe(404);
    });

    it('an API host killed mid-upload leaves no visible object; the upload retried through another host is stored', async () => {
      const c = await m.startHost();
      const body = randomBytes(14 * MiB);
      const sha = sha256(body);
      // Stream 11 MiB (two S3 parts, dozens of chunks), then stall as a slow client would, and kill C.
      const req = request(`${c.url}/blobs/${sha}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${user.token}`, 'content-length': String(body.length) },
      });
      const failed = new Promise<void>((resolve) => req.on('error', () => resolve()));
      req.write(body.subarray(0, 11 * MiB));
      if (m.backend === 'postgres') {
        await waitFor(async () => (await orphanChunks()) > 0, 30_000, 'chunks written');
      } else {
        await new Promise((r) => setTimeout(r, 2_000));
      }
      await c.proc!.stop('SIGKILL');
      await failed;
      expect(await visible(m, sha, user.token)).toEqual([]);
      if (m.backend === 'postgres') {
        // What it left is invisible and swept.
        expect(await orphanChunks()).toBeGreaterThan(0);
        expect(await a.server.resources.blobs.sweep(0)).toBeGreaterThan(0);
        expect(await orphanChunks()).toBe(0);
      }
      const retried = await put(b.url, body, user.token);
      expect(retried.status).toBe(201);
      const back = await get(`${a.url}/blobs/${sha}`, user.token);
      expect(back.bytes.equals(body)).toBe(true);
    }, 180_000);
  });
}
