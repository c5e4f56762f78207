import type { CodegenConfig } from '@graphql-codegen/cli';

// `npm run codegen` types the test operations against the committed schema.graphql; a test
// (test/graphql/codegen-drift.static.test.ts) fails when test/graphql/generated.ts is stale.
// graphql-codegen loads this file through its own TypeScript loader (jiti), not Node's type
// stripping, so it runs on Node 22 as `graphql-codegen --config codegen.ts` with no build step.
// typescript-operations 6 emits the enums and input types the operations use by itself; adding
// the `typescript` plugin to the same file declares them twice (TS2300, graphql-code-generator
// issue #10782), and the tests need no other schema types.
const config: CodegenConfig = {
  overwrite: true,
  schema: './schema.graphql',
  documents: 'test/graphql/**/*.graphql',
  generates: {
    'test/graphql/generated.ts': {
      plugins: ['typescript-operations'],
      config: {
        scalars: { DateTime: 'string', Date: 'string' },
        // tsconfig has erasableSyntaxOnly: string unions, never TypeScript enums.
        enumType: 'string-literal',
      },
    },
  },
};

export default config;
