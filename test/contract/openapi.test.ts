import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/rest/openapi.ts';
import { routes } from '../../src/rest/router.ts';
import { useApp } from '../support/app.ts';
import { clientBody, createPassPackage, createReseller } from '../support/factories.ts';
import { V3, v3, type Reply } from '../support/http.ts';
import { checkDocumentedResponse } from './response-schemas.ts';

const app = useApp();

type Json = Record<string, any>;
const doc = openApiDocument(routes) as Json;
const op = (method: string, path: string): Json => doc.paths[`${V3}${path}`][method];
const param = (method: string, path: string, name: string): Json => op(method, path).parameters.find((p: Json) => p.name === name);

describe('the OpenAPI document describes every response', () => {
  it('documents every field of every response object, and closes every object so an undocumented field is visible', () => {
    const problems: string[] = [];
    const visit = (schema: Json, at: string) => {
      if (schema.type === 'object' || schema.properties) {
        if (schema.additionalProperties !== false) problems.push(`${at}: additionalProperties is not false`);
        for (const [name, property] of Object.entries<Json>(schema.properties ?? {})) {
          if (!property.description) problems.push(`${at}.${name}: no description`);
          visit(property, `${at}.${name}`);
        }
      }
      if (schema.items) visit(schema.items, `${at}[]`);
      for (const member of schema.anyOf ?? []) visit(member, at);
    };
    for (const [name, schema] of Object.entries<Json>(doc.components.schemas)) visit(schema, name);
    expect(problems).toEqual([]);
  });

  it('gives each route its success schema from its presenter, lists wrapped in the spec 2.1 envelope', () => {
    const success = (method: string, path: string, status = 200) => op(method, path).responses[status].content['application/json'].schema;
    expect(success('get', '/passes')).toEqual({ $ref: '#/components/schemas/PassList' });
    expect(success('post', '/issued_passes', 201)).toEqual({ $ref: '#/components/schemas/IssuedPass' });
    expect(success('get', '/classes/{id}')).toEqual({ $ref: '#/components/schemas/ClassWithInstances' });
    const list = doc.components.schemas.PassList;
    expect(list.required).toEqual(['object', 'data', 'has_more', 'url', 'message']);
    expect(list.properties.object.const).toBe('list');
    expect(list.properties.data.items).toEqual({ $ref: '#/components/schemas/Pass' });
    expect(doc.components.schemas.IssuedPass.properties.passcode.type).toBe('string');
  });

  it('documents numeric query parameters as integer/number with their bounds, and enum-valued ones with their values', () => {
    expect(param('get', '/passes', 'limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 10 });
    expect(param('get', '/providers', 'lat').schema).toEqual({ type: 'number', minimum: -90, maximum: 90 });
    expect(param('get', '/providers', 'lon').schema).toEqual({ type: 'number', minimum: -180, maximum: 180 });
    expect(param('get', '/classes', 'radius_km').schema).toEqual({ type: 'number', exclusiveMinimum: 0, maximum: 500, default: 50 });
    expect(param('get', '/providers', 'category').schema).toEqual({ type: 'string', enum: ['GYM', 'SPA'] });
  });

  it('marks a request body required when its schema has required fields', () => {
    expect(op('post', '/issued_passes').requestBody.required).toBe(true);
    expect(op('post', '/issued_passes/{client_id}/expiry').requestBody.required).toBe(true);
    expect(op('post', '/issued_passes/{client_id}/renew').requestBody.required).toBe(false);
  });

  it('documents Request-Id on every response, 401/403/405 on every operation, 413 where a body is taken, X-Idempotent-Replayed on replayable ones', () => {
    for (const route of routes) {
      const responses = op(route.method.toLowerCase(), route.path).responses as Record<string, Json>;
      const resolved = Object.fromEntries(
        Object.entries(responses).map(([status, r]) => [status, r.$ref ? doc.components.responses[r.$ref.split('/').at(-1)] : r]),
      );
      expect(Object.keys(responses), route.operationId).toEqual(expect.arrayContaining(['401', '403', '405']));
      expect('413' in responses, route.operationId).toBe(route.body !== undefined);
      expect(resolved['405'].headers.Allow.required, route.operationId).toBe(true);
      for (const [status, response] of Object.entries(resolved)) {
        expect(response.headers['Request-Id'].required, `${route.operationId} ${status}`).toBe(true);
        const replayable = route.idempotent === true && /^[24]/.test(status) && !['401', '403', '405', '413'].includes(status);
        expect('X-Idempotent-Replayed' in response.headers, `${route.operationId} ${status}`).toBe(replayable);
      }
    }
  });
});

describe('every V3 response the suite sees is checked against the document (test/support/http.ts v3())', () => {
  const tampered = (res: Reply, change: Partial<Reply>): Reply => ({ ...res, ...change });

  it('a field the document does not name fails, naming the method, path, status and the field', async () => {
    const reseller = await createReseller(app);
    await createPassPackage(app, reseller);
    const res = await v3(app, '/passes', { key: reseller.key });
    expect(res.status).toBe(200);
    const body = { ...res.body, data: [{ ...res.body.data[0], internal_note: 'x' }] };
    expect(() => checkDocumentedResponse('GET', `${V3}/passes`, tampered(res, { body }))).toThrow(
      /GET \/v3\/api\/business\/reseller\/passes answered 200[\s\S]*must NOT have additional properties[\s\S]*internal_note/,
    );
  });

  it('a missing field, a status the operation does not document and a missing Request-Id each fail', async () => {
    const reseller = await createReseller(app, { balance: 100_000 });
    const pass = await createPassPackage(app, reseller);
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id) });
    expect(res.status).toBe(201);
    const { passcode: _, ...withoutPasscode } = res.body;
    const check = (r: Reply) => () => checkDocumentedResponse('POST', `${V3}/issued_passes`, r);
    expect(check(tampered(res, { body: withoutPasscode }))).toThrow(/POST .*issued_passes answered 201[\s\S]*passcode/);
    expect(check(tampered(res, { status: 202 }))).toThrow(/answered 202: status 202 is not documented/);
    const headers = new Headers(res.headers);
    headers.delete('Request-Id');
    expect(check(tampered(res, { headers }))).toThrow(/Request-Id is missing/);
  });

  it('an error code the operation does not list for that status fails', async () => {
    const res = await v3(app, '/passes', { key: 'sk_not_a_key' });
    expect(res.status).toBe(401);
    const body = { error: { ...res.body.error, code: 'invalid_lookup_token' } };
    expect(() => checkDocumentedResponse('GET', `${V3}/passes`, tampered(res, { body }))).toThrow(/answered 401[\s\S]*allowed values/);
  });

  it('a path outside the document answers its documented 404, and another method on a known path its 405 with Allow', async () => {
    const reseller = await createReseller(app);
    const unknown = await v3(app, '/no_such_operation', { key: reseller.key });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('resource_not_found');
    const wrongMethod = await v3(app, '/passes', { key: reseller.key, method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    expect(() => checkDocumentedResponse('GET', `${V3}/no_such_operation`, { ...unknown, status: 200 })).toThrow(/in no operation/);
  });

  it('a replayed 4xx carries X-Idempotent-Replayed, as documented for that response', async () => {
    const reseller = await createReseller(app, { balance: 0 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 1_000 });
    const send = () => v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id), idempotencyKey: 'replay-422' });
    expect((await send()).status).toBe(422);
    const replay = await send();
    expect(replay.status).toBe(422);
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    // The same response from an operation without Idempotency-Key would be undocumented.
    expect(() => checkDocumentedResponse('GET', `${V3}/passes/${pass.id}`, { ...replay, status: 404 })).toThrow(
      /X-Idempotent-Replayed is not documented/,
    );
  });
});
