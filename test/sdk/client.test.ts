import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { anotherClient, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import {
  BookClass,
  CancelBooking,
  createClient,
  CreateAccessCode,
  GatewayError,
  GetClient,
  GetCurrentSession,
  GetIssuedPass,
  ListBookings,
  ListClasses,
  ListProviders,
} from '../../packages/sdk/src/index.ts';
import { clientSession } from '../support/client-sessions.ts';
import { v3 } from '../support/http.ts';
import manifest from '../../packages/sdk/src/gql/persisted-documents.json' with { type: 'json' };

// The SDK's client against the real server: the wire format with the reseller's API key (the client
// sends any bearer the same way), then as a frontend runs it, with a client-session token and the
// SDK's manifest registered as the reseller's trusted documents.
const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

/** What the client put on the wire, recorded on the way to the real fetch. */
interface Sent {
  headers: Record<string, string>;
  body: Record<string, unknown>;
  requestId: string | null;
}
function clientWith(token: string, opts: { persisted?: boolean } = {}) {
  const sent: Sent[] = [];
  const client = createClient({
    url: `${app.baseUrl}/graphql`,
    getToken: async () => token,
    persisted: opts.persisted,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      sent.push({
        headers: init?.headers as Record<string, string>,
        body: JSON.parse(String(init?.body)),
        requestId: response.headers.get('request-id'),
      });
      return response;
    },
  });
  return { client, sent };
}

describe('the SDK client', () => {
  it('client(id) › the typed data, sent as a JSON POST with the bearer token', async () => {
    const { client, sent } = clientWith(w.reseller.key);
    const { client: found } = await client.request(GetClient, { id: w.client.id });
    expect(found).toMatchObject({ id: w.client.id, credits: { balance: expect.any(Number), currency: 'EUR' } });
    expect(sent[0].headers).toMatchObject({ Authorization: `Bearer ${w.reseller.key}`, 'Content-Type': 'application/json' });
    expect(sent[0].body).toEqual({ query: String(GetClient), variables: { id: w.client.id } });
  });

  it('bookClass › books once for an Idempotency-Key, a second booking is a ConflictError, cancel refunds', async () => {
    const { client } = clientWith(w.reseller.key);
    const instance = await instanceIn(app, w.gym.classId, 48);
    const input = { classInstanceId: instance.id, clientId: w.client.id };

    const first = await client.request(BookClass, { input }, { idempotencyKey: 'sdk-book-1' });
    expect(first.bookClass).toMatchObject({
      __typename: 'ClassBookingInitiation',
      status: 'PENDING',
      booking: { id: expect.any(String) },
    });
    const booked = first.bookClass.__typename === 'ClassBookingInitiation' ? first.bookClass.booking : null;
    // The retry a frontend sends when the first answer was lost: the same key, the same booking.
    const replay = await client.request(BookClass, { input }, { idempotencyKey: 'sdk-book-1' });
    expect(replay).toEqual(first);
    expect(await app.sql('select id from booking where client_id = ?', [w.client.id])).toEqual([{ id: booked!.id }]);

    const again = await client.request(BookClass, { input });
    expect(again.bookClass).toMatchObject({ __typename: 'ConflictError', code: 'already_booked', message: expect.any(String) });

    const { client: withBookings } = await client.request(ListBookings, { clientId: w.client.id, first: 10 });
    expect(withBookings!.bookings.edges.map((e) => [e.node.id, e.node.provider.id])).toEqual([[booked!.id, w.gym.id]]);

    const { cancelBooking } = await client.request(CancelBooking, { input: { bookingId: booked!.id } });
    expect(cancelBooking).toMatchObject({ __typename: 'BookingPayload', booking: { id: booked!.id, status: 'CANCELLED' } });
  });

  it('a bad token › throws a GatewayError invalid_api_key with HTTP 401 and the request id', async () => {
    const { client, sent } = clientWith('sk_test_not_a_key_at_all');
    const error = await client.request(GetClient, { id: w.client.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'invalid_api_key', type: 'authentication_error', status: 401, requestId: sent[0].requestId });
    expect(sent[0].requestId).toMatch(/^req_/);
    // One request: the client retries nothing by itself.
    expect(sent).toHaveLength(1);
  });

  it('a bad cursor › throws a GatewayError invalid_cursor naming `after` (HTTP 200, data null)', async () => {
    const { client } = clientWith(w.reseller.key);
    const error = await client.request(ListBookings, { clientId: w.client.id, after: 'not-a-cursor' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'invalid_cursor', param: 'after', status: 200 });
  });

  it('a wrong URL › throws a GatewayError from the REST envelope the gateway answers outside GraphQL', async () => {
    const client = createClient({ url: `${app.baseUrl}/graphql/nope`, getToken: () => w.reseller.key });
    const error = await client.request(GetClient, { id: w.client.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({
      code: 'resource_not_found',
      type: 'invalid_request_error',
      status: 404,
      requestId: expect.stringMatching(/^req_/),
    });
  });

  it('a client-session token, persisted, the manifest registered and trusted_documents_only on › every read and write of the SDK runs by hash', async () => {
    const registered = await v3(app, '/trusted_documents', { key: w.reseller.key, body: { documents: Object.values(manifest) } });
    expect(registered.status, registered.text).toBe(200);
    expect(registered.body.registered).toBe(Object.keys(manifest).length);
    expect((await v3(app, '/settings/trusted_documents', { key: w.reseller.key, body: { trusted_documents_only: true } })).status).toBe(
      200,
    );
    const { token } = await clientSession(app, w.reseller.key, w.client.id, { scopes: ['book', 'access_code'] });
    const { client, sent } = clientWith(token, { persisted: true });
    const id = w.client.id;

    const { currentClientSession } = await client.request(GetCurrentSession, {});
    expect(currentClientSession).toMatchObject({ scopes: ['READ', 'BOOK', 'ACCESS_CODE'], client: { id } });
    expect((await client.request(GetClient, { id })).client?.id).toBe(id);
    expect((await client.request(GetIssuedPass, { clientId: id })).issuedPass?.status).toBe('ACTIVE');
    const near = { lat: 52.52, lon: 13.405, radiusKm: 50 };
    expect((await client.request(ListProviders, { near, first: 5 })).providers.edges.length).toBeGreaterThan(0);
    expect((await client.request(ListClasses, { near, first: 5 })).classes.edges.length).toBeGreaterThan(0);
    const instance = await instanceIn(app, w.gym.classId, 72);
    const booked = await client.request(
      BookClass,
      { input: { classInstanceId: instance.id, clientId: id } },
      { idempotencyKey: 'sdk-cs-1' },
    );
    expect(booked.bookClass.__typename).toBe('ClassBookingInitiation');
    const bookingId = booked.bookClass.__typename === 'ClassBookingInitiation' ? (booked.bookClass.booking?.id ?? '') : '';
    const listed = await client.request(ListBookings, { clientId: id, first: 10 });
    expect(listed.client?.bookings.edges.map((e) => e.node.id)).toContain(bookingId);
    const cancelled = await client.request(CancelBooking, { input: { bookingId } }, { idempotencyKey: 'sdk-cs-2' });
    expect(cancelled.cancelBooking.__typename).toBe('BookingPayload');
    const code = await client.request(CreateAccessCode, { input: { clientId: id, providerId: w.gym.id } }, { idempotencyKey: 'sdk-cs-3' });
    expect(code.createAccessCode.__typename).toBe('AccessCode');

    // Only hashes went on the wire, each one the manifest lists.
    for (const { body } of sent) {
      expect(body.query).toBeUndefined();
      expect((manifest as Record<string, string>)[body.documentId as string]).toBeDefined();
    }
    // And another client of the same reseller stays out of the token's reach.
    const other = await anotherClient(app, w, 'sdk-other@example.com');
    await expect(client.request(GetClient, { id: other.id })).rejects.toMatchObject({ code: 'permission_denied' });
  });
});
