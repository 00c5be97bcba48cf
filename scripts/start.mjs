#!/usr/bin/env node
// `npm start`: runs the API (TypeScript through tsx, no build step) with the local
// worker. Flags: --no-worker.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../api/src/main.ts');
await main(process.argv.slice(2));
