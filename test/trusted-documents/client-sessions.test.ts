import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller, issuePass } from '../support/factories.ts';
import { call, v3 } from '../support/http.ts';

// trusted_documents_only holds client-session tokens (and only them) to the reseller's trusted documents.
const app = useApp();
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const CLIENT = 'query Client($id: ID!) { client(id: $id) { id } }';
const ACCEPT = { Accept: 'application/graphql-response+json' };

describe('a client-session token with trusted_documents_only on', () => {
  it('runs registered documents by hash only; a query is 400 document_not_trusted; off again within 1 s it may send any', async () => {
    const r = await createReseller(app);
    const other = await createReseller(app);
    const { client_id } = await issuePass(app, r, (await createPassPackage(app, r)).id);
    await v3(app, '/trusted_documents', { key: r.key, body: { documents: [CLIENT] } });
    await v3(app, '/trusted_documents', { key: other.key, body: { documents: ['query { __typename }'] } });
    const session = await v3(app, '/client_sessions', { key: r.key, body: { client_id, expires_in: 600 } });
    const cs = session.body.token as string;
    await v3(app, '/settings/trusted_documents', { key: r.key, body: { trusted_documents_only: true } });
    const byQuery = await call(app, '/graphql', { key: cs, headers: ACCEPT, body: { query: CLIENT, variables: { id: client_id } } });
    expect(byQuery.status).toBe(400);
    expect(byQuery.body.errors[0].extensions.code).toBe('document_not_trusted');
    const beside = await call(app, '/graphql', {
      key: cs,
      headers: ACCEPT,
      body: { query: CLIENT, documentId: `sha256:${sha256(CLIENT)}`, variables: { id: client_id } },
    });
    expect(beside.body.errors[0].extensions.code).toBe('document_not_trusted');
    const byHash = await call(app, '/graphql', {
      key: cs,
      headers: ACCEPT,
      body: { documentId: `sha256:${sha256(CLIENT)}`, variables: { id: client_id } },
    });
    expect(byHash.body).toEqual({ data: { client: { id: client_id } } });
    const viaGet = await call(
      app,
      `/graphql?documentId=sha256%3A${sha256(CLIENT)}&variables=${encodeURIComponent(JSON.stringify({ id: client_id }))}`,
      { key: cs, headers: ACCEPT },
    );
    expect(viaGet.status).toBe(200);
    expect(viaGet.headers.get('cache-control')).toBe('private, max-age=10');
    const foreign = await call(app, '/graphql', {
      key: cs,
      headers: ACCEPT,
      body: { documentId: `sha256:${sha256('query { __typename }')}` },
    });
    expect(foreign.body.errors[0].extensions.code).toBe('persisted_document_not_found');
    expect(
      (await call(app, '/graphql', { key: r.key, headers: ACCEPT, body: { query: CLIENT, variables: { id: client_id } } })).status,
    ).toBe(200);
    await v3(app, '/settings/trusted_documents', { key: r.key, body: { trusted_documents_only: false } });
    await new Promise((done) => setTimeout(done, 1100)); // the per-process cache (TRUSTED_DOCUMENT_CACHE_MS)
    const free = await call(app, '/graphql', { key: cs, headers: ACCEPT, body: { query: CLIENT, variables: { id: client_id } } });
    expect(free.body).toEqual({ data: { client: { id: client_id } } });
  });
});
