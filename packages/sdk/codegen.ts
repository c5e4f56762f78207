import { fileURLToPath } from 'node:url';
import type { CodegenConfig } from '@graphql-codegen/cli';

// `npm run sdk:generate` (from the repo root) types the SDK's operations (src/operations.ts) against
// the committed schema.graphql; test/sdk/sdk.static.test.ts fails when src/gql/ is stale. Paths are this
// file's own, so the result does not depend on the directory it runs from.
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** The output directory is a parameter so the staleness test can generate into a temporary one. */
export function sdkCodegenConfig(outputDir = here('./src/gql/')): CodegenConfig {
  return {
    overwrite: true,
    schema: here('../../schema.graphql'),
    documents: [here('./src/operations.ts')],
    ignoreNoDocuments: false,
    generates: {
      [outputDir.endsWith('/') ? outputDir : `${outputDir}/`]: {
        preset: 'client',
        presetConfig: {
          // persisted-documents.json maps each document's `sha256:<hex>` id to its text: what a reseller
          // registers as its frontend's trusted documents (docs/partner-guide.md "The TypeScript SDK").
          persistedDocuments: true,
          // The SDK's operations select fields directly; fragment masking would add a runtime helper for nothing.
          fragmentMasking: false,
        },
        config: {
          // Documents are strings (TypedDocumentString): the client sends them as they are, with no GraphQL runtime in the bundle.
          documentMode: 'string',
          // tsconfig has erasableSyntaxOnly: string unions, never TypeScript enums.
          enumType: 'string-literal',
          scalars: { DateTime: 'string', Date: 'string' },
          useTypeImports: true,
          // Relative imports carry their .ts extension, as everywhere in this repo (Node's type stripping, `tsc` rewrites them for dist/).
          importExtension: '.ts',
        },
      },
    },
  };
}

export default sdkCodegenConfig();
