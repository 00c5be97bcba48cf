/**
 * What the API's bundle exports (api/dist/api.mjs, built by scripts/apiBundle.mjs): `npm start`'s
 * main, and what bench/lib/apiProcess.mjs starts a server from — so the benchmarks measure the
 * API as it is deployed.
 */
export { main } from './main.js';
export { loadConfig } from './config.js';
export { startServer } from './server.js';
export { createBuiltinClient } from './agents/builtin/builtinModel.js';
