import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('loadConfig: the blob store', () => {
  it('defaults to the filesystem store under the data folder', () => {
    const c = loadConfig({}, '/srv');
    expect(c.blobs).toMatchObject({ store: 'fs', s3: null, maxBytes: 2 * 1024 ** 3, postgresChunkBytes: 1024 * 1024 });
    expect(c.dataDir).toBe('/srv/.chatgpu');
  });

  it('reads the S3 settings', () => {
    const c = loadConfig({
      BLOB_STORE: 's3',
      S3_BUCKET: 'b-1',
      S3_ENDPOINT: 'http://127.0.0.1:9000',
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'k',
      S3_SECRET_ACCESS_KEY: 's',
      S3_PREFIX: 'chatgpu/',
      S3_PART_MB: '16',
      S3_PRESIGN_SEC: '300',
    });
    expect(c.blobs.s3).toEqual({
      endpoint: 'http://127.0.0.1:9000',
      bucket: 'b-1',
      region: 'us-east-1',
      credentials: { accessKeyId: 'k', secretAccessKey: 's' },
      forcePathStyle: true,
      prefix: 'chatgpu/',
      partBytes: 16 * 1024 ** 2,
      queueSize: 4,
      presignSec: 300,
    });
    // No keys: the AWS default credential chain.
    expect(loadConfig({ BLOB_STORE: 's3', S3_BUCKET: 'b' }).blobs.s3!.credentials).toBeUndefined();
  });

  it('refuses what cannot work, naming the setting', () => {
    expect(() => loadConfig({ BLOB_STORE: 'gcs' })).toThrow(/Invalid configuration: BLOB_STORE/);
    expect(() => loadConfig({ BLOB_STORE: 's3' })).toThrow(/S3_BUCKET: required when BLOB_STORE=s3/);
    expect(() => loadConfig({ BLOB_STORE: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k' })).toThrow(
      /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together/,
    );
    expect(() => loadConfig({ BLOB_STORE: 's3', S3_BUCKET: 'b', S3_PART_MB: '4' })).toThrow(/S3_PART_MB/); // S3's minimum part is 5 MiB
    expect(() => loadConfig({ BLOB_STORE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'not a url' })).toThrow(/S3_ENDPOINT/);
    expect(() => loadConfig({ BLOB_PG_CHUNK_KB: '1' })).toThrow(/BLOB_PG_CHUNK_KB/);
  });
});
