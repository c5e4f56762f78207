import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectGraphQLRefusal, expectUnchanged } from '../support/assertions.ts';
import { anotherClient, instanceIn } from '../support/bookings.ts';
import { dbState } from '../support/db-state.ts';
import { clientBody, createPassPackage, createReseller, issuePass } from '../support/factories.ts';
import { call, gql, v3 } from '../support/http.ts';
import {
  createLookupWorld,
  deliverMail,
  gqlWithToken,
  lookUp,
  startSmtp,
  withToken,
  type LookupWorld,
  type TestSmtp,
} from '../support/lookups.ts';

// docs/partner-guide.md "Lookup", the token's rules: it acts for its one client, only on the operations that take
// it, while its pass is active; anything else is refused before it writes a thing.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: LookupWorld;
let smtp: TestSmtp;
let token: string;
/** Another client of the issuer, and a client of the requester itself. */
let sibling: { id: string; issuedPassId: string };
let ownClient: { id: string; issuedPassId: string };

beforeAll(async () => {
  w = await createLookupWorld(app);
  smtp = await startSmtp();
  sibling = await anotherClient(app, w, 'grace@example.com');
  const pass = await createPassPackage(app, w.requester);
  const issued = await issuePass(app, w.requester, pass.id, { first_name: 'Own', last_name: 'Client', email: 'own@example.com' });
  ownClient = { id: issued.client_id, issuedPassId: issued.id };
  ({ token } = await lookUp(app, smtp, w.requester, w.issuer.id, w.client.id));
});
afterAll(async () => {
  await smtp?.close();
});

const tokenOnly = () => ({ headers: withToken(token) });

describe('a token acts for its one client', () => {
  it('naming another client (the issuer’s other client, or the requester’s own) › 403 permission_denied, nothing written', async () => {
    const instance = await instanceIn(app, w.gym.classId, 30);
    const spa = { spa_id: w.spa.id, service_ids: [w.spa.sauna], date: '2026-03-05', time: '10:00' };
    const before = await dbState(app);
    for (const [path, body] of [
      ['/bookings/class', { class_instance_id: instance.id, client_id: sibling.id }],
      ['/bookings/class', { class_instance_id: instance.id, user_pass_id: sibling.issuedPassId }],
      ['/bookings/class', { class_instance_id: instance.id, client_id: ownClient.id }],
      ['/bookings/class', { class_instance_id: instance.id, user_pass_id: ownClient.issuedPassId }],
      ['/bookings/class', { class_instance_id: instance.id, client_id: w.client.id, user_pass_id: sibling.issuedPassId }],
      ['/bookings/spa', { ...spa, client_id: sibling.id }],
      ['/bookings/spa', { ...spa, client_id: 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ' }],
    ] as const) {
      for (const opts of [tokenOnly(), { key: w.requester.key, headers: withToken(token) }]) {
        expectError(await v3(app, path, { ...opts, body }), 403, 'permission_denied');
      }
    }
    for (const id of [sibling.id, ownClient.id]) {
      expectError(await v3(app, `/clients/${id}`, tokenOnly()), 403, 'permission_denied');
      expectError(await v3(app, `/clients/${id}/credits`, tokenOnly()), 403, 'permission_denied');
    }
    // The key alone reads no client of another reseller it holds no active lookup of.
    expectError(await v3(app, `/clients/${sibling.id}`, { key: w.requester.key }), 404, 'resource_not_found');
    expectError(await v3(app, `/clients/${sibling.id}/credits`, { key: w.requester.key }), 404, 'resource_not_found');
    await expectUnchanged(app, before);
  });

  it('confirming a session of the requester’s own client with the token › 403, nothing debited', async () => {
    const instance = await instanceIn(app, w.copayGym.classId, 30);
    // The requester's own pass covers no GOLD gym: a co-pay session, opened with its key.
    const session = await v3(app, '/bookings/class', {
      key: w.requester.key,
      body: { class_instance_id: instance.id, client_id: ownClient.id },
    });
    expect(session.status, session.text).toBe(201);
    expect(session.body.copay_required).toBe(true);
    const before = await dbState(app);
    expectError(
      await v3(app, `/bookings/class/${session.body.session_id}/confirm`, {
        ...tokenOnly(),
        body: { copay_package_id: w.copayGym.optionId },
      }),
      403,
      'permission_denied',
    );
    await expectUnchanged(app, before);
  });

  it('GraphQL: client(id:) of another client is null; a booking naming one is a PermissionError; nothing written', async () => {
    const instance = await instanceIn(app, w.gym.classId, 31);
    const before = await dbState(app);
    const read = await gqlWithToken(app, token, 'query($a: ID!, $b: ID!) { a: client(id: $a) { id } b: client(id: $b) { id } }', {
      a: sibling.id,
      b: ownClient.id,
    });
    expect(read.body).toEqual({ data: { a: null, b: null } });
    const booked = await gqlWithToken(
      app,
      token,
      `mutation($input: BookClassInput!) { bookClass(input: $input) { __typename ... on Error { code } } }`,
      { input: { classInstanceId: instance.id, clientId: sibling.id } },
    );
    expect(booked.body.data.bookClass).toEqual({ __typename: 'PermissionError', code: 'permission_denied' });
    await expectUnchanged(app, before);
  });
});

describe('a token on an operation that does not take one › 403 permission_denied before anything runs', () => {
  it('REST, with or without a bearer key, valid or not', async () => {
    const instance = await instanceIn(app, w.gym.classId, 40);
    const booked = await v3(app, '/bookings/class', { ...tokenOnly(), body: { class_instance_id: instance.id, client_id: w.client.id } });
    expect(booked.status, booked.text).toBe(201);
    const pass = await createPassPackage(app, w.requester);
    const before = await dbState(app);
    const attempts: [string, { method?: string; body?: unknown }][] = [
      ['/passes', {}],
      ['/issued_passes', { body: clientBody(pass.id, { email: 'new@example.com' }) }],
      [`/clients/${w.client.id}/bookings`, {}],
      [`/issued_passes/${w.client.id}`, {}],
      [`/bookings/${booked.body.booking_id}`, {}],
      [`/bookings/${booked.body.booking_id}/cancel`, { method: 'POST' }],
      ['/lookups', { body: { issuer_id: w.issuer.id, client_id: w.client.id } }],
      ['/issuers', {}],
      ['/settings/lookup', { body: { enabled: false } }],
    ];
    for (const [path, opts] of attempts) {
      for (const auth of [
        tokenOnly(),
        { key: w.requester.key, headers: withToken(token) },
        { key: w.requester.key, headers: withToken('lkpt_nonsense') },
      ]) {
        expectError(await v3(app, path, { ...opts, ...auth }), 403, 'permission_denied');
      }
    }
    // The provider API takes no token either.
    const provider = await call(app, '/v3/api/provider/bookings', { headers: withToken(token) });
    expect(provider.status).toBe(403);
    expect(provider.body.error.code).toBe('permission_denied');
    await expectUnchanged(app, before);
    expect(
      (await app.sql<{ lookup_enabled: boolean }>('select lookup_enabled from reseller where id = ?', [w.requester.id]))[0].lookup_enabled,
    ).toBe(false);
  });

  it('GraphQL: any root field that does not take a token refuses the whole operation, 403, nothing run', async () => {
    const instance = await instanceIn(app, w.gym.classId, 41);
    const booked = await v3(app, '/bookings/class', { ...tokenOnly(), body: { class_instance_id: instance.id, client_id: w.client.id } });
    const before = await dbState(app);
    for (const query of [
      '{ passes { edges { node { id } } } }',
      `{ client(id: "${w.client.id}") { id } passes { edges { node { id } } } }`,
      `{ node(id: "${w.client.id}") { id } }`,
      '{ __schema { queryType { name } } }',
      `mutation { cancelBooking(input: { bookingId: "${booked.body.booking_id}" }) { __typename } }`,
      `mutation { startLookup(input: { issuerId: "${w.issuer.id}", clientId: "${w.client.id}" }) { __typename } }`,
      'fragment F on Query { issuers { edges { node { id } } } } { ...F }',
    ]) {
      expectGraphQLRefusal(await gqlWithToken(app, token, query), 403, 'permission_denied');
    }
    await expectUnchanged(app, before);
  });
});

describe('who the token stands for', () => {
  it('with a bearer key of another reseller › 403; of the same reseller › as the token alone', async () => {
    const stranger = await createReseller(app);
    expectError(await v3(app, `/clients/${w.client.id}`, { key: stranger.key, headers: withToken(token) }), 403, 'permission_denied');
    expectError(await v3(app, `/clients/${w.client.id}`, { key: w.issuer.key, headers: withToken(token) }), 403, 'permission_denied');
    expect((await v3(app, `/clients/${w.client.id}`, { key: w.requester.key, headers: withToken(token) })).status).toBe(200);
    // A bad bearer key is still a 401, token or not.
    expectError(await v3(app, `/clients/${w.client.id}`, { key: 'sk_nonsense', headers: withToken(token) }), 401, 'invalid_api_key');
  });

  it('an unknown or malformed token › 401 invalid_lookup_token, on both surfaces', async () => {
    for (const bad of ['lkpt_' + 'A'.repeat(40), 'lkpt_short', `${token}x`, 'Bearer ' + token, '']) {
      expectError(await v3(app, `/clients/${w.client.id}`, { headers: withToken(bad) }), 401, 'invalid_lookup_token');
    }
    expectGraphQLRefusal(
      await gqlWithToken(app, 'lkpt_' + 'B'.repeat(40), `{ client(id: "${w.client.id}") { id } }`),
      401,
      'invalid_lookup_token',
    );
  });

  it('its Idempotency-Keys are apart from its reseller’s: the same key and request from the bearer alone is 409, never the token’s answer', async () => {
    const instance = await instanceIn(app, w.gym.classId, 45);
    const body = { class_instance_id: instance.id, client_id: w.client.id };
    const first = await v3(app, '/bookings/class', { ...tokenOnly(), body, idempotencyKey: 'token-key-1' });
    expect(first.status, first.text).toBe(201);
    const replay = await v3(app, '/bookings/class', { ...tokenOnly(), body, idempotencyKey: 'token-key-1' });
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expectError(
      await v3(app, '/bookings/class', { key: w.requester.key, body, idempotencyKey: 'token-key-1' }),
      409,
      'idempotency_key_reused',
    );
  });
});

describe('the token lives with its pass and its issuer’s setting', () => {
  it('a cancelled pass › 401 within a second; the key alone no longer reads the client', async () => {
    const client = await anotherClient(app, w, 'short@example.com');
    const { token: t } = await lookUp(app, smtp, w.requester, w.issuer.id, client.id);
    expect((await v3(app, `/clients/${client.id}`, { headers: withToken(t) })).status).toBe(200);
    await app.sql(`update issued_pass set status = 'CANCELLED' where id = ?`, [client.issuedPassId]);
    await new Promise((r) => setTimeout(r, 1000));
    expectError(await v3(app, `/clients/${client.id}`, { headers: withToken(t) }), 401, 'invalid_lookup_token');
    expectError(await v3(app, `/clients/${client.id}`, { key: w.requester.key }), 404, 'resource_not_found');
  });

  it('past the pass’s expiry › 401 at once (the clock is read on every use)', async () => {
    const client = await anotherClient(app, w, 'expiring@example.com');
    const { token: t, lookupId } = await lookUp(app, smtp, w.requester, w.issuer.id, client.id);
    const [pass] = await app.sql<{ expires_at: Date }>('select expires_at from issued_pass where id = ?', [client.issuedPassId]);
    expect((await v3(app, `/clients/${client.id}`, { headers: withToken(t) })).status).toBe(200);
    app.clock.set(new Date(new Date(pass.expires_at).getTime() + 1000));
    expectError(await v3(app, `/clients/${client.id}`, { headers: withToken(t) }), 401, 'invalid_lookup_token');
    expect((await v3(app, `/lookups/${lookupId}`, { key: w.requester.key })).body.status).toBe('EXPIRED');
  });

  it('the issuer turns lookup off › its clients’ lookups are REVOKED and tokens stop within a second; on again › they stay revoked', async () => {
    const client = await anotherClient(app, w, 'setting@example.com');
    const { token: t, lookupId } = await lookUp(app, smtp, w.requester, w.issuer.id, client.id);
    const pending = await v3(app, '/lookups', { key: w.requester.key, body: { issuer_id: w.issuer.id, client_id: client.id } });
    expect(pending.status).toBe(201);
    await deliverMail(app, { SMTP_URL: smtp.url });
    await v3(app, '/settings/lookup', { key: w.issuer.key, body: { enabled: false } });
    try {
      await new Promise((r) => setTimeout(r, 1000));
      expectError(await v3(app, `/clients/${client.id}`, { headers: withToken(t) }), 401, 'invalid_lookup_token');
    } finally {
      await v3(app, '/settings/lookup', { key: w.issuer.key, body: { enabled: true } });
    }
    await new Promise((r) => setTimeout(r, 1000));
    expectError(await v3(app, `/clients/${client.id}`, { headers: withToken(t) }), 401, 'invalid_lookup_token');
    // The verifying reseller's key alone reads the client no more, either.
    expectError(await v3(app, `/clients/${client.id}`, { key: w.requester.key }), 404, 'resource_not_found');
    expect((await v3(app, `/lookups/${lookupId}`, { key: w.requester.key })).body.status).toBe('REVOKED');
    const revokedPending = await v3(app, `/lookups/${pending.body.id}`, { key: w.requester.key });
    expect(revokedPending.body.status).toBe('REVOKED');
    expectError(
      await v3(app, `/lookups/${pending.body.id}/verify`, { key: w.requester.key, body: { access_code: '123456' } }),
      409,
      'lookup_not_pending',
    );
    const gqlRead = await gql(app, w.requester.key, 'query($id: ID!) { lookup(id: $id) { status } }', { id: lookupId });
    expect(gqlRead.body.data.lookup.status).toBe('REVOKED');
    // A new lookup, verified by the client again, works.
    const again = await lookUp(app, smtp, w.requester, w.issuer.id, client.id);
    expect((await v3(app, `/clients/${client.id}`, { headers: withToken(again.token) })).status).toBe(200);
  });
});
