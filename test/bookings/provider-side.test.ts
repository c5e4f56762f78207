import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createProviderKey, listProviderKeys, revokeProviderKey } from '../../src/modules/providers/index.ts';
import { catalogue } from '../../src/platform/errors.ts';
import { openApiDocument } from '../../src/rest/openapi.ts';
import { providerRoutes, routes } from '../../src/rest/router.ts';
import { useApp } from '../support/app.ts';
import { expectError, expectGraphQLRefusal, expectUnchanged, expectValidationError, unix } from '../support/assertions.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { createReseller } from '../support/factories.ts';
import { call, gql, v3, type Call, type Reply } from '../support/http.ts';
import { checkDocumentedResponse } from '../contract/response-schemas.ts';

// The provider side (docs/partner-guide.md "Provider side"): provider API keys, and the provider API under
// /v3/api/provider where a provider lists its bookings, confirms them and checks clients in.
// Bookings are made over the reseller API; every provider answer is held to docs/openapi.json.

const PROVIDER = '/v3/api/provider';
const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
/** A second reseller whose clients book at the same spa: the provider sees both resellers' bookings. */
let w2: BookingWorld;
let spaKey: string;
let gymKey: string;

beforeAll(async () => {
  w = await createBookingWorld(app);
  w2 = await createBookingWorld(app);
  spaKey = (await keyFor(w.spa.id)).secret;
  gymKey = (await keyFor(w.gym.id)).secret;
});

const keyFor = (providerId: string, label?: string) => createProviderKey(app.orm.em.fork(), providerId, app.clock.now(), label);
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const idsOf = (res: Reply) => res.body.data.map((b: { id: string }) => b.id);

/** A call to the provider API, its answer held to the OpenAPI document like every v3() answer. */
async function provider(path: string, opts: Call = {}): Promise<Reply> {
  const reply = await call(app, `${PROVIDER}${path}`, opts);
  checkDocumentedResponse(opts.method ?? 'GET', `${PROVIDER}${path}`, reply);
  return reply;
}
const confirm = (id: string, key = gymKey) => provider(`/bookings/${id}/confirm`, { key, method: 'POST' });
const checkIn = (id: string, key = gymKey) => provider(`/bookings/${id}/check-in`, { key, method: 'POST' });

let booked = 0;
/** A new PENDING class booking at the world's gym, for a new client (a month's visits are few) on a new instance. */
async function classBooking(world: BookingWorld = w): Promise<string> {
  booked += 1;
  const client = await anotherClient(app, world, `client${booked}@example.com`);
  const instance = await instanceIn(app, world.gym.classId, 24 + booked);
  const res = await book.cls(app, world, { class_instance_id: instance.id, client_id: client.id });
  expect(res.status, res.text).toBe(201);
  expect(res.body.booking_id, res.text).toMatch(/^booking_/);
  return res.body.booking_id;
}

async function spaBooking(world: BookingWorld, date: string, time: string): Promise<string> {
  const res = await book.spa(app, world, { date, time, spa_id: w.spa.id, service_ids: [w.spa.sauna], client_id: world.client.id });
  expect(res.status, res.text).toBe(201);
  return res.body.booking_id;
}

/** Outbox rows after `afterId`, in the order they were written (outboxSince sorts its ids as text). */
const eventsSince = async (afterId: number) => (await outboxSince(app, afterId)).sort((a, b) => Number(a.id) - Number(b.id));
const statusOf = async (id: string, world: BookingWorld = w) => (await v3(app, `/bookings/${id}/status`, { key: world.reseller.key })).body;

describe('provider API keys', () => {
  it('the secret is shown once (pk_ + 40 alphanumerics) and only its SHA-256 is stored', async () => {
    const key = await keyFor(w.copaySpa.id, 'front desk');
    expect(key.id).toMatch(/^pkey_[0-9A-Z]{26}$/);
    expect(key.secret).toMatch(/^pk_[0-9A-Za-z]{40}$/);
    const [row] = await app.sql<Record<string, unknown>>('select * from provider_api_key where id = ?', [key.id]);
    expect(row).toEqual({
      id: key.id,
      provider_id: w.copaySpa.id,
      secret_hash: sha256(key.secret),
      last4: key.secret.slice(-4),
      label: 'front desk',
      created_at: expect.anything(),
      revoked_at: null,
    });
    // The secret (even without its prefix) is in no column of any table.
    const tables = await app.sql<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    );
    for (const { table_name } of tables) {
      const [{ n }] = await app.sql<{ n: string }>(`select count(*) as n from "${table_name}" t where strpos(t::text, ?) > 0`, [
        key.secret.slice(3),
      ]);
      expect(Number(n), table_name).toBe(0);
    }
    // Listing never shows it again.
    const listed = await listProviderKeys(app.orm.em.fork(), w.copaySpa.id);
    expect(listed).toEqual([
      { id: key.id, label: 'front desk', last4: key.secret.slice(-4), created_at: expect.any(String), revoked_at: null },
    ]);
    expect(JSON.stringify(listed)).not.toContain(key.secret.slice(3, -4));
  });

  it('an unknown provider or key › resource_not_found, nothing stored', async () => {
    const before = await app.sql('select count(*) as n from provider_api_key');
    await expect(keyFor('prov_01AAAAAAAAAAAAAAAAAAAAAAAA')).rejects.toMatchObject({ code: 'resource_not_found' });
    await expect(keyFor('not-an-id')).rejects.toMatchObject({ code: 'resource_not_found' });
    await expect(revokeProviderKey(app.orm.em.fork(), 'pkey_01AAAAAAAAAAAAAAAAAAAAAAAA', app.clock.now())).rejects.toMatchObject({
      code: 'resource_not_found',
    });
    expect(await app.sql('select count(*) as n from provider_api_key')).toEqual(before);
  });

  it('a revoked key › 401 invalid_api_key within 1 s, while the provider’s other key keeps working', async () => {
    const doomed = await keyFor(w.gym.id);
    expect((await provider('/bookings', { key: doomed.secret })).status).toBe(200);
    await revokeProviderKey(app.orm.em.fork(), doomed.id, app.clock.now());
    // A process may answer from its key cache for KEY_CACHE_MS (500 ms); the promise is "refused within 1 s".
    const deadline = performance.now() + 1000;
    let res = await provider('/bookings', { key: doomed.secret });
    while (res.status !== 401 && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      res = await provider('/bookings', { key: doomed.secret });
    }
    expectError(res, 401, 'invalid_api_key');
    expect((await provider('/bookings', { key: gymKey })).status).toBe(200);
    const [row] = await app.sql<{ revoked: boolean }>('select revoked_at is not null as revoked from provider_api_key where id = ?', [
      doomed.id,
    ]);
    expect(row.revoked).toBe(true);
  });

  it('no key, a malformed one or an unknown one › 401 invalid_api_key', async () => {
    expectError(await provider('/bookings'), 401, 'invalid_api_key');
    expectError(await provider('/bookings', { key: 'pk_short' }), 401, 'invalid_api_key');
    expectError(await provider('/bookings', { key: `pk_${'A'.repeat(40)}` }), 401, 'invalid_api_key');
    expectError(await provider('/bookings', { key: `sk_${'A'.repeat(40)}` }), 401, 'invalid_api_key');
  });
});

describe('GET /v3/api/provider/bookings', () => {
  const spaIds: string[] = [];
  let gymId: string;
  beforeAll(async () => {
    spaIds.push(await spaBooking(w, '2026-03-10', '10:00'));
    gymId = await classBooking();
    spaIds.push(await spaBooking(w2, '2026-03-10', '11:00'));
    spaIds.push(await spaBooking(w, '2026-03-10', '12:00'));
  });

  it("only the key's provider's bookings, every reseller's, newest first, in the list envelope", async () => {
    const res = await provider('/bookings', { key: spaKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', has_more: false, url: `${PROVIDER}/bookings` });
    expect(idsOf(res)).toEqual([...spaIds].reverse());
    expect(res.body.data[1]).toMatchObject({
      object: 'booking',
      status: 'PENDING',
      type: 'spa',
      provider_id: w.spa.id,
      client_id: w2.client.id,
    });
    // Its booking is the reseller's, field for field.
    expect(res.body.data[0]).toEqual((await v3(app, `/bookings/${spaIds[2]}`, { key: w.reseller.key })).body);
    const gym = await provider('/bookings', { key: gymKey });
    expect(idsOf(gym)).toContain(gymId);
    expect(idsOf(gym)).not.toEqual(expect.arrayContaining([spaIds[0]]));
  });

  it('status and type filters in any case; a bad one › 400 naming it', async () => {
    expect(idsOf(await provider('/bookings?status=pending&type=SPA', { key: spaKey }))).toEqual([...spaIds].reverse());
    expect(idsOf(await provider('/bookings?type=Class', { key: spaKey }))).toEqual([]);
    await confirm(spaIds[1], spaKey);
    expect(idsOf(await provider('/bookings?status=CONFIRMED', { key: spaKey }))).toEqual([spaIds[1]]);
    expect(idsOf(await provider('/bookings?status=Pending', { key: spaKey }))).toEqual([spaIds[2], spaIds[0]]);
    expectValidationError(await provider('/bookings?status=done', { key: spaKey }), 'status');
    expectValidationError(await provider('/bookings?type=gym', { key: spaKey }), 'type');
    expectValidationError(await provider('/bookings?colour=red', { key: spaKey }), 'colour');
  });

  it('pages with limit and starting_after; another provider’s booking is no cursor', async () => {
    const first = await provider('/bookings?limit=2', { key: spaKey });
    expect(idsOf(first)).toEqual([spaIds[2], spaIds[1]]);
    expect(first.body.has_more).toBe(true);
    const second = await provider(`/bookings?limit=2&starting_after=${spaIds[1]}`, { key: spaKey });
    expect(idsOf(second)).toEqual([spaIds[0]]);
    expect(second.body.has_more).toBe(false);
    expectError(await provider(`/bookings?starting_after=${gymId}`, { key: spaKey }), 400, 'invalid_cursor', 'starting_after');
  });

  it('GET /bookings/{id}: its own booking; another provider’s, an unknown or a malformed id › 404', async () => {
    const res = await provider(`/bookings/${spaIds[0]}`, { key: spaKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'booking', id: spaIds[0], provider_id: w.spa.id });
    for (const id of [gymId, 'booking_01AAAAAAAAAAAAAAAAAAAAAAAA', 'nope']) {
      expectError(await provider(`/bookings/${id}`, { key: spaKey }), 404, 'resource_not_found');
    }
  });
});

describe('confirm and check-in', () => {
  it('PENDING → CONFIRMED → COMPLETED: 200 with the booking, the history on the reseller side, one event each for the booking’s reseller', async () => {
    const id = await classBooking();
    const outbox = await lastOutboxId(app);
    app.clock.set(new Date('2026-03-02T09:00:00Z'));
    const confirmed = await confirm(id);
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toMatchObject({ object: 'booking', id, status: 'CONFIRMED', message: 'Booking confirmed by the provider' });
    expect(confirmed.body).toEqual((await v3(app, `/bookings/${id}`, { key: w.reseller.key })).body);

    app.clock.set(new Date('2026-03-03T10:00:00Z'));
    const completed = await checkIn(id);
    expect(completed.status, completed.text).toBe(200);
    expect(completed.body).toMatchObject({ id, status: 'COMPLETED', message: 'The client checked in' });

    expect(await statusOf(id)).toEqual({
      object: 'booking_status',
      booking_id: id,
      status: 'COMPLETED',
      history: [
        { status: 'PENDING', at: unix('2026-03-02T08:00:00Z') },
        { status: 'CONFIRMED', at: unix('2026-03-02T09:00:00Z') },
        { status: 'COMPLETED', at: unix('2026-03-03T10:00:00Z') },
      ],
    });
    const events = await eventsSince(outbox);
    expect(events.map((e) => [e.payload.type, e.reseller_id])).toEqual([
      ['booking.confirmed', w.reseller.id],
      ['booking.completed', w.reseller.id],
    ]);
    expect(events[0].payload.data.object).toEqual(confirmed.body);
    expect(events[1].payload.data.object).toEqual(completed.body);
    expect(events[0].payload).toMatchObject({
      object: 'event',
      request: { id: confirmed.headers.get('request-id'), idempotency_key: null },
    });
  });

  it("another reseller's booking at the same provider › its event goes to that reseller", async () => {
    const id = await spaBooking(w2, '2026-03-12', '10:00');
    const outbox = await lastOutboxId(app);
    expect((await confirm(id, spaKey)).status).toBe(200);
    const events = await eventsSince(outbox);
    expect(events.map((e) => [e.payload.type, e.reseller_id])).toEqual([['booking.confirmed', w2.reseller.id]]);
    expect((await statusOf(id, w2)).status).toBe('CONFIRMED');
  });

  it('a booking not in the status the change applies to › 409 booking_status_conflict, nothing changed', async () => {
    const pending = await classBooking();
    const confirmed = await classBooking();
    const completed = await classBooking();
    const cancelled = await classBooking();
    for (const id of [confirmed, completed]) expect((await confirm(id)).status).toBe(200);
    expect((await checkIn(completed)).status).toBe(200);
    expect((await v3(app, `/bookings/${cancelled}/cancel`, { key: w.reseller.key, method: 'POST' })).status).toBe(200);

    const before = await dbState(app);
    expectError(await checkIn(pending), 409, 'booking_status_conflict');
    expectError(await confirm(confirmed), 409, 'booking_status_conflict');
    for (const id of [completed, cancelled]) {
      expectError(await confirm(id), 409, 'booking_status_conflict');
      expectError(await checkIn(id), 409, 'booking_status_conflict');
    }
    await expectUnchanged(app, before);
    expect((await statusOf(pending)).history.map((h: { status: string }) => h.status)).toEqual(['PENDING']);
  });

  it("another provider's booking, an unknown or a malformed id › 404, nothing changed", async () => {
    const id = await classBooking();
    const before = await dbState(app);
    for (const target of [id, 'booking_01AAAAAAAAAAAAAAAAAAAAAAAA', 'nope']) {
      expectError(await confirm(target, spaKey), 404, 'resource_not_found');
      expectError(await checkIn(target, spaKey), 404, 'resource_not_found');
    }
    await expectUnchanged(app, before);
  });

  it('two confirms at once › one 200 and one 409, one event: the row lock orders them', async () => {
    const id = await classBooking();
    const outbox = await lastOutboxId(app);
    const answers = await Promise.all([confirm(id), confirm(id)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await eventsSince(outbox)).map((e) => e.payload.type)).toEqual(['booking.confirmed']);
    expect((await statusOf(id)).history.map((h: { status: string }) => h.status)).toEqual(['PENDING', 'CONFIRMED']);
  });

  it('Idempotency-Key is not taken: it is ignored and stores nothing; a repeat is 409', async () => {
    const id = await classBooking();
    const records = () => app.sql('select count(*) as n from idempotency_record');
    const before = await records();
    expect((await provider(`/bookings/${id}/confirm`, { key: gymKey, method: 'POST', idempotencyKey: 'once' })).status).toBe(200);
    const again = await provider(`/bookings/${id}/confirm`, { key: gymKey, method: 'POST', idempotencyKey: 'once' });
    expectError(again, 409, 'booking_status_conflict');
    expect(again.headers.get('x-idempotent-replayed')).toBeNull();
    expect(await records()).toEqual(before);
  });
});

describe('a key of the other API › 403 permission_denied, before anything runs', () => {
  it('a reseller key on the provider API, even a disabled reseller’s', async () => {
    const id = await classBooking();
    const disabled = await createReseller(app, { disabled: true });
    const before = await dbState(app);
    for (const key of [w.reseller.key, disabled.key]) {
      expectError(await provider('/bookings', { key }), 403, 'permission_denied');
      expectError(await provider(`/bookings/${id}`, { key }), 403, 'permission_denied');
      expectError(await confirm(id, key), 403, 'permission_denied');
    }
    await expectUnchanged(app, before);
    const status = await statusOf(id);
    expect(status.status, JSON.stringify(status)).toBe('PENDING');
  });

  it('a provider key on the reseller API', async () => {
    const id = await classBooking();
    const instance = await instanceIn(app, w.gym.classId, 200);
    const before = await dbState(app);
    expectError(await v3(app, '/passes', { key: gymKey }), 403, 'permission_denied');
    expectError(await v3(app, `/bookings/${id}`, { key: gymKey }), 403, 'permission_denied');
    expectError(await v3(app, `/bookings/${id}/cancel`, { key: gymKey, method: 'POST' }), 403, 'permission_denied');
    const booked = await v3(app, '/bookings/class', {
      key: gymKey,
      body: { class_instance_id: instance.id, client_id: w.client.id },
      idempotencyKey: 'pk-on-reseller',
    });
    expectError(booked, 403, 'permission_denied');
    await expectUnchanged(app, before);
    expect(await app.sql("select * from idempotency_record where key = 'pk-on-reseller'")).toEqual([]);
  });

  it('a provider key on GraphQL: a top-level 403, for queries and mutations alike', async () => {
    const before = await dbState(app);
    expectGraphQLRefusal(await gql(app, gymKey, '{ passes(first: 1) { edges { cursor } } }'), 403, 'permission_denied');
    const mutation = await gql(
      app,
      gymKey,
      `mutation($input: IssuePassInput!) { issuePass(input: $input) { __typename } }`,
      { input: { passId: w.passId, firstName: 'Eve', lastName: 'Mallory', email: 'eve@example.com' } },
      { idempotencyKey: 'pk-on-graphql' },
    );
    expectGraphQLRefusal(mutation, 403, 'permission_denied');
    await expectUnchanged(app, before);
  });
});

describe('the OpenAPI document', () => {
  type Json = Record<string, any>;
  const doc = openApiDocument(routes) as Json;

  it('documents every provider route under /v3/api/provider with its own tag and the provider key', () => {
    expect(doc.components.securitySchemes.providerKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    const provided = Object.keys(doc.paths).filter((p) => p.startsWith(`${PROVIDER}/`));
    expect(provided.sort()).toEqual([...new Set(providerRoutes.map((r) => `${PROVIDER}${r.path}`))].sort());
    for (const route of providerRoutes) {
      const op = doc.paths[`${PROVIDER}${route.path}`][route.method.toLowerCase()];
      expect(op, route.operationId).toMatchObject({
        operationId: route.operationId,
        tags: ['Provider bookings'],
        security: [{ providerKey: [] }],
      });
      expect(
        op.parameters.some((p: Json) => p.$ref === '#/components/parameters/IdempotencyKey'),
        route.operationId,
      ).toBe(false);
      for (const code of [...route.errors, 'permission_denied'] as (keyof typeof catalogue)[]) {
        expect(JSON.stringify(op.responses[catalogue[code].status]), `${route.operationId}: ${code}`).toContain(`\`${code}\``);
      }
      // A provider key has no account to disable.
      expect(JSON.stringify(op.responses['403'])).not.toContain('account_disabled');
    }
    const operationIds = [...routes, ...providerRoutes].map((r) => r.operationId);
    expect(new Set(operationIds).size).toBe(operationIds.length);
    // The reseller API keeps the document's default key.
    expect(doc.paths['/v3/api/business/reseller/passes'].get.security).toBeUndefined();
  });

  it('is served under the provider base too, equal to docs/openapi.json', async () => {
    const res = await call(app, `${PROVIDER}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')));
  });

  it('a path outside the provider API › 404, another method › 405 with Allow', async () => {
    expectError(await provider('/passes', { key: gymKey }), 404, 'resource_not_found');
    const wrong = await provider('/bookings', { key: gymKey, method: 'DELETE' });
    expectError(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('GET');
  });
});
