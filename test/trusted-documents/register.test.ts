import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// Registering trusted documents (docs/partner-guide.md "Trusted documents") through REST and GraphQL:
// one service behind both, each document parsed and validated against the schema, all or none.

const app = useApp();
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const countRows = async (resellerId: string) =>
  Number((await app.sql<{ n: string }>('select count(*) as n from trusted_document where reseller_id = ?', [resellerId]))[0].n);

const PASSES = 'query Passes { passes(first: 5) { edges { node { id name } } } }';
const ISSUERS = 'query Issuers($first: Int) { issuers(first: $first) { edges { node { id } } } }';
const UNKNOWN_FIELD = 'query Nope { passes(first: 5) { edges { node { id colour } } } }';

describe('POST /trusted_documents', () => {
  it('registers each document under the SHA-256 of its text; sending the same text again is a no-op', async () => {
    const r = await createReseller(app);
    const first = await v3(app, '/trusted_documents', { key: r.key, body: { documents: [PASSES, ISSUERS, PASSES] } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'trusted_document_registration', registered: 2 });
    expect(first.body.documents.map((d: { sha256: string }) => d.sha256)).toEqual([sha256(PASSES), sha256(ISSUERS)]);
    expect(first.body.documents[0]).toMatchObject({ object: 'trusted_document', document: PASSES, id: expect.stringMatching(/^tdoc_/) });
    expect(await countRows(r.id)).toBe(2);

    const again = await v3(app, '/trusted_documents', { key: r.key, body: { documents: [{ document: PASSES, sha256: sha256(PASSES) }] } });
    expect(again.status).toBe(200);
    expect(again.body.registered).toBe(0);
    expect(again.body.documents[0].id).toBe(first.body.documents[0].id);
    expect(await countRows(r.id)).toBe(2);
  });

  it.each([
    ['a document with an unknown field', [PASSES, UNKNOWN_FIELD], 'documents.1', /colour/],
    ['a document that does not parse', ['query {'], 'documents.0', /Syntax Error/],
    ['a document without an operation', ['fragment F on Pass { id }'], 'documents.0', /operation|never used/],
    ['a hash that is not the text’s', [PASSES, { document: ISSUERS, sha256: sha256(PASSES) }], 'documents.1.sha256', /SHA-256/],
    [
      'a document over 100 KB',
      [`query Big { passes(first: 1) { edges { node { id } } } }\n#${'x'.repeat(102_400)}`],
      'documents.0',
      /100 KB/,
    ],
    ['an empty list', [], 'documents', /./],
  ])('%s › 400 validation_error naming it, nothing written', async (_, documents, param, message) => {
    const r = await createReseller(app);
    const res = await v3(app, '/trusted_documents', { key: r.key, body: { documents } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', param });
    expect(res.body.error.message).toMatch(message);
    expect(await countRows(r.id)).toBe(0);
  });

  it('more than 500 documents in one request › 400 on documents, nothing written', async () => {
    const r = await createReseller(app);
    const documents = Array.from({ length: 501 }, (_, i) => `query Q${i} { passes(first: 1) { edges { node { id } } } }`);
    const res = await v3(app, '/trusted_documents', { key: r.key, body: { documents } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', param: 'documents' });
    expect(await countRows(r.id)).toBe(0);
  });
});

describe('GET and DELETE /trusted_documents', () => {
  it('lists the reseller’s own documents newest first, paged like every list; another reseller sees none of them', async () => {
    const r = await createReseller(app);
    const other = await createReseller(app);
    await v3(app, '/trusted_documents', { key: r.key, body: { documents: [PASSES] } });
    await v3(app, '/trusted_documents', { key: r.key, body: { documents: [ISSUERS] } });
    const page = await v3(app, '/trusted_documents?limit=1', { key: r.key });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ has_more: true, data: [{ sha256: sha256(ISSUERS) }] });
    const next = await v3(app, `/trusted_documents?limit=1&starting_after=${page.body.data[0].id}`, { key: r.key });
    expect(next.body).toMatchObject({ has_more: false, data: [{ sha256: sha256(PASSES) }] });
    expect((await v3(app, '/trusted_documents', { key: other.key })).body.data).toEqual([]);
  });

  it('deletes by hash; a hash the reseller does not hold (another’s included) is 404', async () => {
    const r = await createReseller(app);
    const other = await createReseller(app);
    await v3(app, '/trusted_documents', { key: r.key, body: { documents: [PASSES] } });
    expect((await v3(app, `/trusted_documents/${sha256(PASSES)}`, { method: 'DELETE', key: other.key })).status).toBe(404);
    const deleted = await v3(app, `/trusted_documents/${sha256(PASSES)}`, { method: 'DELETE', key: r.key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ object: 'trusted_document', sha256: sha256(PASSES), deleted: true });
    expect(await countRows(r.id)).toBe(0);
    expect((await v3(app, `/trusted_documents/${sha256(PASSES)}`, { method: 'DELETE', key: r.key })).status).toBe(404);
  });
});

describe('GraphQL', () => {
  const REGISTER = `mutation Register($input: RegisterTrustedDocumentsInput!) {
    registerTrustedDocuments(input: $input) {
      __typename
      ... on TrustedDocumentRegistration { registered documents { id sha256 document } }
      ... on Error { code message }
      ... on InputError { param }
    }
  }`;

  it('registerTrustedDocuments registers, trustedDocuments lists, deleteTrustedDocument deletes', async () => {
    const r = await createReseller(app);
    const res = await gql(app, r.key, REGISTER, {
      input: { documents: [{ document: PASSES, sha256: sha256(PASSES) }, { document: ISSUERS }] },
    });
    expect(res.body.data?.registerTrustedDocuments).toMatchObject({ __typename: 'TrustedDocumentRegistration', registered: 2 });
    expect(await countRows(r.id)).toBe(2);
    const list = await gql(app, r.key, 'query { trustedDocuments(first: 10) { edges { node { sha256 } } } }');
    expect(list.body.data.trustedDocuments.edges.map((e: { node: { sha256: string } }) => e.node.sha256)).toEqual([
      sha256(ISSUERS),
      sha256(PASSES),
    ]);
    const del = await gql(
      app,
      r.key,
      'mutation D($s: String!) { deleteTrustedDocument(sha256: $s) { __typename ... on DeletedTrustedDocument { sha256 deleted } } }',
      {
        s: sha256(PASSES),
      },
    );
    expect(del.body.data.deleteTrustedDocument).toEqual({ __typename: 'DeletedTrustedDocument', sha256: sha256(PASSES), deleted: true });
    expect(await countRows(r.id)).toBe(1);
  });

  it('an invalid document is an InputError naming it, and nothing of the list is written', async () => {
    const r = await createReseller(app);
    const res = await gql(app, r.key, REGISTER, { input: { documents: [{ document: PASSES }, { document: UNKNOWN_FIELD }] } });
    expect(res.body.data?.registerTrustedDocuments).toMatchObject({
      __typename: 'InputError',
      code: 'validation_error',
      param: 'documents.1.document',
    });
    expect(await countRows(r.id)).toBe(0);
  });
});

describe('the trusted_documents_only setting', () => {
  it('is off by default, and set and read through REST and GraphQL', async () => {
    const r = await createReseller(app);
    expect((await v3(app, '/settings/trusted_documents', { key: r.key })).body).toEqual({
      object: 'trusted_document_settings',
      trusted_documents_only: false,
    });
    const on = await v3(app, '/settings/trusted_documents', { key: r.key, body: { trusted_documents_only: true } });
    expect(on.body.trusted_documents_only).toBe(true);
    expect((await gql(app, r.key, '{ trustedDocumentSettings { trustedDocumentsOnly } }')).body.data).toEqual({
      trustedDocumentSettings: { trustedDocumentsOnly: true },
    });
    const off = await gql(
      app,
      r.key,
      'mutation { setTrustedDocumentsOnly(enabled: false) { ... on TrustedDocumentSettings { trustedDocumentsOnly } } }',
    );
    expect(off.body.data.setTrustedDocumentsOnly).toEqual({ trustedDocumentsOnly: false });
    const [row] = await app.sql<{ trusted_documents_only: boolean }>('select trusted_documents_only from reseller where id = ?', [r.id]);
    expect(row.trusted_documents_only).toBe(false);
  });

  it('takes only true or false', async () => {
    const r = await createReseller(app);
    const res = await v3(app, '/settings/trusted_documents', { key: r.key, body: { trusted_documents_only: 'yes' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', param: 'trusted_documents_only' });
  });
});
