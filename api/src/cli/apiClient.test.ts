/**
 * ApiClient.downloadBlob against a real HTTP server on 127.0.0.1 that cuts the connection
 * mid-body: the CLI resumes with a Range request, streams to the file and verifies the hash.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient, CliError } from './apiClient.js';

const blob = randomBytes(2 * 1024 * 1024 + 5);
const sha = createHash('sha256').update(blob).digest('hex');
const dir = await mkdtemp(path.join(tmpdir(), 'cli-download-'));
const ranges: (string | undefined)[] = [];
let corrupt = false;
const server = createServer((req, res) => {
  ranges.push(req.headers.range);
  const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  const start = m ? Number(m[1]) : 0;
  const body = Buffer.from(blob.subarray(start));
  if (corrupt) body[100] = body[100]! ^ 1;
  res.writeHead(m ? 206 : 200, {
    'content-length': body.length,
    ...(m ? { 'content-range': `bytes ${start}-${blob.length - 1}/${blob.length}` } : {}),
  });
  // The first answer breaks off after 1 MiB, as a dropped connection does.
  if (ranges.length === 1) res.write(body.subarray(0, 1024 * 1024), () => setTimeout(() => res.socket?.destroy(), 50));
  else res.end(body);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe('ApiClient.downloadBlob', () => {
  const client = new ApiClient(url, 'cgu_test', 'the token', { forMs: 20_000, notice: () => {} });

  it('resumes a transfer that broke off (Range) and writes the verified file', async () => {
    const dest = path.join(dir, 'model.pt');
    expect(await client.downloadBlob(sha, dest)).toBe(blob.length);
    expect((await readFile(dest)).equals(blob)).toBe(true);
    expect(ranges[0]).toBeUndefined();
    expect(Number(/^bytes=(\d+)-$/.exec(ranges[1] ?? '')?.[1])).toBeGreaterThan(0);
    expect(await readdir(dir)).toEqual(['model.pt']);
  });

  it('refuses bytes that do not hash to the blob name, leaving no file', async () => {
    corrupt = true;
    ranges.length = 1; // no break this time
    const dest = path.join(dir, 'bad.pt');
    await expect(client.downloadBlob(sha, dest)).rejects.toThrow(CliError);
    expect(await readdir(dir)).toEqual(['model.pt']);
  });
});
