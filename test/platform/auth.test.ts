import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/platform/errors.ts';
import { createApiKey, revokeApiKey, setResellerStatus } from '../../src/modules/resellers/index.ts';
import { useApp } from '../support/app.ts';
import { clientBody, createPassPackage, createReseller, issuePass, type TestReseller } from '../support/factories.ts';
import { call, gql, v3, type Reply } from '../support/http.ts';
import { expectError, expectGraphQLRefusal } from '../support/assertions.ts';

const app = useApp();

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const base62 = (n: number) => [...randomBytes(n)].map((b) => BASE62[b % 62]).join('');
const unknownKey = () => `sk_${base62(40)}`;

type GraphQLBody<T = Record<string, unknown>> = { data?: T | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

/** A REST error: status, catalogue code and type, and the body's request_id is the Request-Id header. */
/**
 * Calls until `done` holds, for at most one second from the change (the promise for revocation and
 * disabling on every process), then answers the last reply, so the caller's assertion fails if it never held.
 */
async function withinOneSecond<R>(request: () => Promise<R>, done: (r: R) => boolean): Promise<R> {
  const deadline = performance.now() + 1000;
  for (;;) {
    const reply = await request();
    if (done(reply) || performance.now() >= deadline) return reply;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const withAuthorization = (authorization: string) => ({ headers: { Authorization: authorization } });

async function keyIdsOf(reseller: TestReseller): Promise<string[]> {
  const rows = await app.sql<{ id: string }>('select id from api_key where reseller_id = ? order by id', [reseller.id]);
  return rows.map((r) => r.id);
}

describe('authentication (REST)', () => {
  it('no Authorization header › answers 401 invalid_api_key', async () => {
    expectError(await v3<ErrorBody>(app, '/passes'), 401, 'invalid_api_key');
  });

  it('a non-Bearer scheme carrying a valid key › answers 401 invalid_api_key', async () => {
    const reseller = await createReseller(app);
    for (const authorization of [`Basic ${reseller.key}`, `Token ${reseller.key}`, reseller.key]) {
      expectError(await v3<ErrorBody>(app, '/passes', withAuthorization(authorization)), 401, 'invalid_api_key');
    }
  });

  it('the Bearer scheme in another case › is accepted (schemes are case-insensitive)', async () => {
    const reseller = await createReseller(app);
    const res = await v3(app, '/passes', withAuthorization(`bearer ${reseller.key}`));
    expect(res.status).toBe(200);
  });

  it('a malformed key › answers 401 invalid_api_key', async () => {
    const reseller = await createReseller(app);
    for (const authorization of [
      'Bearer',
      'Bearer ',
      'Bearer sk_short',
      `Bearer ${reseller.key}x`,
      `Bearer ${reseller.key.slice(0, -1)}`,
      `Bearer pk_${base62(40)}`,
      `Bearer sk_${base62(39)}-`,
      `Bearer ${reseller.key} ${reseller.key}`,
    ]) {
      expectError(await v3<ErrorBody>(app, '/passes', withAuthorization(authorization)), 401, 'invalid_api_key');
    }
  });

  it('an unknown well-formed key › answers 401 invalid_api_key', async () => {
    expectError(await v3<ErrorBody>(app, '/passes', { key: unknownKey() }), 401, 'invalid_api_key');
  });

  it("a revoked key › answers 401 invalid_api_key while the reseller's other key keeps working", async () => {
    const reseller = await createReseller(app);
    const second = await createApiKey(app.orm.em.fork(), reseller.id, app.clock.now());
    expect((await v3(app, '/passes', { key: reseller.key })).status).toBe(200);
    const [first] = (await keyIdsOf(reseller)).filter((id) => id !== second.id);
    await revokeApiKey(app.orm.em.fork(), first, app.clock.now());
    // A process may answer from its key cache for KEY_CACHE_MS; the promise is "refused within 1 s".
    expectError(
      await withinOneSecond(
        () => v3<ErrorBody>(app, '/passes', { key: reseller.key }),
        (r) => r.status === 401,
      ),
      401,
      'invalid_api_key',
    );
    expect((await v3(app, '/passes', { key: second.secret })).status).toBe(200);
  });

  it('a disabled reseller › answers 403 account_disabled, and 200 again once enabled', async () => {
    const reseller = await createReseller(app, { disabled: true });
    expectError(await v3<ErrorBody>(app, '/passes', { key: reseller.key }), 403, 'account_disabled');
    await setResellerStatus(app.orm.em.fork(), reseller.id, 'ACTIVE');
    expect(
      (
        await withinOneSecond(
          () => v3(app, '/passes', { key: reseller.key }),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);
  });

  it('every operation › asks for a key before looking at the path or the body', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const issued = await issuePass(app, reseller, pass.id);
    for (const [path, opts] of [
      [`/passes/${pass.id}`, {}],
      [`/clients/${issued.client_id}`, {}],
      [`/issued_passes/${issued.client_id}`, {}],
      ['/clients/client_01ARZ3NDEKTSV4RRFFQ69G5FAV', {}],
      ['/issued_passes', { body: clientBody(pass.id) }],
      ['/issued_passes', { raw: '{not json', headers: { 'Content-Type': 'application/json' } }],
      [`/issued_passes/${issued.client_id}/renew`, { method: 'POST' }],
    ] as const) {
      expectError(await v3<ErrorBody>(app, path, opts), 401, 'invalid_api_key');
    }
  });

  it('POST /issued_passes without a key › creates nothing', async () => {
    const reseller = await createReseller(app, { balance: 100_000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID' });
    expectError(await v3<ErrorBody>(app, '/issued_passes', { body: clientBody(pass.id) }), 401, 'invalid_api_key');
    expectError(await v3<ErrorBody>(app, '/issued_passes', { key: unknownKey(), body: clientBody(pass.id) }), 401, 'invalid_api_key');
    const [row] = await app.sql<{ clients: string; btxn: string }>(
      `select (select count(*) from client where reseller_id = ?) as clients,
              (select count(*) from business_transaction where reseller_id = ?) as btxn`,
      [reseller.id, reseller.id],
    );
    expect({ clients: Number(row.clients), btxn: Number(row.btxn) }).toEqual({ clients: 0, btxn: 1 });
  });
});

/** Two funded resellers, each with a PREPAID pass package and one client holding an issued pass. */
async function twoResellers() {
  const a = await createReseller(app, { name: 'Reseller A', balance: 100_000 });
  const b = await createReseller(app, { name: 'Reseller B', balance: 100_000 });
  const aPass = await createPassPackage(app, a, { name: 'A Pass', paymentModel: 'PREPAID', price: 1_000 });
  const bPass = await createPassPackage(app, b, { name: 'B Pass', paymentModel: 'PREPAID', price: 1_000 });
  const aIssued = await issuePass(app, a, aPass.id);
  const bIssued = await issuePass(app, b, bPass.id);
  return { a, b, aPass, bPass, aIssued, bIssued };
}

/** Every row a reseller's calls can change, for "nothing changed" assertions. */
async function rowsOf(reseller: TestReseller) {
  const rows = (table: string, columns = '*') =>
    app.sql(`select ${columns} from ${table} where reseller_id = ? order by id`, [reseller.id]);
  return {
    reseller: await app.sql('select balance, status from reseller join business_account on reseller_id = id where id = ?', [reseller.id]),
    clients: await rows('client'),
    issuedPasses: await rows('issued_pass'),
    businessTransactions: await rows('business_transaction'),
    creditTransactions: await rows('credit_transaction'),
    outbox: await rows('outbox', 'id, topic, payload'),
  };
}

const inDays = (days: number) => Math.floor(app.clock.now().getTime() / 1000) + days * 86_400;

describe('tenancy (REST)', () => {
  it("GET /clients/{id} of another reseller's client › answers 404 resource_not_found", async () => {
    const { a, b, aIssued } = await twoResellers();
    expectError(await v3<ErrorBody>(app, `/clients/${aIssued.client_id}`, { key: b.key }), 404, 'resource_not_found');
    expect((await v3(app, `/clients/${aIssued.client_id}`, { key: a.key })).status).toBe(200);
  });

  it("GET /issued_passes/{client_id} of another reseller's client › answers 404 resource_not_found", async () => {
    const { a, b, aIssued } = await twoResellers();
    expectError(await v3<ErrorBody>(app, `/issued_passes/${aIssued.client_id}`, { key: b.key }), 404, 'resource_not_found');
    expect((await v3(app, `/issued_passes/${aIssued.client_id}`, { key: a.key })).body).toMatchObject({ id: aIssued.id });
  });

  it("GET /passes/{id} of another reseller's pass › answers 404 resource_not_found", async () => {
    const { a, b, aPass } = await twoResellers();
    expectError(await v3<ErrorBody>(app, `/passes/${aPass.id}`, { key: b.key }), 404, 'resource_not_found');
    expect((await v3(app, `/passes/${aPass.id}`, { key: a.key })).body).toMatchObject({ id: aPass.id });
  });

  it("another reseller's resources › answer exactly like ids that do not exist (no enumeration)", async () => {
    const { b, aIssued, aPass } = await twoResellers();
    const foreignClient = await v3<ErrorBody>(app, `/clients/${aIssued.client_id}`, { key: b.key });
    const missingClient = await v3<ErrorBody>(app, '/clients/client_01ARZ3NDEKTSV4RRFFQ69G5FAV', { key: b.key });
    const foreignPass = await v3<ErrorBody>(app, `/passes/${aPass.id}`, { key: b.key });
    const missingPass = await v3<ErrorBody>(app, '/passes/pass_01ARZ3NDEKTSV4RRFFQ69G5FAV', { key: b.key });
    const shape = (r: Reply<ErrorBody>) => ({
      status: r.status,
      type: r.body.error.type,
      code: r.body.error.code,
      param: r.body.error.param,
    });
    expect(shape(foreignClient)).toEqual(shape(missingClient));
    expect(shape(foreignPass)).toEqual(shape(missingPass));
  });

  it("POST /issued_passes/{client_id}/expiry for another reseller's client › answers 404 and changes nothing", async () => {
    const { a, b, aIssued } = await twoResellers();
    const before = { a: await rowsOf(a), b: await rowsOf(b) };
    // Within the PREPAID pass's paid month, so the owner's same call is allowed.
    const res = await v3<ErrorBody>(app, `/issued_passes/${aIssued.client_id}/expiry`, { key: b.key, body: { expires_at: inDays(20) } });
    expectError(res, 404, 'resource_not_found');
    expect({ a: await rowsOf(a), b: await rowsOf(b) }).toEqual(before);
    // The same call by the owner succeeds: the 404 above is tenancy, not the request.
    expect((await v3(app, `/issued_passes/${aIssued.client_id}/expiry`, { key: a.key, body: { expires_at: inDays(20) } })).status).toBe(
      200,
    );
  });

  it("POST /issued_passes/{client_id}/renew for another reseller's client › answers 404 and changes nothing", async () => {
    const { a, b, aIssued } = await twoResellers();
    const before = { a: await rowsOf(a), b: await rowsOf(b) };
    const res = await v3<ErrorBody>(app, `/issued_passes/${aIssued.client_id}/renew`, { key: b.key, method: 'POST' });
    expectError(res, 404, 'resource_not_found');
    expect({ a: await rowsOf(a), b: await rowsOf(b) }).toEqual(before);
    expect((await v3(app, `/issued_passes/${aIssued.client_id}/renew`, { key: a.key, method: 'POST' })).status).toBe(201);
  });

  it("GET /passes › never lists another reseller's passes", async () => {
    const { a, b, aPass, bPass } = await twoResellers();
    const extra = await createPassPackage(app, a, { name: 'A Pass 2' });
    const res = await v3<{ data: { id: string }[] }>(app, '/passes?limit=100', { key: b.key });
    expect(res.status).toBe(200);
    expect(res.body.data.map((p) => p.id)).toEqual([bPass.id]);
    for (const foreign of [aPass.id, extra.id]) expect(res.body.data.map((p) => p.id)).not.toContain(foreign);
  });

  it("POST /issued_passes with another reseller's pass_id › answers 400 validation_error naming pass_id and creates nothing", async () => {
    const { a, b, aPass } = await twoResellers();
    const before = { a: await rowsOf(a), b: await rowsOf(b) };
    const res = await v3<ErrorBody>(app, '/issued_passes', { key: b.key, body: clientBody(aPass.id) });
    expectError(res, 400, 'validation_error', 'pass_id');
    expect({ a: await rowsOf(a), b: await rowsOf(b) }).toEqual(before);
  });

  it("POST /issued_passes/update with another reseller's client_id › answers 400 validation_error naming client_id and changes nothing", async () => {
    const { a, b, aIssued, bPass } = await twoResellers();
    const before = { a: await rowsOf(a), b: await rowsOf(b) };
    const res = await v3<ErrorBody>(app, '/issued_passes/update', {
      key: b.key,
      body: { client_id: aIssued.client_id, pass_id: bPass.id },
    });
    expectError(res, 400, 'validation_error', 'client_id');
    expect({ a: await rowsOf(a), b: await rowsOf(b) }).toEqual(before);
  });

  it("POST /issued_passes/update with another reseller's pass_id › answers 400 validation_error naming pass_id and changes nothing", async () => {
    const { a, b, aPass, bIssued } = await twoResellers();
    const before = { a: await rowsOf(a), b: await rowsOf(b) };
    const res = await v3<ErrorBody>(app, '/issued_passes/update', {
      key: b.key,
      body: { client_id: bIssued.client_id, pass_id: aPass.id },
    });
    expectError(res, 400, 'validation_error', 'pass_id');
    expect({ a: await rowsOf(a), b: await rowsOf(b) }).toEqual(before);
  });
});

describe('authentication (GraphQL)', () => {
  const PASSES = '{ passes { edges { node { id } } } }';

  it('no Authorization header › answers HTTP 401 with a top-level invalid_api_key error', async () => {
    expectGraphQLRefusal(await gql(app, undefined, PASSES), 401, 'invalid_api_key');
  });

  it('a non-Bearer scheme › answers HTTP 401 invalid_api_key', async () => {
    const reseller = await createReseller(app);
    expectGraphQLRefusal(await gql(app, undefined, PASSES, {}, withAuthorization(`Basic ${reseller.key}`)), 401, 'invalid_api_key');
  });

  it('an unknown well-formed key › answers HTTP 401 invalid_api_key', async () => {
    expectGraphQLRefusal(await gql(app, unknownKey(), PASSES), 401, 'invalid_api_key');
  });

  it('a revoked key › answers HTTP 401 invalid_api_key', async () => {
    const reseller = await createReseller(app);
    expect((await gql(app, reseller.key, PASSES)).body.errors).toBeUndefined();
    const [keyId] = await keyIdsOf(reseller);
    await revokeApiKey(app.orm.em.fork(), keyId, app.clock.now());
    expectGraphQLRefusal(
      await withinOneSecond(
        () => gql(app, reseller.key, PASSES),
        (r) => r.status === 401,
      ),
      401,
      'invalid_api_key',
    );
  });

  it('a disabled reseller › answers HTTP 403 account_disabled', async () => {
    const reseller = await createReseller(app, { disabled: true });
    expectGraphQLRefusal(await gql(app, reseller.key, PASSES), 403, 'account_disabled');
  });

  it('GET /graphql with a query and no key › answers HTTP 401 invalid_api_key', async () => {
    const res = await call<GraphQLBody>(app, `/graphql?query=${encodeURIComponent(PASSES)}`, {
      headers: { Accept: 'application/graphql-response+json' },
    });
    expectGraphQLRefusal(res, 401, 'invalid_api_key');
  });
});

describe('tenancy (GraphQL)', () => {
  const CLIENT = 'query Client($id: ID!) { client(id: $id) { id firstName } }';
  const ISSUED_PASS = 'query IssuedPass($clientId: ID!) { issuedPass(clientId: $clientId) { id passcode } }';
  const NODE = 'query Node($id: ID!) { node(id: $id) { id __typename } }';
  const NODES = 'query Nodes($ids: [ID!]!) { nodes(ids: $ids) { id } }';

  it("client(id:) of another reseller's client › is null", async () => {
    const { a, b, aIssued } = await twoResellers();
    const foreign = await gql<{ client: { id: string } | null }>(app, b.key, CLIENT, { id: aIssued.client_id });
    expect(foreign.status).toBe(200);
    expect(foreign.body.data).toEqual({ client: null });
    const own = await gql<{ client: { id: string } | null }>(app, a.key, CLIENT, { id: aIssued.client_id });
    expect(own.body.data?.client?.id).toBe(aIssued.client_id);
  });

  it("issuedPass(clientId:) of another reseller's client › is null", async () => {
    const { a, b, aIssued } = await twoResellers();
    const foreign = await gql<{ issuedPass: { id: string } | null }>(app, b.key, ISSUED_PASS, { clientId: aIssued.client_id });
    expect(foreign.body.data).toEqual({ issuedPass: null });
    const own = await gql<{ issuedPass: { id: string } | null }>(app, a.key, ISSUED_PASS, { clientId: aIssued.client_id });
    expect(own.body.data?.issuedPass?.id).toBe(aIssued.id);
  });

  it("node(id:) of another reseller's pass, issued pass or client › returns no data for it", async () => {
    const { a, b, aPass, aIssued } = await twoResellers();
    for (const id of [aPass.id, aIssued.id, aIssued.client_id]) {
      const foreign = await gql<{ node: { id: string } | null }>(app, b.key, NODE, { id });
      expect(foreign.body.data).toEqual({ node: null });
      expect(JSON.stringify(foreign.body.data)).not.toContain(id);
      // A foreign id reads as a missing one: never an internal error.
      for (const error of foreign.body.errors ?? []) expect(error.extensions?.code).toBe('resource_not_found');
      const own = await gql<{ node: { id: string } | null }>(app, a.key, NODE, { id });
      expect(own.body.data?.node?.id).toBe(id);
    }
  });

  it("nodes(ids:) mixing own and foreign ids › returns only the caller's own", async () => {
    const { b, aPass, aIssued, bPass } = await twoResellers();
    const res = await gql<{ nodes: ({ id: string } | null)[] }>(app, b.key, NODES, { ids: [aPass.id, bPass.id, aIssued.client_id] });
    expect(res.body.data?.nodes).toEqual([null, { id: bPass.id }, null]);
  });

  it("passes › never lists another reseller's passes", async () => {
    const { b, bPass } = await twoResellers();
    const res = await gql<{ passes: { edges: { node: { id: string } }[] } }>(
      app,
      b.key,
      '{ passes(first: 100) { edges { node { id } } } }',
    );
    expect(res.body.data?.passes.edges.map((e) => e.node.id)).toEqual([bPass.id]);
  });

  it("setIssuedPassExpiry and renewIssuedPass for another reseller's client › answer NotFoundError and change nothing", async () => {
    const { a, b, aIssued } = await twoResellers();
    const before = { a: await rowsOf(a), b: await rowsOf(b) };
    const expiresAt = new Date(inDays(90) * 1000).toISOString();
    const expiry = await gql<{ setIssuedPassExpiry: { __typename: string; code?: string } }>(
      app,
      b.key,
      `mutation($clientId: ID!, $expiresAt: DateTime!) { setIssuedPassExpiry(input: { clientId: $clientId, expiresAt: $expiresAt }) { __typename ... on Error { code } } }`,
      { clientId: aIssued.client_id, expiresAt },
    );
    expect(expiry.body.data?.setIssuedPassExpiry).toEqual({ __typename: 'NotFoundError', code: 'resource_not_found' });
    const renew = await gql<{ renewIssuedPass: { __typename: string; code?: string } }>(
      app,
      b.key,
      `mutation($clientId: ID!) { renewIssuedPass(input: { clientId: $clientId }) { __typename ... on Error { code } } }`,
      { clientId: aIssued.client_id },
    );
    expect(renew.body.data?.renewIssuedPass).toEqual({ __typename: 'NotFoundError', code: 'resource_not_found' });
    expect({ a: await rowsOf(a), b: await rowsOf(b) }).toEqual(before);
  });

  it("issuePass and updateIssuedPass with another reseller's ids › answer InputError naming the field", async () => {
    const { a, b, aPass, aIssued, bPass } = await twoResellers();
    const before = { a: await rowsOf(a), b: await rowsOf(b) };
    const issue = await gql<{ issuePass: { __typename: string; code?: string; param?: string } }>(
      app,
      b.key,
      `mutation($passId: ID!) { issuePass(input: { passId: $passId, firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" }) {
        __typename ... on Error { code } ... on InputError { param } } }`,
      { passId: aPass.id },
    );
    expect(issue.body.data?.issuePass).toEqual({ __typename: 'InputError', code: 'validation_error', param: 'passId' });
    const update = await gql<{ updateIssuedPass: { __typename: string; code?: string; param?: string } }>(
      app,
      b.key,
      `mutation($clientId: ID!, $passId: ID!) { updateIssuedPass(input: { clientId: $clientId, passId: $passId }) {
        __typename ... on Error { code } ... on InputError { param } } }`,
      { clientId: aIssued.client_id, passId: bPass.id },
    );
    expect(update.body.data?.updateIssuedPass).toEqual({ __typename: 'InputError', code: 'validation_error', param: 'clientId' });
    expect({ a: await rowsOf(a), b: await rowsOf(b) }).toEqual(before);
  });
});
