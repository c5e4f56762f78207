import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// `client(id:)` asking for its bookings reads the client and the first page in one statement
// (src/graphql/read-along.ts, docs/adr/0033-connection-pages-read-with-their-parent.md). It must
// answer what the loaders answer — node(id:) reads the same client through them, never along —
// and leave to them every case it does not read.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
let idle: { id: string };
let stranger: TestReseller;

const BOOKINGS = `bookings(first: $first, after: $after, status: $status, type: $type) {
  edges { cursor node { id status type message date time scheduledFor serviceName providerName createdAt classInstanceId serviceIds
    visitsDeducted creditsCharged copayAmount currency refund { policy creditsRefunded visitsRestored copayRefunded currency }
    statusHistory { status at } } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }`;
const BY_FIELD = `query($id: ID!, $first: Int, $after: String, $status: String, $type: String) {
  client(id: $id) { id firstName ${BOOKINGS} } }`;
const BY_NODE = `query($id: ID!, $first: Int, $after: String, $status: String, $type: String) {
  client: node(id: $id) { ... on Client { id firstName ${BOOKINGS} } } }`;

/** The reply to `query` and the statements it sent (the API key's look-up left out: test/support/app.ts). */
async function counted(query: string, variables: Record<string, unknown>, key = w.reseller.key) {
  app.queries!.reset();
  const reply = await gql(app, key, query, variables);
  return { status: reply.status, body: reply.body, statements: app.queries!.ownStatements.length };
}

/** Each error's place and catalogue code. */
const codes = (body: { errors?: { path?: unknown; extensions?: Record<string, unknown> }[] }) =>
  body.errors?.map((e) => [e.path, e.extensions?.code, e.extensions?.param]);

beforeAll(async () => {
  w = await createBookingWorld(app, { balance: 1_000_000 });
  // Six class bookings and one spa appointment, so pages, filters and cursors have something to tell apart.
  for (let i = 0; i < 6; i++) {
    const instance = await instanceIn(app, w.gym.classId, 30 + i);
    expect((await book.cls(app, w, { class_instance_id: instance.id, client_id: w.client.id })).status).toBe(201);
  }
  const spa = await book.spa(app, w, {
    spa_id: w.spa.id,
    service_ids: [w.spa.sauna],
    client_id: w.client.id,
    date: '2026-03-04',
    time: '10:00',
  });
  expect(spa.status, spa.text).toBe(201);
  const cancelled = await v3(app, `/bookings/${spa.body.booking_id}/cancel`, { key: w.reseller.key, body: {} });
  expect(cancelled.status, cancelled.text).toBe(200);
  idle = await anotherClient(app, w, 'idle@example.com');
  stranger = await createReseller(app);
});

describe('client(id:) with its bookings', () => {
  it.each([
    { first: 1 },
    { first: 3 },
    { first: 50 },
    { first: 2, type: 'class' },
    { first: 6, type: 'class' }, // exactly a page: no next one
    { first: 5, status: 'cancelled' },
    { first: 5, type: 'SPA', status: 'PENDING' },
  ])('answers as the loaders do, in one statement: %o', async (variables) => {
    const along = await counted(BY_FIELD, { id: w.client.id, ...variables });
    const loaders = await counted(BY_NODE, { id: w.client.id, ...variables });
    expect(along.status).toBe(200);
    expect(along.body.errors).toBeUndefined();
    expect(along.body).toEqual(loaders.body);
    expect(along.statements).toBe(1);
    expect(loaders.statements).toBe(2);
  });

  it('with a cursor pages as the loaders do (read by them)', async () => {
    const first = await counted(BY_FIELD, { id: w.client.id, first: 2 });
    const after = first.body.data.client.bookings.pageInfo.endCursor;
    const along = await counted(BY_FIELD, { id: w.client.id, first: 2, after });
    const loaders = await counted(BY_NODE, { id: w.client.id, first: 2, after });
    expect(along.body).toEqual(loaders.body);
    expect(along.body.data.client.bookings.edges).toHaveLength(2);
    expect(along.body.data.client.bookings.pageInfo.hasPreviousPage).toBe(true);
  });

  it('asked twice with other arguments, or under a directive, is read by the loaders; the answers are the same', async () => {
    const twice = `query($id: ID!) { client(id: $id) { id
      one: bookings(first: 1) { edges { node { id } } } three: bookings(first: 3, type: "class") { edges { node { id } } } } }`;
    const along = await counted(twice, { id: w.client.id });
    const loaders = await counted(twice.replace('client(id: $id) {', 'client: node(id: $id) { ... on Client {') + ' }', {
      id: w.client.id,
    });
    expect(along.body.errors).toBeUndefined();
    expect(along.body.data.client.one.edges).toHaveLength(1);
    expect(along.body.data.client.three.edges).toHaveLength(3);
    expect(along.body).toEqual(loaders.body);
    const skipped = await counted(
      'query($id: ID!, $with: Boolean!) { client(id: $id) { id bookings(first: 2) @include(if: $with) { edges { node { id } } } } }',
      { id: w.client.id, with: true },
    );
    const firstTwo = (await counted(BY_NODE, { id: w.client.id, first: 2 })).body.data.client.bookings.edges.map(
      (e: { node: { id: string } }) => ({ node: { id: e.node.id } }),
    );
    expect(skipped.body.data.client.bookings.edges).toEqual(firstTwo);
    expect(skipped.statements).toBe(2);
  });

  it('through a fragment reads along too', async () => {
    const query = `query($id: ID!) { client(id: $id) { ...Screen } } fragment Screen on Client { id bookings(first: 2) { edges { node { id } } } }`;
    const reply = await counted(query, { id: w.client.id });
    expect(reply.body.data.client.bookings.edges).toHaveLength(2);
    expect(reply.statements).toBe(1);
  });

  it('of a client without bookings answers the client and an empty page', async () => {
    const along = await counted(BY_FIELD, { id: idle.id, first: 10 });
    expect(along.body).toEqual((await counted(BY_NODE, { id: idle.id, first: 10 })).body);
    expect(along.body.data.client).toMatchObject({ id: idle.id, bookings: { edges: [], pageInfo: { hasNextPage: false } } });
    expect(along.statements).toBe(1);
  });

  it("is null for another reseller's client and an unknown id, as before", async () => {
    for (const [id, key] of [
      [w.client.id, stranger.key],
      ['client_01J0000000000000000000000X', w.reseller.key],
      ['not-an-id', w.reseller.key],
    ]) {
      const reply = await counted(BY_FIELD, { id, first: 5 }, key);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ data: { client: null } });
    }
  });

  it('with wrong arguments answers the loaders’ errors', async () => {
    for (const [variables, param] of [
      [{ first: 0 }, 'first'],
      [{ first: 2, status: 'SLEEPING' }, 'status'],
      [{ first: 2, type: 'yoga' }, 'type'],
      [{ first: 2, after: 'booking_01J0000000000000000000000X' }, 'after'],
    ] as const) {
      const along = await counted(BY_FIELD, { id: w.client.id, ...variables });
      const loaders = await counted(BY_NODE, { id: w.client.id, ...variables });
      expect(along.body.errors?.[0]?.extensions?.param, JSON.stringify(along.body)).toBe(param);
      // The same data and the same errors (each error's request id differs).
      expect(along.body.data).toEqual(loaders.body.data);
      expect(codes(along.body)).toEqual(codes(loaders.body));
    }
  });
});
