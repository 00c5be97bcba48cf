#!/usr/bin/env node
// `npm start`: builds the dashboard when its build is missing or older than its sources, and
// the API's bundle likewise (scripts/apiBundle.mjs), then runs the API with the local worker.
// Flags: --host ADDRESS, --port N, --no-worker (api/src/main.ts, START_USAGE).
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureApiBundle, newest, tuneApiHeap } from './apiBundle.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const webDir = path.join(root, 'web');
const built = path.join(webDir, 'dist', 'index.html');
if (
  !process.env.CHATGPU_SKIP_WEB_BUILD &&
  existsSync(path.join(webDir, 'src')) &&
  (!existsSync(built) ||
    statSync(built).mtimeMs < Math.max(newest(path.join(webDir, 'src')), statSync(path.join(webDir, 'index.html')).mtimeMs))
) {
  console.log('Building the dashboard (once)…');
  const { build } = await import('vite');
  await build({ configFile: path.join(webDir, 'vite.config.ts'), root: webDir, logLevel: 'warn' });
}

tuneApiHeap();
let main;
try {
  const bundle = await ensureApiBundle();
  ({ main } = await import(pathToFileURL(bundle).href));
} catch (err) {
  // A checkout this user cannot write to, or no esbuild: the same API from its sources.
  console.warn(
    `The API's bundle could not be built (${err.errors?.[0]?.text ?? err.message.split('\n')[0]}); running its sources through tsx.`,
  );
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../api/src/main.ts'));
}
await main(process.argv.slice(2));
