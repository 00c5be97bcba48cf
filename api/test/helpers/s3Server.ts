import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll } from 'vitest';

export interface TestS3 {
  url: string;
  bucket: string;
  /** The API's environment for BLOB_STORE=s3 against this server. */
  env: Record<string, string>;
  /** A client of our own, to look at the bucket from outside the API. */
  client: S3Client;
  /** Every object key in the bucket (what any reader could see). */
  keys(): Promise<string[]>;
  /** Keys of multipart uploads begun and not completed (invisible; what a killed upload leaves). */
  pendingUploads(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A real S3-compatible server (s3rver: speaks the S3 wire protocol and checks SigV4
 * signatures) on 127.0.0.1, one bucket, in a temporary folder; closed after the file's tests.
 */
export async function startTestS3(bucket = 'chatgpu-test'): Promise<TestS3> {
  const dir = await mkdtemp(path.join(tmpdir(), 'chatgpu-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    BLOB_STORE: 's3',
    S3_ENDPOINT: url,
    S3_BUCKET: bucket,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
    // The SDK's notice that its 2027 releases need Node 22: not this test's concern.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const client = new S3Client({
    endpoint: url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  let closed = false;
  const s3: TestS3 = {
    url,
    bucket,
    env,
    client,
    async keys() {
      const out: string[] = [];
      let token: string | undefined;
      do {
        const r = await client.send(new ListObjectsV2Command({ Bucket: bucket, ...(token ? { ContinuationToken: token } : {}) }));
        for (const o of r.Contents ?? []) out.push(o.Key!);
        token = r.NextContinuationToken;
      } while (token);
      return out.sort();
    },
    async pendingUploads() {
      const r = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket })).catch(() => null);
      return (r?.Uploads ?? []).map((u) => u.Key!).sort();
    },
    async close() {
      if (closed) return;
      closed = true;
      client.destroy();
      // Clients elsewhere (API processes, stores) may hold keep-alive sockets open.
      const closing = server.close();
      server.httpServer?.closeAllConnections();
      await closing;
      await rm(dir, { recursive: true, force: true });
    },
  };
  afterAll(() => s3.close());
  return s3;
}
