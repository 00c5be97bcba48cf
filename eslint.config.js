// ESLint (flat config): the layers' import boundaries, plus a small set of rules that catch real bugs.
// Style is Prettier's job (npm run format); this file checks what a formatter cannot.
// `npm run lint` runs it; `npm test` fails on any error or warning (api/test/lint-boundaries.test.ts proves each boundary fires).
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

/**
 * What the command-line client (api/src/cli) may import from the rest of api/src, on purpose:
 * - paths.ts: where the repository's files are (`chatgpu worker` finds the worker package by it);
 * - main.ts: `chatgpu start` starts the embedded server through its one entry point (loaded lazily), not its parts;
 * - preparation/: the code-migration library (`chatgpu migrate`, `chatgpu records`), which has no server state (its own zone below).
 * Everything else (domain, db, graphql, http, scheduler, agents, telemetry, config.ts, server.ts) is the server's own:
 * the CLI speaks to it over GraphQL. Described in docs/architecture.md §1 ("Layers").
 */
export const CLI_SHARED = ['paths.ts', 'main.ts', 'preparation'];

/** The zones import-x/no-restricted-paths enforces: files in `target` may not import from `from` (paths from the repository root). */
export const BOUNDARIES = [
  {
    target: './api/src/domain',
    from: ['./api/src/graphql', './api/src/agents', './api/src/scheduler', './api/src/http'],
    message: 'The domain is the core: it imports no GraphQL, agents, scheduler or HTTP code (they call it).',
  },
  {
    target: './api/src/http',
    from: './api/src/graphql',
    message: 'HTTP routes do not import the GraphQL layer; share what both need below them (e.g. domain/ids.ts).',
  },
  {
    target: './api/src/config.ts',
    from: './api/src/domain',
    message: 'config.ts reads the environment; it imports nothing of the domain.',
  },
  {
    target: './api/src/cli',
    from: './api/src',
    except: CLI_SHARED.map((p) => `./${p}`).concat('./cli'),
    message:
      'The CLI talks to the server over GraphQL; it imports only what the server shares on purpose (CLI_SHARED in eslint.config.js).',
  },
  {
    target: './api/src/preparation',
    from: ['./api/src/domain', './api/src/db', './api/src/graphql', './api/src/http', './api/src/scheduler', './api/src/agents'],
    message: 'preparation/ is a library (the CLI uses it too): no domain, database, GraphQL, HTTP, scheduler or agents code.',
  },
  // The dashboard's and the worker's own code; their tests (web/test, worker/test) may start a real API server from api/.
  {
    target: './web/src',
    from: './api',
    message: 'The dashboard talks to the API over GraphQL; it imports nothing of api/.',
  },
  {
    target: ['./worker/src', './worker/bin'],
    from: './api',
    message: 'The worker talks to the API over GraphQL; it imports nothing of api/.',
  },
];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'api/src/generated/**',
      'web/src/gql/**',
      'worker/src/gql/**',
      'api/src/cli/gql/**',
      '**/.chatgpu/**',
      'test-artifacts/**',
      '**/*.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx,js,mjs,cjs}'],
    plugins: { 'import-x': importX },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: {
        // Node and the browser: the type checker (tsc -p api|worker|web) already knows which file runs where.
        ...Object.fromEntries(
          [
            'process',
            'console',
            'Buffer',
            'URL',
            'URLSearchParams',
            'setTimeout',
            'clearTimeout',
            'setInterval',
            'clearInterval',
            'setImmediate',
            'clearImmediate',
            'queueMicrotask',
            'structuredClone',
            'fetch',
            'AbortController',
            'AbortSignal',
            'TextEncoder',
            'TextDecoder',
            'globalThis',
            'window',
            'document',
            'navigator',
            'localStorage',
            'performance',
            '__dirname',
            'require',
            'module',
          ].map((g) => [g, 'readonly']),
        ),
      },
    },
    settings: {
      // import-x reads the imported modules (no-cycle follows them) with the TypeScript parser.
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
      'import-x/resolver-next': [
        // NodeNext sources import `./x.js` for `./x.ts`.
        createNodeResolver({ extensionAlias: { '.js': ['.ts', '.tsx', '.js'] }, extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'] }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: BOUNDARIES }],
      // No module of the server imports itself back through others (a circle hides which layer owns what).
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // Off: `any` is used at hundreds of boundaries with untyped JSON; tsc's strict mode covers the rest.
      '@typescript-eslint/no-explicit-any': 'off',
      // A leading underscore marks a value left unused on purpose (a skipped tuple element, an omitted key).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // `a && b()` and `c ? d() : e()` as statements are deliberate; a bare `x;` or `a.b;` is not.
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
    },
  },
  {
    files: ['web/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
);
