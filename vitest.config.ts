import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './scripts/testSequencer.js';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 must be one module instance for sources and dependencies alike
    // ("Cannot use GraphQLObjectType from another module or realm").
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['api/**/*.test.ts', 'worker/**/*.test.ts', 'web/test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
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
