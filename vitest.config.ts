import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './scripts/testSequencer.js';

const require = createRequire(import.meta.url);

const INCLUDE = ['api/**/*.test.ts', 'worker/**/*.test.ts', 'web/test/**/*.test.ts'];
const EXCLUDE = ['**/node_modules/**', '**/dist/**'];
/** Files that leave global state behind in a dependency: @sentry/node's client and its instrumentation. */
const ISOLATED = ['api/test/sentry.test.ts'];

export default defineConfig({
  resolve: {
    // graphql 16 must be one module instance for sources and dependencies alike
    // ("Cannot use GraphQLObjectType from another module or realm").
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    // Test files share their worker process (isolate: false): the dependencies in node_modules load
    // once per process, not once per file, which was a third of the suite's time. Each file still
    // gets fresh copies of our own modules (Vitest re-evaluates everything outside node_modules).
    // Files that change a dependency's global state run in their own process (ISOLATED).
    projects: [
      { extends: true, test: { name: 'shared', include: INCLUDE, exclude: [...EXCLUDE, ...ISOLATED], isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED, exclude: EXCLUDE } },
    ],
    globalSetup: ['api/test/globalSetup.ts'],
    // API processes that tests spawn never build the dashboard (the browser suite builds it once).
    env: { CHATGPU_SKIP_WEB_BUILD: '1' },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    // Longest files first (scripts/testSequencer.ts): a fresh checkout has no Vitest cache.
    sequence: { sequencer: LongestFirstSequencer },
  },
});
