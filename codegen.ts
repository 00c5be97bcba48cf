import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed documents for the two consumers of the API. The schema is the committed SDL,
// itself printed from the Pothos schema (scripts/codegen.mjs keeps both in step).
const config: CodegenConfig = {
  schema: 'schema.graphql',
  ignoreNoDocuments: true,
  generates: {
    'web/src/gql/': {
      documents: ['web/src/**/*.{ts,tsx}', '!web/src/gql/**'],
      preset: 'client',
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
    },
    // The chatgpu CLI's documents (the `/* GraphQL */` strings in api/src/cli): checked against the schema, with their types.
    'api/src/cli/gql/': {
      documents: ['api/src/cli/**/*.ts', '!api/src/cli/gql/**', '!api/src/cli/**/*.test.ts'],
      preset: 'client',
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
    },
    'worker/src/gql/': {
      documents: ['worker/src/**/*.ts', '!worker/src/gql/**'],
      preset: 'client',
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
    },
  },
};
export default config;
