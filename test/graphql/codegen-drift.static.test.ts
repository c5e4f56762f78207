import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generate } from '@graphql-codegen/cli';
import config from '../../codegen.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('GraphQL Code Generator output', () => {
  it('test/graphql/generated.ts is what codegen.ts makes of schema.graphql and the documents', async () => {
    // generate() is typed loosely (its saveToFile overload returns any); this is its in-memory form.
    const outputs = (await generate({ ...config, cwd: root, silent: true }, false)) as { filename: string; content: string }[];
    expect(outputs.map((o) => o.filename)).toEqual(['test/graphql/generated.ts']);
    const committed = readFileSync(new URL('./generated.ts', import.meta.url), 'utf8');
    expect(committed, 'test/graphql/generated.ts is stale: run `npm run codegen` (after `npm run schema:print`)').toBe(outputs[0].content);
  });
});
