import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { v3 } from '../support/http.ts';

const app = useApp();

/** The body of `name: { … }` in the generated source: the lines up to its closing brace at the same indent. */
function block(source: string, name: string): string {
  const start = source.search(new RegExp(`^( *)${name}: \\{$`, 'm'));
  expect(start, `${name} is not in the generated types`).toBeGreaterThanOrEqual(0);
  const indent = /^ */.exec(source.slice(start))![0];
  const end = source.indexOf(`\n${indent}};`, start);
  return source.slice(start, end);
}

/** `name: type;` as openapi-typescript prints a property (JSDoc lines stripped). */
const property = (body: string, name: string) => new RegExp(`^\\s*"?${name}"?\\??: ([^\\n]+);$`, 'm').exec(body)?.[1];

// A partner generates its client from the document we serve; the types must say what the wire holds.
describe('openapi-typescript on the served /openapi.json', () => {
  let types = '';
  beforeAll(async () => {
    const served = await v3<OpenAPI3>(app, '/openapi.json');
    // openapi-typescript lints the document (Redocly) and throws on an invalid one.
    types = astToString(await openapiTS(served.body, { silent: true }));
  });

  it('gives the issued_pass response concrete property types', () => {
    const issuedPass = block(types, 'IssuedPass');
    expect(property(issuedPass, 'object')).toBe('"issued_pass"');
    expect(property(issuedPass, 'passcode')).toBe('string');
    expect(property(issuedPass, 'created')).toBe('number');
    expect(property(issuedPass, 'status')).toBe('"ACTIVE" | "EXPIRED" | "CANCELLED"');
    expect(property(issuedPass, 'categories')).toBe('components["schemas"]["IssuedPassCategory"][]');
    expect(property(block(types, 'issuePass'), '"application/json"')).toBe('components["schemas"]["IssuedPass"]');
  });

  it('gives lists the V3 envelope around their item type', () => {
    const passList = block(types, 'PassList');
    expect(property(passList, 'object')).toBe('"list"');
    expect(property(passList, 'data')).toBe('components["schemas"]["Pass"][]');
    expect(property(passList, 'has_more')).toBe('boolean');
    expect(property(passList, 'url')).toBe('string');
    expect(property(passList, 'message')).toBe('string');
  });

  it('types numeric query parameters as numbers and enum-valued ones as their values', () => {
    const listProviders = block(types, 'listProviders');
    expect(property(listProviders, 'limit')).toBe('number');
    expect(property(listProviders, 'lat')).toBe('number');
    expect(property(listProviders, 'category')).toBe('"GYM" | "SPA"');
  });

  it('leaves no response and no schema loosely typed', () => {
    // Every `responses: {` block of the operations, and components' schemas and responses.
    const responses = [...types.matchAll(/^ *responses: \{$/gm)].map((m) => block(types.slice(m.index), 'responses'));
    const typed = [block(types, 'schemas'), ...responses].join('\n');
    expect(responses.length).toBeGreaterThan(10);
    for (const loose of ['Record<string, never>', 'Record<string, unknown>', ': unknown;', ': any;']) {
      // Headers stay open to the ones HTTP adds (Content-Length, Date …).
      const lines = typed.split('\n').filter((line) => line.includes(loose) && !line.includes('[name: string]: unknown;'));
      expect(lines, `generated types with ${loose}`).toEqual([]);
    }
  });
});
