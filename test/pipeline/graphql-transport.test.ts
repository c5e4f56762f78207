import { describe, expect, it } from 'vitest';
import { catalogue } from '../../src/platform/errors.ts';
import { startApp, useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';
import { call, gql, type Call } from '../support/http.ts';

// decisions §3 (docs/errors.md "GraphQL over HTTP"): every answer of /graphql carries a catalogue
// code, transport failures too; none is outside docs/errors.md.
const app = useApp();

const json = (body: unknown): Call => ({ raw: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
const Q = '{ __typename }';

/** [what, request, status, code, param?] */
const cases: [string, Call, number, string, string?][] = [
  ['text/plain body', { raw: JSON.stringify({ query: Q }), headers: { 'Content-Type': 'text/plain' } }, 415, 'unsupported_media_type'],
  ['text/html body', { raw: '<p>', headers: { 'Content-Type': 'text/html' } }, 415, 'unsupported_media_type'],
  ['no Content-Type', { raw: JSON.stringify({ query: Q }) }, 415, 'unsupported_media_type'],
  ['application/xml', { raw: '<q/>', headers: { 'Content-Type': 'application/xml' } }, 415, 'unsupported_media_type'],
  ['malformed JSON', { raw: '{"query": ', headers: { 'Content-Type': 'application/json' } }, 400, 'validation_error', 'body'],
  ['empty JSON body', { raw: '', headers: { 'Content-Type': 'application/json' }, method: 'POST' }, 400, 'validation_error'],
  ['a JSON array (batch)', json([{ query: Q }, { query: Q }]), 400, 'validation_error', 'body'],
  ['a JSON string', json('hello'), 400, 'validation_error', 'body'],
  ['a JSON number', json(42), 400, 'validation_error', 'body'],
  ['JSON null', json(null), 400, 'validation_error', 'body'],
  ['no query', json({}), 400, 'validation_error', 'query'],
  ['query: a number', json({ query: 42 }), 400, 'validation_error', 'query'],
  ['query: an object', json({ query: { a: 1 } }), 400, 'validation_error', 'query'],
  ['query: null', json({ query: null }), 400, 'validation_error', 'query'],
  ['variables: a string', json({ query: Q, variables: '{}' }), 400, 'validation_error', 'variables'],
  ['variables: an array', json({ query: Q, variables: [] }), 400, 'validation_error', 'variables'],
  ['variables: a number', json({ query: Q, variables: 1 }), 400, 'validation_error', 'variables'],
  ['extensions: a string', json({ query: Q, extensions: 'x' }), 400, 'validation_error', 'extensions'],
  ['operationName: a number', json({ query: Q, operationName: 1 }), 400, 'validation_error', 'operationName'],
  // A form or multipart body (what a browser sends cross-origin without a preflight) is refused before authentication: CSRF.
  ['a multipart body', { raw: '--x--', headers: { 'Content-Type': 'multipart/form-data; boundary=x' } }, 415, 'unsupported_media_type'],
  [
    'a form-encoded body',
    { raw: `query=${encodeURIComponent(Q)}`, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
    415,
    'unsupported_media_type',
  ],
  [
    'two operations, no operationName',
    json({ query: 'query A { __typename } query B { __typename }' }),
    400,
    'validation_error',
    'operationName',
  ],
  ['an unknown operationName', json({ query: 'query A { __typename }', operationName: 'B' }), 400, 'validation_error', 'operationName'],
  ['a mutation over GET', { method: 'GET', headers: { Accept: 'application/graphql-response+json' } }, 405, 'method_not_allowed'],
  ['GET with variables that are no JSON', { method: 'GET' }, 400, 'validation_error', 'variables'],
  ['PUT', { method: 'PUT', ...json({ query: Q }) }, 405, 'method_not_allowed'],
  ['DELETE', { method: 'DELETE' }, 405, 'method_not_allowed'],
  ['PATCH', { method: 'PATCH', ...json({ query: Q }) }, 405, 'method_not_allowed'],
];

const paths: Record<string, string> = {
  'a mutation over GET': `/graphql?query=${encodeURIComponent('mutation { setLookupEnabled(enabled: true) { __typename } }')}`,
  'GET with variables that are no JSON': `/graphql?query=${encodeURIComponent(Q)}&variables=%7Bnope`,
};

describe('/graphql transport failures', () => {
  for (const [what, request, status, code, param] of cases) {
    it(`${what} › ${status} ${code}${param ? ` on ${param}` : ''}`, async () => {
      const reseller = await createReseller(app);
      const res = await call(app, paths[what] ?? '/graphql', { ...request, key: reseller.key });
      expect(res.status, res.text).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
      const [error] = res.body.errors;
      expect(error.extensions).toMatchObject({ code, type: 'invalid_request_error', ...(param ? { param } : {}) });
      expect(Object.keys(catalogue)).toContain(error.extensions.code);
      expect(res.body.data).toBeUndefined();
      if (status === 405) expect(res.headers.get('allow')).toMatch(/POST/);
    });
  }
});

describe('schema suggestions', () => {
  const typo = '{ passe { id } }';

  it('with introspection off › a validation error without "Did you mean"', async () => {
    const closed = await startApp({ GRAPHQL_INTROSPECTION: 'false' });
    try {
      const reseller = await createReseller(closed);
      for (const query of [typo, '{ providers(category: GYMM) { edges { node { id } } } }', '{ passes { edges { node { nam } } } }']) {
        const res = await gql(closed, reseller.key, query);
        expect(res.status).toBe(400);
        expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error' });
        expect(res.text).not.toMatch(/Did you mean|"passes"|"classes"/);
      }
      const res = await gql(closed, reseller.key, typo);
      expect(res.body.errors?.[0].message).toBe('Cannot query field "passe" on type "Query".');
    } finally {
      await closed.close();
    }
  });

  it('in production › none either', async () => {
    const prod = await startApp({ NODE_ENV: 'production', ACCESS_CODE_SIGNING_KEY: 'k'.repeat(64) });
    try {
      const reseller = await createReseller(prod);
      const res = await gql(prod, reseller.key, typo);
      expect(res.status).toBe(400);
      expect(res.text).not.toMatch(/Did you mean/);
    } finally {
      await prod.close();
    }
  });

  it('in development with introspection on › kept: they help a developer', async () => {
    const reseller = await createReseller(app);
    const res = await gql(app, reseller.key, typo);
    expect(res.body.errors?.[0].message).toMatch(/Did you mean "passes"/);
  });
});
