/**
 * The blob store contract, run against each backend with its real parts: the filesystem, an
 * S3-compatible server on 127.0.0.1 (s3rver, with the real AWS client), and PostgreSQL.
 * Sizes are chosen to cross the backends' boundaries: several multipart parts (5 MiB) on S3,
 * many chunks (64 KiB) in PostgreSQL.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { putBuffer, readBlobBuffer, withBlobFile, type BlobStore } from '../src/domain/blobs/blobStore.js';
import { createBlobStore } from '../src/domain/blobs/createBlobStore.js';
import { PayloadTooLargeError, ValidationError } from '../src/domain/errors.js';
import { createTestDatabase } from './helpers/db.js';
import { startTestS3 } from './helpers/s3Server.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const MiB = 1024 ** 2;

const dataDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-stores-'));
const databaseUrl = await createTestDatabase();
const db = await openDatabase({ databaseUrl, dataDir, migrate: false, poolSize: 4 });
const s3 = await startTestS3();
afterAll(async () => {
  await db.close();
  await rm(dataDir, { recursive: true, force: true });
});

const base = { DATABASE_URL: databaseUrl, CHATGPU_DATA_DIR: dataDir, S3_PART_MB: '5', S3_QUEUE_SIZE: '2', BLOB_PG_CHUNK_KB: '64' };
const stores: [string, BlobStore][] = [
  ['fs', createBlobStore(loadConfig(base), db.prisma)],
  ['s3', createBlobStore(loadConfig({ ...base, ...s3.env }), db.prisma)],
  ['postgres', createBlobStore(loadConfig({ ...base, BLOB_STORE: 'postgres' }), db.prisma)],
];

/** What a reader of each backend could find besides stored blobs: leftovers of failed puts. */
async function leftovers(kind: string): Promise<string[]> {
  if (kind === 'fs') return (await readdir(path.join(dataDir, 'blobs', 'tmp')).catch(() => [] as string[])).map((f) => `tmp/${f}`);
  if (kind === 's3') return (await s3.keys()).filter((k) => !k.startsWith('blobs/'));
  const orphans = await db.prisma.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM "BlobChunk" c WHERE NOT EXISTS (SELECT 1 FROM "StoredBlob" s WHERE s."uploadId" = c."uploadId")`;
  return Number(orphans[0]!.n) ? [`${orphans[0]!.n} orphan chunks`] : [];
}

/** A stream of `bytes` in 1 MiB pieces that fails after `failAfter` bytes (a client that went away). */
function breaking(bytes: Buffer, failAfter: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= failAfter) return void this.destroy(new Error('connection reset'));
      const piece = bytes.subarray(sent, Math.min(sent + MiB, failAfter));
      sent += piece.length;
      this.push(piece);
    },
  });
}

for (const [kind, store] of stores) {
  describe(`${kind} blob store`, () => {
    const big = randomBytes(12 * MiB + 12345);
    const bigSha = sha(big);

    it('stores a large blob in parts, verified, and reads it back whole and by ranges', async () => {
      const put = await store.put(Readable.from([big.subarray(0, 3 * MiB), big.subarray(3 * MiB)]), {
        expected: bigSha,
        maxBytes: 64 * MiB,
      });
      expect(put).toEqual({ sha256: bigSha, size: big.length, created: true });
      expect(await store.stat(bigSha)).toEqual({ size: big.length });
      expect((await readBlobBuffer(store, bigSha)).equals(big)).toBe(true);
      // Ranges across part and chunk boundaries, a one-byte range, the last byte.
      for (const [start, end] of [
        [5 * MiB - 10, 5 * MiB + 70_000],
        [0, 0],
        [big.length - 1, big.length - 1],
        [65_536 * 3 + 7, 12 * MiB],
      ] as const) {
        const chunks: Buffer[] = [];
        for await (const c of await store.read(bigSha, { start, end })) chunks.push(c as Buffer);
        expect(Buffer.concat(chunks).equals(big.subarray(start, end + 1))).toBe(true);
      }
      // The same bytes again: verified, not stored twice.
      const again = await store.put(Readable.from([big]), { expected: bigSha, maxBytes: 64 * MiB });
      expect(again).toEqual({ sha256: bigSha, size: big.length, created: false });
      expect(await leftovers(kind)).toEqual([]);
    });

    it('stores small and empty blobs, and large ones whose hash is not known in advance', async () => {
      const small = Buffer.from(`small ${kind}`);
      expect((await putBuffer(store, small)).sha256).toBe(sha(small));
      expect((await readBlobBuffer(store, sha(small))).toString()).toBe(`small ${kind}`);
      const empty = await putBuffer(store, Buffer.alloc(0));
      expect(empty.size).toBe(0);
      expect(await store.stat(empty.sha256)).toEqual({ size: 0 });
      const unknown = randomBytes(11 * MiB);
      const put = await store.put(Readable.from([unknown]), { maxBytes: 64 * MiB });
      expect(put).toMatchObject({ sha256: sha(unknown), size: unknown.length, created: true });
      expect((await readBlobBuffer(store, put.sha256)).equals(unknown)).toBe(true);
      expect(await withBlobFile(store, put.sha256, async (f) => sha(await import('node:fs/promises').then((m) => m.readFile(f))))).toBe(
        put.sha256,
      );
      expect(await leftovers(kind)).toEqual([]);
      await store.remove(put.sha256);
      expect(await store.stat(put.sha256)).toBeNull();
    });

    it('refuses a hash mismatch after streaming the whole body, leaving nothing', async () => {
      const body = randomBytes(11 * MiB);
      const claimed = sha(Buffer.from('something else'));
      await expect(store.put(Readable.from([body]), { expected: claimed, maxBytes: 64 * MiB })).rejects.toThrow(ValidationError);
      expect(await store.stat(claimed)).toBeNull();
      expect(await store.stat(sha(body))).toBeNull();
      expect(await leftovers(kind)).toEqual([]);
      if (kind === 's3') expect(await s3.keys()).not.toContain(`blobs/${claimed.slice(0, 2)}/${claimed}`);
    });

    it('refuses a body over the limit at the first byte over, leaving nothing', async () => {
      const body = randomBytes(12 * MiB);
      await expect(
        store.put(Readable.from([body.subarray(0, 6 * MiB), body.subarray(6 * MiB)]), { expected: sha(body), maxBytes: 10 * MiB }),
      ).rejects.toThrow(PayloadTooLargeError);
      expect(await store.stat(sha(body))).toBeNull();
      expect(await leftovers(kind)).toEqual([]);
    });

    it('keeps nothing of a body that breaks off mid-stream (after several parts)', async () => {
      const body = randomBytes(14 * MiB);
      await expect(store.put(breaking(body, 11 * MiB), { expected: sha(body), maxBytes: 64 * MiB })).rejects.toThrow(/connection reset/);
      expect(await store.stat(sha(body))).toBeNull();
      expect(await leftovers(kind)).toEqual([]);
    });

    it('keeps nothing of a body that breaks off at once (before the store has even opened where it writes), and does not crash the process', async () => {
      // No 'error' listener on the source: an archive entry's stream has none either. Without
      // the store's own, the error would be uncaught while the put awaits its first step.
      const kept = Buffer.from('already stored');
      await putBuffer(store, kept);
      const claims = [undefined, sha(Buffer.from('never stored')), sha(kept)];
      for (let i = 0; i < 201; i++) {
        const gone = new Readable({ read() {} });
        gone.destroy(new Error('connection reset'));
        const expected = claims[i % 3];
        await expect(store.put(gone, { maxBytes: 64 * MiB, ...(expected ? { expected } : {}) }), `try ${i}`).rejects.toThrow(
          /connection reset/,
        );
        expect(await leftovers(kind), `try ${i}`).toEqual([]);
      }
      await store.remove(sha(kept));
    });

    it('sweeps what an interrupted upload left behind, and nothing else', async () => {
      if (kind === 'fs') {
        const stale = path.join(dataDir, 'blobs', 'tmp', 'killed-upload');
        await writeFile(stale, 'partial');
        await utimes(stale, new Date(Date.now() - 3 * 86_400_000), new Date(Date.now() - 3 * 86_400_000));
        await writeFile(path.join(dataDir, 'blobs', 'tmp', 'in-progress'), 'partial');
        expect(await store.sweep(86_400_000)).toBe(1);
        expect(await leftovers(kind)).toEqual(['tmp/in-progress']);
        await rm(path.join(dataDir, 'blobs', 'tmp', 'in-progress'));
      } else if (kind === 'postgres') {
        const uploadId = '00000000-0000-4000-8000-000000000001';
        await db.prisma.blobChunk.create({
          data: { uploadId, seq: 0, data: new Uint8Array(10), createdAt: new Date(Date.now() - 3 * 86_400_000) },
        });
        await db.prisma.blobChunk.create({ data: { uploadId: '00000000-0000-4000-8000-000000000002', seq: 0, data: new Uint8Array(10) } });
        expect(await store.sweep(86_400_000)).toBe(1);
        expect(await leftovers(kind)).toEqual(['1 orphan chunks']);
        await db.prisma.blobChunk.deleteMany({ where: { uploadId: '00000000-0000-4000-8000-000000000002' } });
      } else {
        const { PutObjectCommand } = await import('@aws-sdk/client-s3');
        await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'tmp/staging-of-a-killed-upload', Body: 'partial' }));
        expect(await store.sweep(0)).toBeGreaterThanOrEqual(1);
        expect(await leftovers(kind)).toEqual([]);
      }
      // Stored blobs are untouched.
      expect((await readBlobBuffer(store, bigSha)).equals(big)).toBe(true);
    });
  });
}

describe('presigned downloads (S3_PRESIGN_SEC)', async () => {
  const { startTestApi } = await import('./helpers/api.js');
  const api = await startTestApi({ ...s3.env, S3_PRESIGN_SEC: '60', BLOB_PRESIGN_MIN_BYTES: String(MiB) }, { databaseUrl });
  const user = await api.signUp();
  const other = await api.signUp();

  it('redirects an authorized download of a large blob to a short-lived URL of the store, small ones stream as before', async () => {
    const big = randomBytes(2 * MiB);
    expect((await api.putBlob(big, user.token)).status).toBe(201);
    const res = await fetch(`${api.url}/blobs/${sha(big)}?download=model.pt`, {
      headers: { authorization: `Bearer ${user.token}` },
      redirect: 'manual',
    });
    expect(res.status).toBe(307);
    const location = res.headers.get('location')!;
    expect(location.startsWith(s3.url)).toBe(true);
    expect(location).toMatch(/X-Amz-Expires=60/);
    // The URL alone is enough (no token), for a range too.
    const direct = await fetch(location);
    expect(Buffer.from(await direct.arrayBuffer()).equals(big)).toBe(true);
    expect(direct.headers.get('content-disposition')).toContain('model.pt');
    const part = await fetch(location, { headers: { range: 'bytes=10-19' } });
    expect(Buffer.from(await part.arrayBuffer()).equals(big.subarray(10, 20))).toBe(true);
    // A client that follows redirects gets the bytes through the same GET.
    expect((await api.getBlob(sha(big), user.token)).bytes.equals(big)).toBe(true);
    const small = Buffer.from('small stays on the API');
    await api.putBlob(small, user.token);
    expect(
      (await fetch(`${api.url}/blobs/${sha(small)}`, { headers: { authorization: `Bearer ${user.token}` }, redirect: 'manual' })).status,
    ).toBe(200);
  });

  it('decides authorization before any URL is handed out: another user gets 404, no redirect', async () => {
    const big = randomBytes(2 * MiB);
    await api.putBlob(big, user.token);
    const res = await fetch(`${api.url}/blobs/${sha(big)}`, { headers: { authorization: `Bearer ${other.token}` }, redirect: 'manual' });
    expect(res.status).toBe(404);
    expect(res.headers.get('location')).toBeNull();
  });
});

describe('start-up', () => {
  it('an API removes what interrupted uploads left in its store over a day ago, and nothing else', async () => {
    const { startTestApi } = await import('./helpers/api.js');
    const dir = await mkdtemp(path.join(tmpdir(), 'chatgpu-restart-'));
    afterAll(() => rm(dir, { recursive: true, force: true }));
    const tmp = path.join(dir, 'blobs', 'tmp');
    await import('node:fs/promises').then((f) => f.mkdir(tmp, { recursive: true }));
    const old = new Date(Date.now() - 2 * 86_400_000);
    await writeFile(path.join(tmp, 'killed-mid-upload'), 'partial');
    await utimes(path.join(tmp, 'killed-mid-upload'), old, old);
    await writeFile(path.join(tmp, 'another-host-uploading-now'), 'partial');
    const api = await startTestApi({}, { databaseUrl, dataDir: dir });
    const sweptOld = async () => !(await readdir(tmp)).includes('killed-mid-upload');
    for (let i = 0; i < 50 && !(await sweptOld()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await readdir(tmp)).toEqual(['another-host-uploading-now']);
    expect(api.server.resources.blobs.kind).toBe('fs');
  });
});

describe('fs: an API restarted mid-upload', () => {
  it('shows nothing of the cut-off upload after the restart, and stores the retried one', async () => {
    const { startTestApi } = await import('./helpers/api.js');
    const { freePort, repoRoot, spawnProc } = await import('./helpers/processes.js');
    const { request } = await import('node:http');
    const dir = await mkdtemp(path.join(tmpdir(), 'chatgpu-fs-restart-'));
    afterAll(() => rm(dir, { recursive: true, force: true }));
    // A user made through an in-process API on the same database (the token works on any process).
    const admin = await startTestApi({}, { databaseUrl });
    const user = await admin.signUp();
    const port = await freePort();
    const start = () => {
      const p = spawnProc(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], {
        env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', CHATGPU_DATA_DIR: dir },
      });
      return p.waitFor(/ChatGPU API and dashboard/).then(() => p);
    };
    const url = `http://127.0.0.1:${port}`;
    const body = randomBytes(6 * MiB);
    const first = await start();
    const req = request(`${url}/blobs/${sha(body)}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${user.token}`, 'content-length': String(body.length) },
    });
    const cut = new Promise<void>((resolve) => req.on('error', () => resolve()));
    req.write(body.subarray(0, 4 * MiB));
    const tmp = path.join(dir, 'blobs', 'tmp');
    for (let i = 0; i < 100 && (await readdir(tmp).catch(() => [])).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await first.stop('SIGKILL');
    await cut;
    const again = await start();
    const get = (t: string) => fetch(`${url}/blobs/${sha(body)}`, { headers: { authorization: `Bearer ${t}` } });
    expect((await get(user.token)).status).toBe(404);
    // The partial file is there but named by no blob path: invisible, and swept once a day old.
    expect((await readdir(tmp)).length).toBe(1);
    const put = await fetch(`${url}/blobs/${sha(body)}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${user.token}` },
      body: new Uint8Array(body),
    });
    expect(put.status).toBe(201);
    expect(Buffer.from(await (await get(user.token)).arrayBuffer()).equals(body)).toBe(true);
    await again.stop();
  }, 120_000);
});
