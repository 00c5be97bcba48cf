#!/usr/bin/env node
// `npm run dev`: the API (embedded default, local worker) on :4000 and Vite's dev
// server on :5173 with hot reload, proxying /graphql (HTTP and WebSocket) and /blobs.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const children = [
  spawn(process.execPath, [path.join(root, 'scripts/start.mjs'), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, CHATGPU_SKIP_WEB_BUILD: '1' },
  }),
  spawn(process.execPath, [path.join(root, 'node_modules/vite/bin/vite.js'), '--config', path.join(root, 'web/vite.config.ts')], {
    stdio: 'inherit',
    cwd: path.join(root, 'web'),
  }),
];
const stop = () => children.forEach((c) => c.kill('SIGTERM'));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
for (const c of children) c.on('exit', stop);
