import { getIntrospectionQuery } from 'graphql';
import { describe, expect, it } from 'vitest';
import { startApp, useApp } from '../support/app.ts';
import { createPassPackage, createReseller } from '../support/factories.ts';
import { call, gql } from '../support/http.ts';
import { operation } from './documents.ts';

const app = useApp();

describe('GET /graphql from a browser', () => {
  it('answers the GraphiQL page without an API key', async () => {
    const res = await call(app, '/graphql', { headers: { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('<title>Reseller gateway GraphiQL</title>');
    expect(res.text).toMatch(/graphiql/i);
  });

  it('a shared link with ?query= prefilled › still the GraphiQL page, and the page needs no CDN', async () => {
    const res = await call(app, `/graphql?query=${encodeURIComponent('{ passes { edges { node { id } } } }')}`, {
      headers: { Accept: 'text/html' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).not.toMatch(/<script[^>]+src=["']?https?:/);
    expect(res.text).not.toMatch(/<link[^>]+href=["']?https?:/);
  });

  it('a GET query is still an API call › 401 without a key', async () => {
    const res = await call(app, `/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { Accept: 'application/graphql-response+json' },
    });
    expect(res.status).toBe(401);
    expect(res.body.errors[0].extensions.code).toBe('invalid_api_key');
  });
});

describe('authentication', () => {
  it('a POST without a key › 401 with extensions.code invalid_api_key and the request id', async () => {
    const res = await gql(app, undefined, '{ __typename }');
    expect(res.status).toBe(401);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors?.[0].extensions).toMatchObject({
      code: 'invalid_api_key',
      type: 'authentication_error',
      request_id: res.headers.get('request-id'),
    });
  });

  it('an unknown key › 401 invalid_api_key; a disabled reseller › 403 account_disabled', async () => {
    const unknown = await gql(app, `sk_${'x'.repeat(40)}`, '{ __typename }');
    expect(unknown.status).toBe(401);
    expect(unknown.body.errors?.[0].extensions?.code).toBe('invalid_api_key');
    const disabled = await createReseller(app, { disabled: true });
    const res = await gql(app, disabled.key, '{ __typename }');
    expect(res.status).toBe(403);
    expect(res.body.errors?.[0].extensions?.code).toBe('account_disabled');
  });

  it('a mutation without a key › 401 and nothing written', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const res = await gql(app, undefined, operation('IssuePass'), {
      input: { passId: pass.id, firstName: 'A', lastName: 'B', email: 'a@example.com' },
    });
    expect(res.status).toBe(401);
    expect(await app.sql('select id from client where reseller_id = ?', [reseller.id])).toEqual([]);
  });
});

describe('introspection', () => {
  it("with a key › answers GraphiQL's full introspection query", async () => {
    const reseller = await createReseller(app);
    const res = await gql<{ __schema: { queryType: { name: string }; types: { name: string }[] } }>(
      app,
      reseller.key,
      getIntrospectionQuery(),
    );
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data?.__schema.queryType.name).toBe('Query');
    expect(res.body.data?.__schema.types.map((t) => t.name)).toEqual(
      expect.arrayContaining(['Pass', 'IssuedPass', 'Client', 'IssuePassResult']),
    );
  });

  it('without a key › 401', async () => {
    const res = await gql(app, undefined, '{ __schema { queryType { name } } }');
    expect(res.status).toBe(401);
  });

  it('with GRAPHQL_INTROSPECTION=false › __schema and __type are refused, other queries run', async () => {
    const closed = await startApp({ GRAPHQL_INTROSPECTION: 'false' });
    try {
      const reseller = await createReseller(closed);
      for (const query of ['{ __schema { queryType { name } } }', '{ __type(name: "Pass") { name } }', getIntrospectionQuery()]) {
        const res = await gql(closed, reseller.key, query);
        expect(res.status, query).toBe(400);
        expect(res.body.data, query).toBeUndefined();
        expect(res.body.errors?.[0].message).toBe('Introspection is disabled');
      }
      const ordinary = await gql(closed, reseller.key, '{ __typename passes(first: 1) { edges { node { id } } } }');
      expect(ordinary.body).toEqual({ data: { __typename: 'Query', passes: { edges: [] } } });
    } finally {
      await closed.close();
    }
  });
});
