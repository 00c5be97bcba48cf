/**
 * The worker's output upload, alone: the same file PUT to a real API by fetch with a web-stream body
 * (the worker's way before) and by ApiClient.upload (node:http, streamed from disk), alternating,
 * each with its sha256 pass. Not in `npm run bench`; the figure is quoted in worker/src/client.ts.
 *
 *   node --import tsx bench/uploadProbe.ts [MiB, default 128] [rounds, default 3]
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setUpOwner, startApi } from './lib/api.js';
import { createDatabase } from './lib/db.js';
import { ApiClient } from '../worker/src/client.js';

const mib = Number(process.argv[2] ?? 128);
const rounds = Number(process.argv[3] ?? 3);
const db = await createDatabase('postgres://postgres@127.0.0.1:5432/postgres', 'upprobe');
const api = await startApi(db.url, {}, { onLine: () => {} });
try {
  const owner = await setUpOwner(api, 1);
  const client = new ApiClient(api.url, owner.userToken, { info() {}, warn() {} });
  const viaFetch = async (file: string) => {
    const hash = createHash('sha256');
    await pipeline(createReadStream(file), hash);
    const res = await fetch(`${api.url}/blobs/${hash.digest('hex')}`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${owner.userToken}`,
        'content-type': 'application/octet-stream',
        'content-length': String(mib << 20),
      },
      body: Readable.toWeb(createReadStream(file)) as never,
      duplex: 'half',
    } as RequestInit);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
  };
  const ways = { fetch: viaFetch, 'ApiClient.upload': (f: string) => client.upload(f) };
  const times: Record<string, number[]> = { fetch: [], 'ApiClient.upload': [] };
  for (let i = 0; i < rounds; i++) {
    for (const [name, fn] of i % 2 ? Object.entries(ways).reverse() : Object.entries(ways)) {
      const f = `/tmp/upprobe-${process.pid}.bin`;
      await writeFile(f, randomBytes(mib << 20)); // fresh bytes: a stored blob would be a no-op
      const t = performance.now();
      await fn(f);
      times[name]!.push((performance.now() - t) / 1000);
      await rm(f);
    }
  }
  for (const [name, t] of Object.entries(times))
    console.log(
      `${mib} MiB by ${name}: ${t.map((x) => x.toFixed(2)).join(', ')} s (mean ${(t.reduce((a, b) => a + b, 0) / t.length).toFixed(2)} s)`,
    );
} finally {
  await api.stop();
  await db.drop();
}
