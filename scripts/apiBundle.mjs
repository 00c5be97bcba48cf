#!/usr/bin/env node
/**
 * The API as `npm start`, the Docker image and the benchmarks run it: api/src bundled by esbuild
 * into one ES module, api/dist/api.mjs (the packages stay in node_modules; not minified, each
 * module's code under a comment naming its source file), rebuilt when a file under api/src is
 * newer. Against running the sources through tsx, an API process holds ≈ 100 MiB less (no
 * transform hooks on a loader thread, no per-module source texts): bench/README.md, goal (c).
 * Its source map is written beside it: `node --enable-source-maps scripts/start.mjs` gives stack
 * traces in the sources' lines (off by default: the parsed map costs ≈ 40 MiB per process).
 * Tests run the sources (vitest); the tests that start `scripts/start.mjs` run the bundle.
 *
 * `node scripts/apiBundle.mjs` builds it (the Docker image does, at build time).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const API_BUNDLE = path.join(root, 'api/dist/api.mjs');

/** The newest modification time of any file under `dir` (0 for an empty folder). */
export function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** Whether the bundle is missing or older than a file under api/src. */
export function apiBundleStale() {
  return !existsSync(API_BUNDLE) || statSync(API_BUNDLE).mtimeMs < newest(path.join(root, 'api/src'));
}

/**
 * Builds the bundle when it is stale; returns its path. Written to temporary names and renamed,
 * so API processes started together (tests, several containers on one volume) never load a
 * half-written file.
 */
export async function ensureApiBundle() {
  if (!apiBundleStale()) return API_BUNDLE;
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [path.join(root, 'api/src/bundle.ts')],
    outfile: API_BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    write: false,
    logLevel: 'warning',
  });
  await mkdir(path.dirname(API_BUNDLE), { recursive: true });
  // The map first: a process that sees the new bundle finds its map.
  const files = [...result.outputFiles].sort((a, b) => Number(b.path.endsWith('.map')) - Number(a.path.endsWith('.map')));
  for (const f of files) {
    const tmp = `${f.path}.${process.pid}.tmp`;
    await writeFile(tmp, f.contents);
    await rename(tmp, f.path);
  }
  return API_BUNDLE;
}

/**
 * The API process's V8 heap: grow the old generation by 20 % of what a full collection left
 * (V8's default lets it grow far more under a steady load), so a busy API's resident memory
 * stays near its live data — 10,000 heartbeating workers: ≈ 480 → 264 MiB, the CPU per heartbeat
 * unchanged within noise (bench/heartbeats.ts). Call before the heap grows (at start-up).
 */
export function tuneApiHeap() {
  setFlagsFromString('--heap-growing-percent=20');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const built = apiBundleStale();
  await ensureApiBundle();
  console.log(built ? `built ${path.relative(root, API_BUNDLE)}` : `${path.relative(root, API_BUNDLE)} is up to date`);
}
