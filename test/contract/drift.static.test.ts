import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/rest/openapi.ts';
import { routes } from '../../src/rest/router.ts';

// The committed artifacts are generated from the code; these tests fail when either drifts.
const FIX = 'run `npm run schema:print` and commit schema.graphql and docs/openapi.json';
const root = fileURLToPath(new URL('../..', import.meta.url));
const committed = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/**
 * printedSchema() as `npm run schema:print` runs it: in plain Node. Inside vitest, src files get
 * graphql's ESM build while Pothos gets its CommonJS one, and printSchema refuses the mix.
 */
function printedSchema(): string {
  return execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const { printedSchema } = await import('./src/graphql/schema.ts'); process.stdout.write(printedSchema());",
    ],
    { cwd: root, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } },
  );
}

describe('committed artifacts', () => {
  it('schema.graphql is the schema the code builds', () => {
    expect(committed('schema.graphql'), `schema.graphql differs from the Pothos schema: ${FIX}`).toBe(printedSchema());
  });

  it('docs/openapi.json is the document the route table generates, byte for byte', () => {
    expect(committed('docs/openapi.json'), `docs/openapi.json differs from the route table: ${FIX}`).toBe(
      `${JSON.stringify(openApiDocument(routes), null, 2)}\n`,
    );
  });
});
