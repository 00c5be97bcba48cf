/**
 * docker/compose.multihost.yaml and its load balancer, checked statically (no Docker engine
 * runs on the development machines): two API hosts that share everything and keep nothing,
 * configured the way api/src/config.ts reads it, behind a proxy that needs no sticky sessions.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../src/config.js';
import { repoRoot } from './helpers/processes.js';

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test?: string[] };
  depends_on?: Record<string, { condition: string }>;
  command?: string[];
}
const compose = parseYaml(readFileSync(path.join(repoRoot, 'docker/compose.multihost.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
/** The directives (comments left out). */
const nginx = readFileSync(path.join(repoRoot, 'docker/nginx.multihost.conf'), 'utf8').replace(/#.*$/gm, '');
const s = compose.services;
const apis = ['api-a', 'api-b'];

/** `${NAME:-default}` → default, as compose substitutes it when NAME is unset. */
const withDefaults = (env: Record<string, string>) =>
  Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));

describe('compose.multihost.yaml (static)', () => {
  it('runs two API hosts, PostgreSQL, MinIO, a load balancer and a worker; every image pinned, every service health-checked', () => {
    expect(Object.keys(s)).toEqual(expect.arrayContaining(['postgres', 'minio', 'api-a', 'api-b', 'lb', 'worker']));
    for (const [name, svc] of Object.entries(s)) {
      if (!svc.build) expect(svc.image, name).toMatch(/^[\w./-]+:(?!latest$)[\w.-]*\d[\w.-]*$/);
      expect(svc.healthcheck?.test?.length, name).toBeGreaterThan(0);
    }
  });

  it('the API hosts are the same image with the same shared stores, keep no volume, and each names its own internal URL', () => {
    const [a, b] = apis.map((n) => s[n]!);
    expect(a!.build).toEqual(b!.build);
    const { CHATGPU_INTERNAL_URL: ua, ...ea } = a!.environment!;
    const { CHATGPU_INTERNAL_URL: ub, ...eb } = b!.environment!;
    expect(ea).toEqual(eb);
    expect([ua, ub]).toEqual(['http://api-a:4000', 'http://api-b:4000']);
    for (const n of apis) expect(s[n]!.volumes ?? [], n).toEqual([]);
    for (const n of apis)
      expect(s[n]!.depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        'minio-bucket': { condition: 'service_completed_successfully' },
      });
    expect(s.lb!.depends_on).toEqual({ 'api-a': { condition: 'service_healthy' }, 'api-b': { condition: 'service_healthy' } });
    expect(s.worker!.command).toEqual(expect.arrayContaining(['--server', 'http://lb:4000']));
  });

  it('configures the S3 backend the way the API reads it (MinIO: endpoint, bucket, path-style, keys)', () => {
    const config = loadConfig({ ...withDefaults(s['api-a']!.environment!), DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x' });
    expect(config.blobs.store).toBe('s3');
    expect(config.blobs.s3).toMatchObject({
      endpoint: 'http://minio:9000',
      bucket: 'chatgpu',
      forcePathStyle: true,
      credentials: { accessKeyId: 'chatgpu', secretAccessKey: 'chatgpu-minio' },
    });
    expect(withDefaults(s['minio-bucket']!.environment!)).toEqual({ MINIO_ROOT_USER: 'chatgpu', MINIO_ROOT_PASSWORD: 'chatgpu-minio' });
    expect(s['minio-bucket']!.command!.join(' ')).toContain('store/chatgpu');
  });

  it('the load balancer: both hosts, no stickiness, WebSocket upgrades, bodies streamed not buffered', () => {
    expect(nginx).toMatch(/server api-a:4000/);
    expect(nginx).toMatch(/server api-b:4000/);
    expect(nginx).not.toMatch(/ip_hash|sticky|hash \$/);
    expect(nginx).toMatch(/proxy_set_header Upgrade \$http_upgrade;/);
    expect(nginx).toMatch(/proxy_set_header Connection \$connection_upgrade;/);
    expect(nginx).toMatch(/proxy_request_buffering off;/);
    expect(nginx).toMatch(/proxy_buffering off;/);
    expect(nginx).toMatch(/proxy_read_timeout (\d+)s;/);
    expect(Number(/proxy_read_timeout (\d+)s;/.exec(nginx)![1])).toBeGreaterThan(30); // claimTask long-polls 30 s
  });
});
