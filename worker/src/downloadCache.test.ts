import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DownloadCache, downloadKey, networkFor } from './downloadCache.js';

const URL = 'http://127.0.0.1:9/corpus/input.txt';
const download = { network: true, download: { urls: [URL], files: ['data/prepare.py'] } };

describe('networkFor (the owner policy)', () => {
  it('downloads (default): only a step marked as a data download gets the network; the run asks for none', () => {
    expect(networkFor(download, 'downloads')).toEqual({ network: true });
    expect(networkFor({}, 'downloads')).toEqual({ network: false });
    expect(networkFor({ network: true }, 'downloads')).toEqual({
      refused: expect.stringContaining('does not mark it as a data download') as string,
    });
  });
  it('never: a data download is refused, naming its URLs and the policy; always: any task that asks', () => {
    const r = networkFor(download, 'never');
    expect(r.refused).toContain(URL);
    expect(r.refused).toContain('--allow-network never');
    expect(networkFor({}, 'never')).toEqual({ network: false });
    expect(networkFor({ network: true }, 'always')).toEqual({ network: true });
  });
});

describe('DownloadCache', () => {
  const dirs: string[] = [];
  const temp = async () => {
    const d = await mkdtemp(path.join(tmpdir(), 'dlcache-'));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('keys by URLs, command and the script content; restores what a step produced into another directory', async () => {
    const manifest = [{ path: 'data/prepare.py', sha256: 'a'.repeat(64) }];
    const key = downloadKey(download.download, 'cd data && python prepare.py', manifest);
    expect(downloadKey(download.download, 'cd data && python prepare.py', manifest)).toBe(key);
    expect(downloadKey(download.download, 'cd data && python prepare.py', [{ path: 'data/prepare.py', sha256: 'b'.repeat(64) }])).not.toBe(
      key,
    );
    expect(downloadKey({ urls: [`${URL}2`], files: ['data/prepare.py'] }, 'cd data && python prepare.py', manifest)).not.toBe(key);
    expect(downloadKey(download.download, 'cd data && python prepare.py --big', manifest)).not.toBe(key);

    const cache = new DownloadCache({ dataDir: await temp(), maxBytes: 1 << 20 });
    const run1 = await temp();
    await mkdir(path.join(run1, 'data'), { recursive: true });
    await writeFile(path.join(run1, 'data', 'train.bin'), 'tokens');
    await writeFile(path.join(run1, 'data', 'meta.pkl'), 'meta');
    expect(await cache.restore(key, run1)).toBeNull();
    const saved = await cache.save(key, run1, ['data'], { urls: [URL], attemptId: 'a1' });
    expect(saved).toMatchObject({ kept: { paths: ['data'], urls: [URL], attemptId: 'a1', bytes: 10 } });

    const run2 = await temp();
    expect(await cache.restore(key, run2)).toMatchObject({ attemptId: 'a1' });
    expect(await readFile(path.join(run2, 'data', 'train.bin'), 'utf8')).toBe('tokens');
    expect(await readFile(path.join(run2, 'data', 'meta.pkl'), 'utf8')).toBe('meta');
  });

  it('does not keep what was not produced, or more than it holds; evicts the least recently used past its size', async () => {
    const cache = new DownloadCache({ dataDir: await temp(), maxBytes: 10 });
    const run = await temp();
    await writeFile(path.join(run, 'a.txt'), '123456');
    await writeFile(path.join(run, 'big.txt'), 'x'.repeat(11));
    expect(await cache.save('k0', run, ['missing.txt'], { urls: [], attemptId: 'x' })).toEqual({ skipped: 'missing.txt was not produced' });
    expect(await cache.save('k0', run, ['big.txt'], { urls: [], attemptId: 'x' })).toMatchObject({
      skipped: expect.stringContaining('more than the cache holds') as string,
    });
    expect(await cache.save('k1', run, ['a.txt'], { urls: [], attemptId: 'x' })).toHaveProperty('kept');
    expect(await cache.save('k2', run, ['a.txt'], { urls: [], attemptId: 'y' })).toHaveProperty('kept');
    // 12 bytes > 10: the older entry went.
    expect(await cache.restore('k1', await temp())).toBeNull();
    expect(await cache.restore('k2', await temp())).toMatchObject({ attemptId: 'y' });
  });
});
