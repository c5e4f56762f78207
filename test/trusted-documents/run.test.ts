import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller, type TestReseller } from '../support/factories.ts';
import { call, gql, v3 } from '../support/http.ts';

// Running trusted documents on /graphql (docs/partner-guide.md "Trusted documents"): by GraphQL over
// HTTP's `documentId` in a JSON body or a GET query string, or Apollo's persistedQuery extension;
// looked up per reseller; a GET by hash answered without errors may be cached by the browser briefly.

const app = useApp();
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const ACCEPT = { Accept: 'application/graphql-response+json' };

const PASSES = 'query Passes($first: Int) { passes(first: $first) { edges { node { id name } } } }';
const SET_LOOKUP = 'mutation SetLookup { setLookupEnabled(enabled: true) { __typename } }';

async function register(r: TestReseller, ...documents: string[]) {
  const res = await v3(app, '/trusted_documents', { key: r.key, body: { documents } });
  expect(res.status).toBe(200);
}

async function resellerWithPass() {
  const r = await createReseller(app);
  const pass = await createPassPackage(app, r, { name: 'Trusted Pass' });
  return { r, pass };
}

const post = (r: TestReseller, body: unknown) => call(app, '/graphql', { key: r.key, body, headers: ACCEPT });
const get = (r: TestReseller, search: string) => call(app, `/graphql?${search}`, { key: r.key, headers: ACCEPT });

describe('documentId', () => {
  it('POST › runs the registered document with its variables; no Cache-Control', async () => {
    const { r, pass } = await resellerWithPass();
    await register(r, PASSES);
    const res = await post(r, { documentId: `sha256:${sha256(PASSES)}`, variables: { first: 5 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { passes: { edges: [{ node: { id: expect.any(String), name: pass.name } }] } } });
    expect(res.headers.get('cache-control')).toBeNull();
  });

  it('GET › runs it, answered with Cache-Control private, max-age=10 and Vary: Authorization', async () => {
    const { r, pass } = await resellerWithPass();
    await register(r, PASSES);
    const res = await get(r, `documentId=sha256%3A${sha256(PASSES)}&variables=${encodeURIComponent('{"first":2}')}`);
    expect(res.status).toBe(200);
    expect(res.body.data.passes.edges[0].node.name).toBe(pass.name);
    expect(res.headers.get('cache-control')).toBe('private, max-age=10');
    expect(res.headers.get('vary')).toBe('Authorization');
  });

  it('GET of an arbitrary query, and a GET by hash that answers errors, keep today’s headers (no Cache-Control)', async () => {
    const { r } = await resellerWithPass();
    await register(r, PASSES);
    const plain = await get(r, `query=${encodeURIComponent(PASSES)}`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('cache-control')).toBeNull();
    const failing = await get(r, `documentId=sha256%3A${sha256(PASSES)}&variables=${encodeURIComponent('{"first":1000}')}`);
    expect(failing.body.errors?.length).toBeGreaterThan(0);
    expect(failing.headers.get('cache-control')).toBeNull();
  });

  it('a registered mutation runs by hash over POST, and over GET stays 405 method_not_allowed', async () => {
    const { r } = await resellerWithPass();
    await register(r, SET_LOOKUP);
    const viaGet = await get(r, `documentId=sha256%3A${sha256(SET_LOOKUP)}`);
    expect(viaGet.status).toBe(405);
    expect(viaGet.body.errors[0].extensions.code).toBe('method_not_allowed');
    const [before] = await app.sql<{ lookup_enabled: boolean }>('select lookup_enabled from reseller where id = ?', [r.id]);
    expect(before.lookup_enabled).toBe(false);
    const viaPost = await post(r, { documentId: `sha256:${sha256(SET_LOOKUP)}` });
    expect(viaPost.body).toEqual({ data: { setLookupEnabled: { __typename: 'LookupSettings' } } });
  });

  it('an unknown hash › 400 persisted_document_not_found', async () => {
    const { r } = await resellerWithPass();
    const res = await post(r, { documentId: `sha256:${sha256('query { __typename }')}` });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'persisted_document_not_found', param: 'documentId' });
    expect(res.body.data).toBeUndefined();
  });

  it('another reseller’s registered hash is unknown to this one', async () => {
    const { r: owner } = await resellerWithPass();
    const { r: other } = await resellerWithPass();
    await register(owner, PASSES);
    const res = await post(other, { documentId: `sha256:${sha256(PASSES)}` });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('persisted_document_not_found');
    expect((await post(owner, { documentId: `sha256:${sha256(PASSES)}` })).status).toBe(200);
  });

  it.each([
    ['not sha256:', { documentId: sha256(PASSES) }, 'documentId'],
    ['upper-case hex', { documentId: `sha256:${sha256(PASSES).toUpperCase()}` }, 'documentId'],
    ['not a string', { documentId: 7 }, 'documentId'],
    ['a hash beside a query that is not its own', { query: PASSES, documentId: `sha256:${sha256('query { __typename }')}` }, 'documentId'],
    [
      'an Apollo extension without version 1',
      { extensions: { persistedQuery: { sha256Hash: sha256(PASSES) } } },
      'extensions.persistedQuery.sha256Hash',
    ],
  ])('a malformed id (%s) › 400 validation_error naming it', async (_, body, param) => {
    const { r } = await resellerWithPass();
    await register(r, PASSES);
    const res = await post(r, body);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'validation_error', param });
  });

  it('neither query nor documentId › 400 validation_error on query', async () => {
    const { r } = await resellerWithPass();
    const res = await post(r, { variables: {} });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'validation_error', param: 'query' });
  });

  it('a query sent beside its own hash runs (Apollo’s retry after a miss), registered or not', async () => {
    const { r } = await resellerWithPass();
    const res = await post(r, { query: PASSES, documentId: `sha256:${sha256(PASSES)}`, variables: { first: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.data.passes.edges).toHaveLength(1);
  });

  it('a deleted document is refused within 1 s', async () => {
    const { r } = await resellerWithPass();
    await register(r, PASSES);
    expect((await post(r, { documentId: `sha256:${sha256(PASSES)}` })).status).toBe(200);
    await v3(app, `/trusted_documents/${sha256(PASSES)}`, { method: 'DELETE', key: r.key });
    const deadline = performance.now() + 1100;
    let res = await post(r, { documentId: `sha256:${sha256(PASSES)}` });
    while (res.status === 200 && performance.now() < deadline) {
      await new Promise((done) => setTimeout(done, 50));
      res = await post(r, { documentId: `sha256:${sha256(PASSES)}` });
    }
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('persisted_document_not_found');
  });
});

describe('Apollo’s extensions.persistedQuery', () => {
  it('POST and GET run the registered document; the GET is cacheable', async () => {
    const { r, pass } = await resellerWithPass();
    await register(r, PASSES);
    const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(PASSES) } };
    const viaPost = await post(r, { extensions, variables: { first: 3 } });
    expect(viaPost.status).toBe(200);
    expect(viaPost.body.data.passes.edges[0].node.name).toBe(pass.name);
    const viaGet = await get(
      r,
      `extensions=${encodeURIComponent(JSON.stringify(extensions))}&variables=${encodeURIComponent('{"first":3}')}`,
    );
    expect(viaGet.status).toBe(200);
    expect(viaGet.body.data.passes.edges[0].node.name).toBe(pass.name);
    expect(viaGet.headers.get('cache-control')).toBe('private, max-age=10');
  });

  it('an unknown hash › 400 persisted_document_not_found naming the extension', async () => {
    const { r } = await resellerWithPass();
    const res = await post(r, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256('query { __typename }') } } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({
      code: 'persisted_document_not_found',
      param: 'extensions.persistedQuery.sha256Hash',
    });
  });
});

describe('with trusted_documents_only on', () => {
  it('an API key still runs arbitrary queries, and its registered documents by hash', async () => {
    const { r } = await resellerWithPass();
    await register(r, PASSES);
    expect((await v3(app, '/settings/trusted_documents', { key: r.key, body: { trusted_documents_only: true } })).status).toBe(200);
    const arbitrary = await gql(app, r.key, '{ passes(first: 1) { edges { node { id } } } }');
    expect(arbitrary.status).toBe(200);
    expect(arbitrary.body.errors).toBeUndefined();
    const byHash = await post(r, { documentId: `sha256:${sha256(PASSES)}` });
    expect(byHash.status).toBe(200);
    expect(byHash.body.errors).toBeUndefined();
  });
});
