import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller } from '../support/factories.ts';
import { call, gql } from '../support/http.ts';

// GraphQL over HTTP (docs/errors.md): a request that fails parsing, validation (literal coercion
// included) or variable coercion is a 400 with extensions.code under
// `Accept: application/graphql-response+json` (200 with the same code under application/json);
// internal_error carries the request id of the response.
const app = useApp();

const refused = [
  ['an Int literal out of range (first: 2147483648)', '{ passes(first: 2147483648) { edges { node { id } } } }'],
  ['an unknown enum literal (category: SAUNA)', '{ providers(category: SAUNA) { edges { node { id } } } }'],
  ['a Date literal that is no calendar date (2027-02-30)', '{ classes(date: "2027-02-30") { edges { node { id } } } }'],
  ['a syntax error', '{ passes(first: ) { edges { node { id } } } }'],
  ['an unknown field', '{ passes { edges { node { colour } } } }'],
] as const;

describe('a document that fails parsing or validation', () => {
  for (const [what, query] of refused) {
    it(`${what} › 400 validation_error (invalid_request_error), nothing executed`, async () => {
      const reseller = await createReseller(app);
      const res = await gql(app, reseller.key, query);
      expect(res.status).toBe(400);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', type: 'invalid_request_error' });
    });
  }

  it('under Accept: application/json › the legacy 200, with the same catalogue code', async () => {
    const reseller = await createReseller(app);
    const res = await call(app, '/graphql', { key: reseller.key, body: { query: refused[0][1] }, headers: { Accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'validation_error' });
  });
});

describe('variables that fail coercion', () => {
  it('first: $n with n = 2147483648 › 400 validation_error, no data', async () => {
    const reseller = await createReseller(app);
    const res = await gql(app, reseller.key, 'query($n: Int) { passes(first: $n) { edges { node { id } } } }', { n: 2147483648 });
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', type: 'invalid_request_error' });
  });

  it('a required input variable missing a field › 400 validation_error, nothing written', async () => {
    const reseller = await createReseller(app);
    const res = await gql(app, reseller.key, 'mutation($input: IssuePassInput!) { issuePass(input: $input) { __typename } }', {
      input: { firstName: 'Ada' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error' });
    expect(await app.sql('select id from client where reseller_id = ?', [reseller.id])).toEqual([]);
  });
});

describe('an unexpected failure', () => {
  it('internal_error › carries the request_id of the response, and the message reveals nothing', async () => {
    const reseller = await createReseller(app, { balance: 100_000 });
    const pass = await createPassPackage(app, reseller);
    await app.sql('alter table outbox rename to outbox_gone');
    let res;
    try {
      res = await gql(
        app,
        reseller.key,
        `mutation { issuePass(input: { passId: "${pass.id}", firstName: "A", lastName: "B", email: "a@example.com" }) { __typename } }`,
      );
    } finally {
      await app.sql('alter table outbox_gone rename to outbox');
    }
    const requestId = res.headers.get('request-id');
    expect(requestId).toMatch(/^req_/);
    expect(res.body.errors?.[0].extensions).toEqual({ code: 'internal_error', type: 'api_error', request_id: requestId });
    expect(res.text).not.toMatch(/outbox/);
  });
});

describe("the cost limit with yoga's validation cache on", () => {
  it('one document › admitted with a small $n, refused with a large one (the cache vouches for no variables)', async () => {
    const reseller = await createReseller(app);
    const doc =
      'query($n: Int) { providers(first: $n) { edges { node { classes(first: 20) { edges { node { instances(first: 20) { edges { node { id } } } } } } } } } }';
    expect((await gql(app, reseller.key, doc, { n: 1 })).body.errors).toBeUndefined();
    const big = await gql(app, reseller.key, doc, { n: 100 });
    expect(big.status).toBe(400);
    expect(big.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', limit: 'complexity' });
    expect((await gql(app, reseller.key, doc, { n: 1 })).body.errors).toBeUndefined();
  });
});

// The body limit on /graphql is the pipeline's (src/graphql/http.ts reads the body with it before
// yoga sees the request; yoga's own limit is off): the same 413 as REST, in the GraphQL error shape.
describe('a body over BODY_LIMIT_BYTES', () => {
  it('a mutation of 1 MiB and a byte › 413 body_too_large, nothing executed', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const query = 'mutation($input: IssuePassInput!) { issuePass(input: $input) { __typename } }';
    const variables = { input: { passId: pass.id, firstName: 'A', lastName: 'B', email: 'big@example.com', externalId: '' } };
    const base = JSON.stringify({ query, variables }).length;
    variables.input.externalId = 'x'.repeat(1024 * 1024 + 1 - base);
    expect(Buffer.byteLength(JSON.stringify({ query, variables }))).toBe(1024 * 1024 + 1);
    const res = await gql(app, reseller.key, query, variables);
    expect(res.status, res.text).toBe(413);
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'body_too_large', type: 'invalid_request_error' });
    expect(await app.sql('select id from client where reseller_id = ?', [reseller.id])).toEqual([]);
  });

  it('a body of exactly 1 MiB › read and executed (the limit is inclusive)', async () => {
    const reseller = await createReseller(app);
    const query = '{ __typename }';
    // gql() sends { query, variables: {} }; a comment pads the document.
    const pad = 'x'.repeat(1024 * 1024 - JSON.stringify({ query: `${query}#`, variables: {} }).length);
    expect(Buffer.byteLength(JSON.stringify({ query: `${query}#${pad}`, variables: {} }))).toBe(1024 * 1024);
    const res = await gql(app, reseller.key, `${query}#${pad}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ __typename: 'Query' });
  });
});
