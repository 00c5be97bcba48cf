#!/usr/bin/env node
// `chatgpu` — the user's command. Runs the TypeScript sources through tsx so that
// `npx chatgpu …` works right after `npm install`, with no build step.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
