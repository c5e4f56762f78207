import { afterAll, describe, expect, it } from 'vitest';
import { configWith } from '../../src/config.ts';
import { buildServer } from '../../src/server.ts';
import { UNLIMITED, useApp } from '../support/app.ts';
import { corsHeaders, expectCorsAllowed, expectNoCors, preflight } from '../support/cors.ts';
import { createPassPackage, createReseller, issuePass, type TestReseller } from '../support/factories.ts';
import { clientSession } from '../support/client-sessions.ts';
import { capturingLogger } from '../support/lookups.ts';
import { call, v3 } from '../support/http.ts';

// CORS (src/graphql/cors.ts, docs/partner-guide.md "Calling from a browser"): /graphql only, by the
// resellers' allow-lists. A preflight from an origin on any list is answered; an actual request gets
// its origin back only for a client-session caller of a reseller listing it (an API key's requests
// never: a key belongs on servers); an error before the caller is known gets it for a listed origin;
// an origin on no list gets no Access-Control-* header at all. REST never answers with CORS.
const app = useApp();
const ORIGIN = 'https://anything.example';
const QUERY = '{ passes(first: 1) { edges { node { id } } } }';

const opened: { close(): Promise<unknown> }[] = [];
afterAll(async () => {
  for (const o of opened) await o.close();
});

/** Another server on the app's database, with its own CORS cache: another process, as far as the lists go. */
async function serverBeside(): Promise<{ baseUrl: string }> {
  const config = configWith({ DATABASE_URL: app.databaseUrl, ...UNLIMITED, LOG_LEVEL: 'silent' });
  const server = buildServer({ orm: app.orm, config, clock: app.clock, log: capturingLogger('info').log });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  opened.push({
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  });
  const { port } = server.address() as { port: number };
  return { baseUrl: `http://127.0.0.1:${port}` };
}

let origins = 0;
/**
 * A reseller listing a fresh origin of its own (the lists are shared by every test of the file's
 * app), once the app answers by it: a process reads the lists at most 500 ms old (src/graphql/cors.ts).
 */
async function listing(): Promise<{ reseller: TestReseller; origin: string }> {
  const reseller = await createReseller(app);
  const origin = `https://app${++origins}.example`;
  const res = await v3(app, '/cors_origins', { method: 'PUT', key: reseller.key, body: { origins: [origin] } });
  expect(res.status).toBe(200);
  const at = performance.now();
  while ((await preflight(app, origin)).status !== 204) {
    expect(performance.now() - at, 'a new origin is answered within 1 s').toBeLessThan(1000);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { reseller, origin };
}

function graphqlPost(origin: string, authorization?: string, contentType = 'application/json') {
  return call(app, '/graphql', {
    method: 'POST',
    raw: JSON.stringify({ query: QUERY }),
    headers: {
      Origin: origin,
      'Content-Type': contentType,
      Accept: 'application/graphql-response+json',
      ...(authorization ? { Authorization: authorization } : {}),
    },
  });
}

describe('an origin on no list', () => {
  it.each(['/graphql', '/v3/api/business/reseller/passes'])('a preflight to %s gets no CORS headers', async (path) => {
    const res = await preflight(app, ORIGIN, path);
    expect(res.status).toBeLessThan(500);
    expectNoCors(res);
  });

  it('a GraphQL POST and a REST GET with an Origin answer as without one, with no CORS headers', async () => {
    const reseller = await createReseller(app);
    const gql = await graphqlPost(ORIGIN, `Bearer ${reseller.key}`);
    expect(gql.status).toBe(200);
    expect(gql.body.errors).toBeUndefined();
    expectNoCors(gql);
    const rest = await call(app, '/v3/api/business/reseller/passes', { key: reseller.key, headers: { Origin: ORIGIN } });
    expect(rest.status).toBe(200);
    expectNoCors(rest);
  });

  it('a 401 gets no CORS headers either', async () => {
    const res = await graphqlPost(ORIGIN);
    expect(res.status).toBe(401);
    expectNoCors(res);
  });
});

describe('an origin on a reseller’s list', () => {
  it('a preflight to /graphql › 204 with that origin (never *), GET and POST, the headers a frontend sends, 10 minutes, no credentials', async () => {
    const { origin } = await listing();
    const res = await preflight(app, origin);
    expect(res.status).toBe(204);
    expect(corsHeaders(res)).toEqual({
      'access-control-allow-origin': origin,
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'authorization, content-type, idempotency-key, last-event-id, graphql-require-preflight, accept',
      'access-control-max-age': '600',
    });
    expect(res.headers.get('vary')).toBe('Origin');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('only that exact origin: another scheme, port, host or a suffix gets nothing', async () => {
    const { origin } = await listing();
    const host = origin.slice('https://'.length);
    for (const other of [`http://${host}`, `${origin}:8443`, `https://x.${host}`, `${origin}.evil`, 'null']) {
      expectNoCors(await preflight(app, other));
    }
  });

  it('a preflight to REST gets no CORS headers', async () => {
    const { origin } = await listing();
    expectNoCors(await preflight(app, origin, '/v3/api/business/reseller/passes'));
  });

  it("an API key's POST, even its own reseller's, gets no CORS headers: a key belongs on a server", async () => {
    const { reseller, origin } = await listing();
    const res = await graphqlPost(origin, `Bearer ${reseller.key}`);
    expect(res.status).toBe(200);
    expect(res.body.data.passes).toBeDefined();
    expectNoCors(res);
    const rest = await call(app, '/v3/api/business/reseller/passes', { key: reseller.key, headers: { Origin: origin } });
    expectNoCors(rest);
  });

  it("a client-session token of the listing reseller › readable; the same token from another reseller's listed origin, or managing the list › not", async () => {
    const { reseller, origin } = await listing();
    const { client_id } = await issuePass(app, reseller, (await createPassPackage(app, reseller)).id);
    const { token } = await clientSession(app, reseller.key, client_id);
    const res = await graphqlPost(origin, `Bearer ${token}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.passes.edges).toBeDefined();
    expectCorsAllowed(res, origin);
    const elsewhere = await listing();
    const foreign = await graphqlPost(elsewhere.origin, `Bearer ${token}`);
    expect(foreign.status).toBe(200);
    expectNoCors(foreign);
    for (const query of ['{ corsOrigins { origins } }', 'mutation { setCorsOrigins(input: { origins: [] }) { __typename } }']) {
      const refused = await call(app, '/graphql', {
        method: 'POST',
        raw: JSON.stringify({ query }),
        headers: {
          Origin: origin,
          'Content-Type': 'application/json',
          Accept: 'application/graphql-response+json',
          Authorization: `Bearer ${token}`,
        },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.errors[0].extensions.code).toBe('permission_denied');
    }
    const list = await v3(app, '/cors_origins', { key: reseller.key });
    expect(list.body.origins).toEqual([origin]);
  });

  it('errors before the caller is known (401; a form body, 415) › readable: its origin and the exposed headers', async () => {
    const { origin } = await listing();
    const unauthenticated = await graphqlPost(origin, 'Bearer cs_expired');
    expect(unauthenticated.status).toBe(401);
    expectCorsAllowed(unauthenticated, origin);
    const form = await graphqlPost(origin, undefined, 'application/x-www-form-urlencoded');
    expect(form.status).toBe(415);
    expectCorsAllowed(form, origin);
  });

  it('the list read by another process: a removal takes effect there within 1 s', async () => {
    const { reseller, origin } = await listing();
    const other = await serverBeside();
    expect((await preflight(other, origin)).status).toBe(204);
    const removed = await v3(app, '/cors_origins', { method: 'PUT', key: reseller.key, body: { origins: [] } });
    const at = performance.now();
    expect(removed.body.origins).toEqual([]);
    let answered = await preflight(other, origin);
    while (answered.headers.get('access-control-allow-origin') !== null && performance.now() - at < 2000) {
      await new Promise((r) => setTimeout(r, 50));
      answered = await preflight(other, origin);
    }
    expectNoCors(answered);
    expect(performance.now() - at).toBeLessThan(1000);
  });

  it("a disabled reseller's origins are on no list", async () => {
    const { reseller, origin } = await listing();
    await app.sql("update reseller set status = 'DISABLED' where id = ?", [reseller.id]);
    await new Promise((r) => setTimeout(r, 600)); // the lists' 500 ms (src/graphql/cors.ts)
    expectNoCors(await preflight(app, origin));
  });
});
