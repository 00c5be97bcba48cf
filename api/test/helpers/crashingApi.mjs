#!/usr/bin/env node
// A test-only entry point: `npm start`'s API (no dashboard build, no local worker choice
// changed) that kills its own process with SIGKILL right after the side effect of the tool
// named in argv[2] commits — before the loop saves the tool's result. The crash suite
// uses it to prove recovery from the Action table (invariant 5).
import { register } from 'tsx/esm/api';

const tool = process.argv[2];
if (!tool) {
  console.error('usage: crashingApi.mjs TOOL_NAME [npm start flags…]');
  process.exit(2);
}
register();
const { main } = await import('../../src/main.ts');
await main(process.argv.slice(3), {
  afterAction: (name) => {
    if (name === tool) process.kill(process.pid, 'SIGKILL');
  },
});
