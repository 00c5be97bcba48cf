import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed documents for the three consumers of the API (the dashboard, the worker, the chatgpu CLI).
// The schema is the committed SDL, itself printed from the Pothos schema (scripts/codegen.mjs keeps
// both in step).
const client = (documents: string[]) => ({
  documents,
  preset: 'client' as const,
  config: {
    importExtension: '.js',
    useTypeImports: true,
    enumsAsTypes: true,
    scalars: {
      DateTime: 'string',
      JSON: 'unknown',
      BigInt: 'number',
      Decimal: 'number',
      LogLines: "Array<{ seq: number; stream: 'stdout' | 'stderr' | 'system'; text: string; ts?: string | null }>",
    },
  },
  presetConfig: { fragmentMasking: false },
});

const config: CodegenConfig = {
  schema: 'schema.graphql',
  ignoreNoDocuments: true,
  generates: {
    'web/src/gql/': client(['web/src/**/*.{ts,tsx}', '!web/src/gql/**']),
    // The CLI's documents (the `/* GraphQL */` strings in api/src/cli): checked against the schema, with their types.
    'api/src/cli/gql/': client(['api/src/cli/**/*.ts', '!api/src/cli/gql/**', '!api/src/cli/**/*.test.ts']),
    'worker/src/gql/': client(['worker/src/**/*.ts', '!worker/src/gql/**']),
  },
};
export default config;
