#!/usr/bin/env node
// `npm start`: builds the dashboard when its build is missing or older than its sources,
// then runs the API (TypeScript through tsx, no build step) with the local worker.
// Flags: --no-worker.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const webDir = path.join(root, 'web');
const built = path.join(webDir, 'dist', 'index.html');
if (!process.env.CHATGPU_SKIP_WEB_BUILD && existsSync(path.join(webDir, 'src')) && (!existsSync(built) || statSync(built).mtimeMs < Math.max(newest(path.join(webDir, 'src')), statSync(path.join(webDir, 'index.html')).mtimeMs))) {
  console.log('Building the dashboard (once)…');
  const { build } = await import('vite');
  await build({ configFile: path.join(webDir, 'vite.config.ts'), root: webDir, logLevel: 'warn' });
}

register();
const { main } = await import('../api/src/main.ts');
await main(process.argv.slice(2));
