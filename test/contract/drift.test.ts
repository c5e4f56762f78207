import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { catalogue } from '../../src/platform/errors.ts';
import { openApiDocument } from '../../src/rest/openapi.ts';
import { PROVIDER_BASE, providerRoutes, routes } from '../../src/rest/router.ts';
import { useApp } from '../support/app.ts';
import { V3, v3 } from '../support/http.ts';

// The served document and the route table's details; the committed artifacts' drift checks are in
// drift.static.test.ts (they need no database).
const committed = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

interface Operation {
  operationId: string;
  parameters: { name?: string; in?: string }[];
  responses: Record<string, unknown>;
}
interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
}

describe('the OpenAPI document', () => {
  const app = useApp();

  it('is served at /v3/api/business/reseller/openapi.json without a key, equal to docs/openapi.json', async () => {
    const res = await v3(app, '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(committed('docs/openapi.json')));
  });

  const doc = openApiDocument(routes) as OpenApi;

  it('is OpenAPI 3.1', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  });

  it('lists every route of the table with its method, operationId and path parameters, once', () => {
    const listed = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    const tables = [
      [V3, routes],
      [PROVIDER_BASE, providerRoutes],
    ] as const;
    expect(listed.sort()).toEqual(tables.flatMap(([base, rs]) => rs.map((r) => `${r.method} ${base}${r.path} ${r.operationId}`)).sort());
    const all = [...routes, ...providerRoutes];
    expect(new Set(all.map((r) => r.operationId)).size).toBe(all.length);
    for (const route of routes) {
      const op = doc.paths[`${V3}${route.path}`][route.method.toLowerCase()];
      const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(
        op.parameters.filter((p) => p.in === 'path').map((p) => p.name),
        route.operationId,
      ).toEqual(pathParams);
    }
  });

  it('documents, for every route, its success status and the status of each error code it lists', () => {
    for (const route of routes) {
      const op = doc.paths[`${V3}${route.path}`][route.method.toLowerCase()];
      expect(Object.keys(op.responses), route.operationId).toContain(String(route.success.status));
      for (const code of route.errors) {
        expect(Object.keys(op.responses), `${route.operationId}: ${code}`).toContain(String(catalogue[code].status));
        expect(JSON.stringify(op.responses[catalogue[code].status]), `${route.operationId}: ${code}`).toContain(`\`${code}\``);
      }
    }
  });

  it('names only catalogue codes in the route table', () => {
    for (const route of routes) {
      for (const code of route.errors) expect(Object.keys(catalogue), `${route.operationId} lists ${code}`).toContain(code);
    }
  });
});
