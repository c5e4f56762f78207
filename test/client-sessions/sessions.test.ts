import { createHash } from 'node:crypto';
import { getNamedType, isLeafType, type GraphQLField } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlSchema } from '../../src/graphql/schema.ts';
import { setResellerStatus } from '../../src/modules/resellers/index.ts';
import { useApp } from '../support/app.ts';
import { expectError, expectGraphQLRefusal, expectUnchanged, expectValidationError } from '../support/assertions.ts';
import { anotherClient, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { dbState } from '../support/db-state.ts';
import { call, gql, v3 } from '../support/http.ts';
import { asClient, clientSession } from '../support/client-sessions.ts';

// docs/partner-guide.md "Client sessions": a token made by the reseller's server for one client, used
// by its frontend on /graphql only, within its scopes; every other door refused with nothing written.

const NOW = new Date('2026-03-02T08:00:00Z');
const app = useApp({}, { now: NOW });
let w: BookingWorld;
/** Another client of the same reseller, and a client of another reseller. */
let sibling: { id: string; issuedPassId: string };
let foreign: BookingWorld;

beforeAll(async () => {
  w = await createBookingWorld(app);
  sibling = await anotherClient(app, w);
  foreign = await createBookingWorld(app);
});

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('creating a client session', () => {
  it('over REST › 201 with the token once, read always held, stored as SHA-256 only; GET never shows the token', async () => {
    const res = await v3(app, '/client_sessions', { key: w.reseller.key, body: { client_id: w.client.id, scopes: ['book'] } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      object: 'client_session',
      id: expect.stringMatching(/^csess_[0-9A-Z]{26}$/),
      token: expect.stringMatching(/^cs_[0-9A-Za-z]{40}$/),
      client_id: w.client.id,
      scopes: ['read', 'book'],
      expires_at: NOW.getTime() / 1000 + 900,
      revoked_at: null,
      created: NOW.getTime() / 1000,
    });
    const rows = await app.sql<Record<string, unknown>>('select * from client_session where id = ?', [res.body.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(sha256(res.body.token));
    expect(JSON.stringify(rows)).not.toContain(res.body.token);
    expect(JSON.stringify(rows)).not.toContain(res.body.token.slice(3));

    const read = await v3(app, `/client_sessions/${res.body.id}`, { key: w.reseller.key });
    expect(read.status, read.text).toBe(200);
    expect(read.body).not.toHaveProperty('token');
    expect(read.text).not.toContain(res.body.token);
    // Another reseller does not see it.
    expectError(await v3(app, `/client_sessions/${res.body.id}`, { key: foreign.reseller.key }), 404, 'resource_not_found');
  });

  it('over GraphQL › the same session, its token once; with an Idempotency-Key › 400, nothing written', async () => {
    const mutation = `mutation($input: CreateClientSessionInput!) { createClientSession(input: $input) {
      __typename ... on ClientSessionCreation { token clientSession { id scopes expiresAt revokedAt client { id } } }
      ... on Error { code } } }`;
    const input = { clientId: w.client.id, expiresIn: 60, scopes: ['ACCESS_CODE'] };
    const res = await gql(app, w.reseller.key, mutation, { input });
    expect(res.status, res.text).toBe(200);
    const created = res.body.data!.createClientSession;
    expect(created).toMatchObject({
      __typename: 'ClientSessionCreation',
      token: expect.stringMatching(/^cs_[0-9A-Za-z]{40}$/),
      clientSession: { scopes: ['READ', 'ACCESS_CODE'], expiresAt: '2026-03-02T08:01:00Z', revokedAt: null, client: { id: w.client.id } },
    });
    const [row] = await app.sql<{ token_hash: string }>('select token_hash from client_session where id = ?', [created.clientSession.id]);
    expect(row.token_hash).toBe(sha256(created.token));

    const before = await dbState(app);
    const keyed = await gql(app, w.reseller.key, mutation, { input }, { idempotencyKey: 'cs-once' });
    expect(keyed.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'Idempotency-Key' });
    await expectUnchanged(app, before);
  });

  it('with bad input › 400 validation_error naming it, nothing written', async () => {
    const before = await dbState(app);
    for (const [body, param] of [
      [{ client_id: w.client.id, expires_in: 0 }, 'expires_in'],
      [{ client_id: w.client.id, expires_in: 3601 }, 'expires_in'],
      [{ client_id: w.client.id, expires_in: 'x' }, 'expires_in'],
      [{ client_id: w.client.id, expires_in: 1.5 }, 'expires_in'],
      [{ client_id: w.client.id, scopes: ['book', 'admin'] }, 'scopes.1'],
      [{ client_id: w.client.id, scopes: 'book' }, 'scopes'],
      [{ expires_in: 60 }, 'client_id'],
      [{ client_id: w.client.id, extra: 1 }, 'extra'],
    ] as const) {
      expectValidationError(await v3(app, '/client_sessions', { key: w.reseller.key, body }), param);
    }
    const res = await gql(
      app,
      w.reseller.key,
      'mutation { createClientSession(input: { clientId: "x", expiresIn: 0 }) { __typename ... on InputError { code param } } }',
    );
    expect(res.body.data?.createClientSession).toEqual({ __typename: 'InputError', code: 'validation_error', param: 'expiresIn' });
    await expectUnchanged(app, before);
  });

  it("for another reseller's client or an unknown one › 404 resource_not_found, nothing written", async () => {
    const before = await dbState(app);
    for (const id of [foreign.client.id, 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ']) {
      expectError(
        await v3(app, '/client_sessions', { key: w.reseller.key, body: { client_id: id } }),
        404,
        'resource_not_found',
        'client_id',
      );
    }
    await expectUnchanged(app, before);
  });
});

describe('the token on REST', () => {
  it('every REST route, reseller and provider API › 403 permission_denied before anything runs', async () => {
    const { token } = await clientSession(app, w.reseller.key, w.client.id, { scopes: ['book', 'access_code'] });
    const before = await dbState(app);
    for (const [path, body] of [
      ['/passes', undefined],
      [`/clients/${w.client.id}`, undefined],
      ['/client_sessions', { client_id: w.client.id }],
      ['/bookings/class', { class_instance_id: 'ci_01JZZZZZZZZZZZZZZZZZZZZZZZ', client_id: w.client.id }],
      ['/access-codes', { client_id: w.client.id }],
    ] as const) {
      expectError(await v3(app, path, { key: token, body }), 403, 'permission_denied');
    }
    const provider = await call(app, '/v3/api/provider/bookings', { key: token });
    expect(provider.status, provider.text).toBe(403);
    expect(provider.body.error.code).toBe('permission_denied');
    await expectUnchanged(app, before);
  });
});

const CLIENT = 'query($id: ID!) { client(id: $id) { id email creditBalance bookings(first: 5) { edges { node { id client { id } } } } } }';
const ISSUED_PASS = 'query($id: ID!) { issuedPass(clientId: $id) { id passcode client { id } } }';

describe('what the token reads', () => {
  it('its own client, pass and the catalogue; another client of the reseller or of another reseller › permission_denied', async () => {
    const { token } = await clientSession(app, w.reseller.key, w.client.id);
    const own = await asClient(app, token, CLIENT, { id: w.client.id });
    expect(own.body.errors, own.text).toBeUndefined();
    expect(own.body.data!.client.id).toBe(w.client.id);
    const pass = await asClient(app, token, ISSUED_PASS, { id: w.client.id });
    expect(pass.body.data!.issuedPass).toMatchObject({ id: w.client.issuedPassId, client: { id: w.client.id } });
    const catalogue = await asClient(
      app,
      token,
      '{ passes(first: 5) { edges { node { id } } } providers(first: 5) { edges { node { id name } } } classCategories(first: 5) { edges { node { id } } } creditPackages(first: 5) { edges { node { id } } } }',
    );
    expect(catalogue.body.errors, catalogue.text).toBeUndefined();
    expect(catalogue.body.data!.providers.edges.length).toBeGreaterThan(0);

    for (const id of [sibling.id, foreign.client.id]) {
      for (const query of [CLIENT, ISSUED_PASS]) {
        const res = await asClient(app, token, query, { id });
        expect(res.body.data?.client ?? res.body.data?.issuedPass ?? null, res.text).toBeNull();
        expect(res.body.errors?.[0].extensions?.code, res.text).toBe('permission_denied');
      }
    }
  });

  it('currentClientSession › the token’s own session: its client, scopes and expiry; for an API key › null', async () => {
    const CURRENT = '{ currentClientSession { id scopes expiresAt revokedAt client { id } } }';
    const mine = await clientSession(app, w.reseller.key, w.client.id, { scopes: ['book'], expires_in: 600 });
    const theirs = await clientSession(app, w.reseller.key, sibling.id);
    const read = await asClient(app, mine.token, CURRENT);
    expect(read.body.errors, read.text).toBeUndefined();
    expect(read.body.data!.currentClientSession).toEqual({
      id: mine.id,
      scopes: ['READ', 'BOOK'],
      expiresAt: '2026-03-02T08:10:00Z',
      revokedAt: null,
      client: { id: w.client.id },
    });
    const other = await asClient(app, theirs.token, CURRENT);
    expect(other.body.data!.currentClientSession, other.text).toMatchObject({
      id: theirs.id,
      scopes: ['READ'],
      client: { id: sibling.id },
    });
    const byKey = await gql(app, w.reseller.key, CURRENT);
    expect(byKey.body.errors, byKey.text).toBeUndefined();
    expect(byKey.body.data!.currentClientSession).toBeNull();
  });

  it("another client's booking › null, as for an unknown id; its own › read", async () => {
    const instance = await instanceIn(app, w.gym.classId, 30);
    const theirs = await v3(app, '/bookings/class', {
      key: w.reseller.key,
      body: { class_instance_id: instance.id, client_id: sibling.id },
    });
    expect(theirs.status, theirs.text).toBe(201);
    const mine = await v3(app, '/bookings/class', {
      key: w.reseller.key,
      body: { class_instance_id: instance.id, client_id: w.client.id },
    });
    expect(mine.status, mine.text).toBe(201);
    const { token } = await clientSession(app, w.reseller.key, w.client.id);
    const query = 'query($id: ID!) { booking(id: $id) { id client { id } } }';
    expect((await asClient(app, token, query, { id: theirs.body.booking_id })).body).toEqual({ data: { booking: null } });
    expect((await asClient(app, token, query, { id: mine.body.booking_id })).body.data!.booking).toEqual({
      id: mine.body.booking_id,
      client: { id: w.client.id },
    });
  });

  it('node and nodes › its own client, pass and bookings and the catalogue; another client’s rows and an event › null', async () => {
    const instance = await instanceIn(app, w.gym.classId, 36);
    const book = async (clientId: string) => {
      const res = await v3(app, '/bookings/class', { key: w.reseller.key, body: { class_instance_id: instance.id, client_id: clientId } });
      expect(res.status, res.text).toBe(201);
      return res.body.booking_id as string;
    };
    const mine = await book(w.client.id);
    const theirs = await book(sibling.id);
    // An event of its own reseller, recorded by its own booking: not a type the token reads.
    const [event] = await app.sql<{ id: string }>('select id from event where reseller_id = ? order by id desc limit 1', [w.reseller.id]);
    expect(event).toBeDefined();
    const { token } = await clientSession(app, w.reseller.key, w.client.id);

    const readable = [w.client.id, w.client.issuedPassId, mine, w.gym.id, w.gym.classId, instance.id, w.passId, w.categoryId];
    const hidden = [sibling.id, sibling.issuedPassId, theirs, foreign.client.id, foreign.client.issuedPassId, event.id];
    const NODE = 'query($id: ID!) { node(id: $id) { __typename id } }';
    for (const id of readable) {
      const res = await asClient(app, token, NODE, { id });
      expect(res.body.errors, res.text).toBeUndefined();
      expect(res.body.data!.node, `${id}: ${res.text}`).toMatchObject({ id });
    }
    for (const id of hidden) expect((await asClient(app, token, NODE, { id })).body, id).toEqual({ data: { node: null } });
    const both = await asClient(app, token, 'query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: [...readable, ...hidden] });
    expect(both.body.errors, both.text).toBeUndefined();
    expect(both.body.data!.nodes).toEqual([...readable.map((id) => ({ id })), ...hidden.map(() => null)]);
    // The reseller's key reads every one of its own (the event included); another reseller's stay null.
    const byKey = await gql(app, w.reseller.key, 'query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: [...readable, ...hidden] });
    expect(byKey.body.data!.nodes.map((n: { id: string } | null) => n?.id ?? null)).toEqual([
      ...readable,
      sibling.id,
      sibling.issuedPassId,
      theirs,
      null,
      null,
      event.id,
    ]);
  });
});

/** A document selecting one root field, its arguments as variables (sent as none: the refusal comes first). */
function documentFor(operation: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const vars = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const selection = isLeafType(getNamedType(field.type)) ? '' : '{ __typename }';
  return `${operation}${vars ? `(${vars})` : ''} { ${field.name}${args ? `(${args})` : ''} ${selection} }`;
}

const ALLOWED: Record<string, string> = {
  client: 'read',
  issuedPass: 'read',
  booking: 'read',
  providers: 'read',
  provider: 'read',
  classes: 'read',
  class: 'read',
  classCategories: 'read',
  spaAvailability: 'read',
  passes: 'read',
  creditPackages: 'read',
  currentClientSession: 'read',
  bookClass: 'book',
  bookSpa: 'book',
  cancelBooking: 'book',
  createAccessCode: 'access_code',
  bookingStatusChanged: 'read',
  accessCodeRedeemed: 'read',
  node: 'read',
  nodes: 'read',
};

describe('root fields outside the token', () => {
  it('the fields a token may select are exactly the client’s own reads, bookings and access codes', () => {
    const schema = graphqlSchema();
    const marked: Record<string, string> = {};
    for (const type of [schema.getQueryType()!, schema.getMutationType()!, schema.getSubscriptionType()!]) {
      for (const field of Object.values(type.getFields()))
        if (field.extensions.clientSession) marked[field.name] = field.extensions.clientSession;
    }
    expect(marked).toEqual(ALLOWED);
  });

  it('every other query and mutation (webhooks, keys, lookups, hosted sessions, events, passes, credits, confirms, sessions) › top-level 403, nothing written', async () => {
    const { token } = await clientSession(app, w.reseller.key, w.client.id, { scopes: ['book', 'access_code'] });
    const schema = graphqlSchema();
    const before = await dbState(app);
    let refused = 0;
    for (const [operation, type] of [
      ['query', schema.getQueryType()!],
      ['mutation', schema.getMutationType()!],
    ] as const) {
      for (const field of Object.values(type.getFields())) {
        if (ALLOWED[field.name]) continue;
        const res = await asClient(app, token, documentFor(operation, field));
        expectGraphQLRefusal(res, 403, 'permission_denied');
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(25);
    // Beside an allowed field, a refused one refuses the whole operation.
    expectGraphQLRefusal(
      await asClient(app, token, `query($id: ID!) { client(id: $id) { id } events(first: 1) { edges { node { id } } } }`, {
        id: w.client.id,
      }),
      403,
      'permission_denied',
    );
    await expectUnchanged(app, before);
  });

  it('a field whose scope the token lacks (booking with a read-only token) › top-level 403, nothing written', async () => {
    const { token } = await clientSession(app, w.reseller.key, w.client.id);
    const instance = await instanceIn(app, w.gym.classId, 30);
    const before = await dbState(app);
    const res = await asClient(
      app,
      token,
      'mutation($i: ID!, $c: ID!) { bookClass(input: { classInstanceId: $i, clientId: $c }) { __typename } }',
      {
        i: instance.id,
        c: w.client.id,
      },
    );
    expectGraphQLRefusal(res, 403, 'permission_denied');
    expectGraphQLRefusal(
      await asClient(app, token, 'mutation($c: ID!) { createAccessCode(input: { clientId: $c }) { __typename } }', { c: w.client.id }),
      403,
      'permission_denied',
    );
    await expectUnchanged(app, before);
  });
});

const BOOK_CLASS = `mutation($i: ID!, $c: ID!) { bookClass(input: { classInstanceId: $i, clientId: $c }) {
  __typename ... on ClassBookingInitiation { booking { id status client { id } } } ... on Error { code } } }`;
const CANCEL = `mutation($id: ID!) { cancelBooking(input: { bookingId: $id }) {
  __typename ... on BookingPayload { booking { id status } } ... on Error { code } } }`;
const ACCESS_CODE = `mutation($c: ID, $p: String) { createAccessCode(input: { clientId: $c, passCode: $p }) {
  __typename ... on AccessCode { id client { id } } ... on Error { code } } }`;

describe('booking and access codes for itself', () => {
  it('books a class, cancels it and makes an access code for its own client', async () => {
    const { token } = await clientSession(app, w.reseller.key, w.client.id, { scopes: ['book', 'access_code'] });
    const instance = await instanceIn(app, w.gym.classId, 48);
    const booked = await asClient(app, token, BOOK_CLASS, { i: instance.id, c: w.client.id });
    expect(booked.body.data!.bookClass, booked.text).toMatchObject({
      __typename: 'ClassBookingInitiation',
      booking: { status: 'PENDING', client: { id: w.client.id } },
    });
    const id = booked.body.data!.bookClass.booking.id;
    const cancelled = await asClient(app, token, CANCEL, { id });
    expect(cancelled.body.data!.cancelBooking, cancelled.text).toEqual({
      __typename: 'BookingPayload',
      booking: { id, status: 'CANCELLED' },
    });
    const code = await asClient(app, token, ACCESS_CODE, { c: w.client.id });
    expect(code.body.data!.createAccessCode, code.text).toMatchObject({ __typename: 'AccessCode', client: { id: w.client.id } });
  });

  it('for another client (same reseller, another reseller, by id, pass or passcode) › permission_denied, nothing written', async () => {
    const { token } = await clientSession(app, w.reseller.key, w.client.id, { scopes: ['book', 'access_code'] });
    const instance = await instanceIn(app, w.gym.classId, 50);
    const [{ passcode }] = await app.sql<{ passcode: string }>('select passcode from issued_pass where id = ?', [sibling.issuedPassId]);
    const theirs = await v3(app, '/bookings/class', {
      key: w.reseller.key,
      body: { class_instance_id: instance.id, client_id: sibling.id },
    });
    expect(theirs.status, theirs.text).toBe(201);
    const before = await dbState(app);
    for (const c of [sibling.id, foreign.client.id, 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ']) {
      const res = await asClient(app, token, BOOK_CLASS, { i: instance.id, c });
      expect(res.body.data!.bookClass, res.text).toEqual({ __typename: 'PermissionError', code: 'permission_denied' });
      const code = await asClient(app, token, ACCESS_CODE, { c });
      expect(code.body.data!.createAccessCode, code.text).toEqual({ __typename: 'PermissionError', code: 'permission_denied' });
    }
    for (const p of [passcode, 'ZZZZZZZZ']) {
      const code = await asClient(app, token, ACCESS_CODE, { p });
      expect(code.body.data!.createAccessCode, code.text).toEqual({ __typename: 'PermissionError', code: 'permission_denied' });
    }
    const spa = `mutation($u: ID!) { bookSpa(input: { spaId: "${w.spa.id}", serviceIds: ["${w.spa.sauna}"], date: "2026-03-05", time: "10:00", userPassId: $u }) { __typename ... on Error { code } } }`;
    expect((await asClient(app, token, spa, { u: sibling.issuedPassId })).body.data!.bookSpa).toEqual({
      __typename: 'PermissionError',
      code: 'permission_denied',
    });
    // Another client's booking is not found for the token: nothing tells it from an unknown id.
    const cancel = await asClient(app, token, CANCEL, { id: theirs.body.booking_id });
    expect(cancel.body.data!.cancelBooking, cancel.text).toEqual({ __typename: 'NotFoundError', code: 'resource_not_found' });
    await expectUnchanged(app, before);
  });
});

describe('expiry and revocation', () => {
  it('past expires_at by the clock › 401 invalid_client_session', async () => {
    const { token } = await clientSession(app, w.reseller.key, w.client.id, { expires_in: 60 });
    const read = () => asClient(app, token, CLIENT, { id: w.client.id });
    expect((await read()).status).toBe(200);
    app.clock.advance(59_000);
    expect((await read()).body.data?.client?.id).toBe(w.client.id);
    app.clock.advance(1_000);
    expectGraphQLRefusal(await read(), 401, 'invalid_client_session');
  });

  it('revoked (REST DELETE or GraphQL) › 401 within 1 s; revoking again answers the same revoked_at', async () => {
    const a = await clientSession(app, w.reseller.key, w.client.id);
    const b = await clientSession(app, w.reseller.key, w.client.id);
    const read = (token: string) => asClient(app, token, CLIENT, { id: w.client.id });
    expect((await read(a.token)).status).toBe(200);
    expect((await read(b.token)).status).toBe(200);
    const revoked = await v3(app, `/client_sessions/${a.id}`, { key: w.reseller.key, method: 'DELETE' });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ object: 'client_session', id: a.id, revoked_at: NOW.getTime() / 1000 });
    app.clock.advance(5_000);
    const again = await v3(app, `/client_sessions/${a.id}`, { key: w.reseller.key, method: 'DELETE' });
    expect(again.body.revoked_at).toBe(NOW.getTime() / 1000);
    const gqlRevoke = await gql(
      app,
      w.reseller.key,
      'mutation($id: ID!) { revokeClientSession(input: { id: $id }) { __typename ... on ClientSession { id revokedAt } } }',
      { id: b.id },
    );
    expect(gqlRevoke.body.data!.revokeClientSession).toEqual({ __typename: 'ClientSession', id: b.id, revokedAt: '2026-03-02T08:00:05Z' });
    await new Promise((r) => setTimeout(r, 1000));
    expectGraphQLRefusal(await read(a.token), 401, 'invalid_client_session');
    expectGraphQLRefusal(await read(b.token), 401, 'invalid_client_session');
    // Another reseller cannot revoke it.
    expectError(await v3(app, `/client_sessions/${a.id}`, { key: foreign.reseller.key, method: 'DELETE' }), 404, 'resource_not_found');
  });

  it('sent with a Service-Lookup-Token › 403 permission_denied, before either is read', async () => {
    const { token } = await clientSession(app, w.reseller.key, w.client.id);
    const res = await gql(app, token, CLIENT, { id: w.client.id }, { headers: { 'Service-Lookup-Token': `lkpt_${'a'.repeat(40)}` } });
    expectGraphQLRefusal(res, 403, 'permission_denied');
  });

  it("its Idempotency-Keys are told apart from its reseller's: the same key from the reseller's server › 409", async () => {
    const { token } = await clientSession(app, w.reseller.key, w.client.id, { scopes: ['book'] });
    const instance = await instanceIn(app, w.gym.classId, 52);
    const variables = { i: instance.id, c: w.client.id };
    const first = await gql(app, token, BOOK_CLASS, variables, { idempotencyKey: 'cs-book-1' });
    expect(first.body.data!.bookClass.__typename, first.text).toBe('ClassBookingInitiation');
    const replay = await gql(app, token, BOOK_CLASS, variables, { idempotencyKey: 'cs-book-1' });
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    expect(replay.body.data).toEqual(first.body.data);
    const server = await gql(app, w.reseller.key, BOOK_CLASS, variables, { idempotencyKey: 'cs-book-1' });
    expect(server.body.errors?.[0].extensions?.code, server.text).toBe('idempotency_key_reused');
  });

  it('an unknown or malformed token › 401 invalid_client_session; a disabled reseller › 403 account_disabled', async () => {
    for (const token of [`cs_${'a'.repeat(40)}`, 'cs_short']) {
      expectGraphQLRefusal(await asClient(app, token, CLIENT, { id: w.client.id }), 401, 'invalid_client_session');
    }
    const other = await createBookingWorld(app);
    const { token } = await clientSession(app, other.reseller.key, other.client.id);
    await setResellerStatus(app.orm.em.fork(), other.reseller.id, 'DISABLED');
    await new Promise((r) => setTimeout(r, 600));
    expectGraphQLRefusal(await asClient(app, token, CLIENT, { id: other.client.id }), 403, 'account_disabled');
  });
});
