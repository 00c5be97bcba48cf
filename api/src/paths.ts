/**
 * Where the repository's files are (migrations, the Python helpers, the worker, the built
 * dashboard), for the API run from its sources (tsx) and from its bundle
 * (api/dist/api.mjs, scripts/apiBundle.mjs): this module and the bundle both sit two folders
 * below the repository root, so every path is taken from here, never relative to a module's
 * own folder (which the bundle does not keep). Tests and benchmarks take `repoRoot` from here too.
 */
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '../..');

/** A path inside the repository, from its root. */
export const inRepo = (...parts: string[]): string => path.join(repoRoot, ...parts);
