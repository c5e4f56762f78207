import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { madeCode, provider, providerKey, redeem } from '../support/access-codes.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { openStream, type SseStream } from '../support/sse.ts';
import { clientSession } from '../support/client-sessions.ts';
import { killStartedProcesses, Service } from '../ops/processes.ts';
import { newId } from '../../src/platform/ids.ts';

// Live booking status (docs/partner-guide.md "Live booking status"): GraphQL subscriptions over
// Server-Sent Events, fed from the recorded events through LISTEN/NOTIFY, so an event recorded by
// one server process reaches a subscriber of another. The in-process app and a `serve` child
// process share one database; bookings are confirmed and codes redeemed over the provider API.

const T = 120_000;
const app = useApp();
let w: BookingWorld;
let w2: BookingWorld;
let gymKey: string;
let other: { base: string; service: Service };

const STATUS = `subscription Status($after: ID) {
  bookingStatusChanged(after: $after) { eventId type occurredAt booking { id status client { id } } }
}`;
const REDEEMED = `subscription { accessCodeRedeemed { eventId occurredAt accessCodeId status redeemedAt client { id } provider { id } } }`;

beforeAll(async () => {
  w = await createBookingWorld(app);
  w2 = await createBookingWorld(app);
  gymKey = await providerKey(app, w.gym.id);
  const service = new Service(['serve'], { DATABASE_URL: app.databaseUrl, PORT: '0' });
  await service.waitForStdout(/"msg":"listening"/, 90_000);
  other = { base: service.logLines().find((l) => l.msg === 'listening')!.url as string, service };
}, T);

afterAll(async () => {
  await killStartedProcesses();
});

let booked = 0;
/** A new PENDING class booking at the world's gym, for a new client on a new instance (booking.created). */
async function classBooking(world: BookingWorld = w): Promise<{ id: string; clientId: string }> {
  booked += 1;
  const client = await anotherClient(app, world, `live${booked}@example.com`);
  const instance = await instanceIn(app, world.gym.classId, 24 + booked);
  const res = await book.cls(app, world, { class_instance_id: instance.id, client_id: client.id });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.booking_id, clientId: client.id };
}

/** The provider confirms it over the provider API of the in-process app (booking.confirmed). */
async function confirm(bookingId: string): Promise<void> {
  const res = await provider(app, `/bookings/${bookingId}/confirm`, { key: gymKey, method: 'POST' });
  expect(res.status, res.text).toBe(200);
}

const opened: SseStream[] = [];
async function subscribe(base: string, key: string | undefined, query = STATUS, opts: Parameters<typeof openStream>[3] = {}) {
  const stream = await openStream(base, key, query, opts);
  opened.push(stream);
  return stream;
}
afterAll(() => opened.forEach((s) => s.close()));

/** A new client of the world's reseller, and its client session's subscription opened on the other process. */
async function sessionSubscriber(): Promise<{ clientId: string; token: string; stream: SseStream }> {
  booked += 1;
  const client = await anotherClient(app, w, `cs-live${booked}@example.com`);
  const { token } = await clientSession(app, w.reseller.key, client.id);
  const stream = await subscribe(other.base, token);
  expect(stream.status).toBe(200);
  return { clientId: client.id, token, stream };
}

/** A class booking for `clientId` at the world's gym, on a new instance. */
async function bookFor(clientId: string): Promise<string> {
  const instance = await instanceIn(app, w.gym.classId, 24 + booked);
  const res = await book.cls(app, w, { class_instance_id: instance.id, client_id: clientId });
  expect(res.status, res.text).toBe(201);
  return res.body.booking_id;
}

describe('bookingStatusChanged', () => {
  it(
    'a booking confirmed on the provider side through one process reaches a subscription opened through another within 1 s',
    async () => {
      const { id, clientId } = await classBooking();
      const stream = await subscribe(other.base, w.reseller.key);
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const confirmed = performance.now();
      await confirm(id);
      const message = await stream.next(5000);
      expect(message.at - confirmed).toBeLessThan(1000);
      expect(message.event).toBe('next');
      const event = message.json.data.bookingStatusChanged;
      expect(event).toMatchObject({ type: 'booking.confirmed', booking: { id, status: 'CONFIRMED', client: { id: clientId } } });
      // The SSE id is the event's id, as GET /events lists it.
      expect(message.id).toBe(event.eventId);
      const listed = await fetch(`${app.baseUrl}/v3/api/business/reseller/events/${event.eventId}`, {
        headers: { Authorization: `Bearer ${w.reseller.key}` },
      });
      expect(((await listed.json()) as { type: string }).type).toBe('booking.confirmed');
    },
    T,
  );

  it("another reseller's subscriber sees nothing of it; its own events reach it", async () => {
    const mine = await subscribe(app.baseUrl, w.reseller.key);
    const theirs = await subscribe(other.base, w2.reseller.key);
    const { id } = await classBooking();
    expect((await mine.next()).json.data.bookingStatusChanged.booking.id).toBe(id);
    await confirm(id);
    expect((await mine.next()).json.data.bookingStatusChanged).toMatchObject({ type: 'booking.confirmed', booking: { id } });
    expect(await theirs.quietFor(300)).toEqual([]);
    const own = await classBooking(w2);
    const first = await theirs.next();
    expect(first.json.data.bookingStatusChanged).toMatchObject({ type: 'booking.created', booking: { id: own.id } });
  });

  it("a client session's subscriber gets only its own client's events, through another process; another client's event id is refused", async () => {
    const { clientId, token, stream } = await sessionSubscriber();
    const others = await classBooking(); // the same reseller, another client: never sent to this token
    const own = await bookFor(clientId);
    await confirm(others.id);
    await confirm(own);
    const created = (await stream.next()).json.data.bookingStatusChanged;
    expect(created).toMatchObject({ type: 'booking.created', booking: { id: own, client: { id: clientId } } });
    const confirmed = (await stream.next()).json.data.bookingStatusChanged;
    expect(confirmed).toMatchObject({ type: 'booking.confirmed', booking: { id: own } });
    expect(await stream.quietFor(300)).toEqual([]);
    const events = await fetch(`${app.baseUrl}/v3/api/business/reseller/events?limit=20`, {
      headers: { Authorization: `Bearer ${w.reseller.key}` },
    });
    const foreign = ((await events.json()) as { data: { id: string; data: { object: { id: string } } }[] }).data.find(
      (e) => e.data.object.id === others.id,
    )!;
    const refused = await subscribe(app.baseUrl, token, STATUS, { lastEventId: foreign.id });
    expect(refused.status).toBe(400);
  });

  it("an event recorded as the release before live events records it (no client_id) › still reaches its client's session", async () => {
    const { clientId, stream } = await sessionSubscriber();
    const own = await bookFor(clientId);
    expect((await stream.next()).json.data.bookingStatusChanged).toMatchObject({ type: 'booking.created' });
    // An instance still on the earlier release records the confirm: its INSERT never names client_id.
    const [created] = await app.sql<{ payload: { data: unknown } }>(
      "select payload from event where type = 'booking.created' and client_id = ?",
      [clientId],
    );
    const id = newId('event');
    const payload = { ...created.payload, id, type: 'booking.confirmed' };
    await app.sql('insert into event (id, reseller_id, type, payload, created_at) values (?, ?, ?, ?::json, now())', [
      id,
      w.reseller.id,
      'booking.confirmed',
      JSON.stringify(payload),
    ]);
    expect(await app.sql('select client_id from event where id = ?', [id])).toEqual([{ client_id: clientId }]);
    expect((await stream.next()).json.data.bookingStatusChanged).toMatchObject({
      eventId: id,
      type: 'booking.confirmed',
      booking: { id: own, client: { id: clientId } },
    });
  });

  it('a dropped connection resumed with Last-Event-ID gets the events it missed exactly once, in order, then live ones', async () => {
    const stream = await subscribe(other.base, w.reseller.key);
    const first = await classBooking();
    const seen = await stream.next();
    expect(seen.json.data.bookingStatusChanged.booking.id).toBe(first.id);
    stream.close();
    // Missed while disconnected: a confirm, a booking and its confirm.
    await confirm(first.id);
    const second = await classBooking();
    await confirm(second.id);
    const resumed = await subscribe(app.baseUrl, w.reseller.key, STATUS, { lastEventId: seen.id });
    const missed = [await resumed.next(), await resumed.next(), await resumed.next()].map((m) => {
      const e = m.json.data.bookingStatusChanged;
      expect(m.id).toBe(e.eventId);
      return [e.type, e.booking.id];
    });
    expect(missed).toEqual([
      ['booking.confirmed', first.id],
      ['booking.created', second.id],
      ['booking.confirmed', second.id],
    ]);
    const third = await classBooking();
    const live = await resumed.next();
    expect([live.json.data.bookingStatusChanged.type, live.json.data.bookingStatusChanged.booking.id]).toEqual([
      'booking.created',
      third.id,
    ]);
    expect(await resumed.quietFor(200)).toEqual([]);
    // The `after` argument does the same for a client that keeps the id itself; the header wins over it.
    const byArgument = await subscribe(other.base, w.reseller.key, STATUS, { variables: { after: seen.id } });
    const replayed = [];
    for (let i = 0; i < 4; i++) replayed.push((await byArgument.next()).id);
    expect(replayed).toEqual(resumed.messages.map((m) => m.id));
  });

  it('an unknown or foreign Last-Event-ID or after is 400 validation_error naming it; no stream opens', async () => {
    const foreign = await classBooking(w2);
    const [event] = (
      await (
        await fetch(`${app.baseUrl}/v3/api/business/reseller/events?limit=1`, { headers: { Authorization: `Bearer ${w2.reseller.key}` } })
      ).json()
    ).data;
    expect(event.data.object.id).toBe(foreign.id);
    for (const [opts, param] of [
      [{ lastEventId: event.id }, 'Last-Event-ID'],
      [{ lastEventId: 'evt_nope' }, 'Last-Event-ID'],
      [{ variables: { after: event.id } }, 'after'],
    ] as const) {
      const refused = await subscribe(app.baseUrl, w.reseller.key, STATUS, opts);
      expect(refused.status, JSON.stringify(refused.messages)).toBe(400);
      const body = refused.messages[0]?.json ?? JSON.parse(refused.text!);
      expect(body.errors[0].extensions).toMatchObject({ code: 'validation_error', param });
    }
  });

  it('opens over GET too, as EventSource sends it', async () => {
    const abort = new AbortController();
    const res = await fetch(`${other.base}/graphql?query=${encodeURIComponent(STATUS)}`, {
      signal: abort.signal,
      headers: { Accept: 'text/event-stream', Authorization: `Bearer ${w.reseller.key}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { value } = await res.body!.getReader().read();
    expect(new TextDecoder().decode(value)).toBe(':\n\n');
    abort.abort();
  });

  it('unauthenticated is 401 invalid_api_key before any stream', async () => {
    const refused = await subscribe(app.baseUrl, undefined);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text!).errors[0].extensions.code).toBe('invalid_api_key');
    const badKey = await subscribe(other.base, 'sk_notakey');
    expect(badKey.status).toBe(401);
  });
});

describe('accessCodeRedeemed', () => {
  it('a provider redeem through one process reaches the subscriber of another', async () => {
    const stream = await subscribe(other.base, w.reseller.key, REDEEMED);
    const client = await anotherClient(app, w, `redeem${booked++}@example.com`);
    const made = await madeCode(app, w, { client_id: client.id, provider_id: w.gym.id });
    const res = await redeem(app, gymKey, made.code);
    expect(res.status, res.text).toBe(200);
    const message = await stream.next();
    expect(message.json.data.accessCodeRedeemed).toMatchObject({
      accessCodeId: made.id,
      status: 'REDEEMED',
      client: { id: client.id },
      provider: { id: w.gym.id },
    });
    expect(message.id).toBe(message.json.data.accessCodeRedeemed.eventId);
    expect(message.json.data.accessCodeRedeemed.redeemedAt).toEqual(expect.any(String));
  });
});

describe('under concurrent commits on two processes', () => {
  it(
    'a stream, dropped in the middle and resumed, gets every event exactly once in commit order',
    async () => {
      const first = await subscribe(app.baseUrl, w.reseller.key);
      const pending = await Promise.all(Array.from({ length: 8 }, () => classBooking()));
      // Confirms through both processes at once, while more bookings are made.
      const confirmOn = (base: string, id: string) =>
        fetch(`${base}/v3/api/provider/bookings/${id}/confirm`, { method: 'POST', headers: { Authorization: `Bearer ${gymKey}` } });
      const [confirms, more] = await Promise.all([
        Promise.all(pending.map((b, i) => confirmOn(i % 2 ? other.base : app.baseUrl, b.id))),
        Promise.all(Array.from({ length: 4 }, () => classBooking())),
      ]);
      expect(confirms.map((r) => r.status)).toEqual(pending.map(() => 200));
      const expected = 8 + 8 + 4;
      const got: string[] = [];
      for (let i = 0; i < 7; i++) got.push((await first.next()).id!);
      first.close();
      const resumed = await subscribe(other.base, w.reseller.key, STATUS, { lastEventId: got.at(-1) });
      while (got.length < expected) got.push((await resumed.next()).id!);
      expect(await resumed.quietFor(300)).toEqual([]);
      // The table's order of these events: by (txid, seq), what GET /events does not show but commits decided.
      const ids = [...pending, ...more].map((b) => b.id);
      const rows = await app.sql<{ id: string }>(
        `select id from event where reseller_id = ? and type like 'booking.%' and payload->'data'->'object'->>'id' in (select jsonb_array_elements_text(?::jsonb))
        order by txid, seq`,
        [w.reseller.id, JSON.stringify(ids)],
      );
      expect(got).toEqual(rows.map((r) => r.id));
      expect(new Set(got).size).toBe(expected);
    },
    T,
  );
});

describe('a graceful stop', () => {
  it(
    'ends every open stream with its complete message, and the process exits 0',
    async () => {
      const stream = await subscribe(other.base, w.reseller.key);
      other.service.child.kill('SIGTERM');
      await stream.ended;
      expect(stream.messages.at(-1)?.event).toBe('complete');
      expect((await other.service.exited).code).toBe(0);
    },
    T,
  );
});
