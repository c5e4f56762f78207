import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { madeCode, provider, providerKey, redeem } from '../support/access-codes.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { clientSession } from '../support/client-sessions.ts';
import { v3 } from '../support/http.ts';
import { killStartedProcesses, Service } from '../ops/processes.ts';
import {
  createClient,
  GatewayError,
  WatchAccessCodeRedeemed,
  WatchBookingStatus,
  type Client,
  type ResultOf,
  type SubscriptionEvent,
} from '../../packages/sdk/src/index.ts';
import manifest from '../../packages/sdk/src/gql/persisted-documents.json' with { type: 'json' };

// The SDK's `subscribe` against the real server (docs/partner-guide.md "Live booking status"), as a
// frontend runs it with a client-session token: typed events over SSE, resumed from an event id,
// ended by a signal, a refused token thrown as GatewayError. The fetch handed to the client is the
// real one; it only records each connection and tells the test when a stream has opened (its first
// bytes, sent once the subscription is registered: events after that reach it), or cuts a stream
// to drop the connection as a network would.
const T = 60_000;
const app = useApp();
let w: BookingWorld;
let gymKey: string;
beforeAll(async () => {
  w = await createBookingWorld(app);
  gymKey = await providerKey(app, w.gym.id);
}, T);
afterAll(() => killStartedProcesses());

type Status = SubscriptionEvent<ResultOf<typeof WatchBookingStatus>>;

interface Connection {
  headers: Record<string, string>;
  body: Record<string, unknown>;
  status: number;
  /** Resolves with the stream's first bytes. */
  opened: Promise<void>;
}

/**
 * A client whose fetch records each connection; `cutAfter` drops the first stream once it carried that many `event: next`;
 * `baseFor` sends the n-th connection (from 0) to another server, as a load balancer in front of several would.
 */
function clientFor(token: string, opts: { persisted?: boolean; cutAfter?: number; baseFor?: (connection: number) => string } = {}) {
  const connections: Connection[] = [];
  const client: Client = createClient({
    url: `${app.baseUrl}/graphql`,
    getToken: () => token,
    persisted: opts.persisted,
    fetch: async (input, init) => {
      const target = opts.baseFor ? `${opts.baseFor(connections.length)}/graphql` : input;
      const response = await fetch(target, init);
      let opened!: () => void;
      const connection: Connection = {
        headers: init?.headers as Record<string, string>,
        body: JSON.parse(String(init?.body)),
        status: response.status,
        opened: new Promise<void>((resolve) => (opened = resolve)),
      };
      connections.push(connection);
      if (!response.body) return response;
      const cut = connections.length === 1 ? opts.cutAfter : undefined;
      let nexts = 0;
      let cutting = false;
      const decoder = new TextDecoder();
      const body = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            opened();
            if (cutting) return;
            controller.enqueue(chunk);
            nexts += decoder.decode(chunk, { stream: true }).split('event: next').length - 1;
            if (cut === undefined || nexts < cut) return;
            // Erroring drops what is queued: cut once the client has read the event, as a network would after it.
            cutting = true;
            setTimeout(() => controller.error(new TypeError('terminated')), 100);
          },
        }),
      );
      return new Response(body, { status: response.status, headers: response.headers });
    },
  });
  return { client, connections };
}

/** Starts iterating and waits until the stream is open; `take(n)` then reads the next n events. */
async function watch(client: Client, connections: Connection[], options: Parameters<Client['subscribe']>[2] = {}) {
  const iterator = client.subscribe(WatchBookingStatus, {}, options)[Symbol.asyncIterator]();
  const pending: Promise<IteratorResult<Status>>[] = [iterator.next()];
  const before = connections.length;
  while (connections.length === before) await new Promise((r) => setTimeout(r, 10));
  await connections.at(-1)!.opened;
  return {
    iterator,
    async take(n: number): Promise<Status[]> {
      const got: Status[] = [];
      while (got.length < n) {
        const result = await (pending.shift() ?? iterator.next());
        if (result.done) throw new Error(`the subscription ended after ${got.length} of ${n} events`);
        got.push(result.value);
      }
      return got;
    },
  };
}

let clients = 0;
/** A client of the world with a session token, and a class booking made for it afterwards (booking.created). */
async function sessionClient() {
  clients += 1;
  const mine = await anotherClient(app, w, `sdk-live${clients}@example.com`);
  const { token } = await clientSession(app, w.reseller.key, mine.id);
  const bookClass = async () => {
    clients += 1;
    const instance = await instanceIn(app, w.gym.classId, 24 + clients);
    const res = await book.cls(app, w, { class_instance_id: instance.id, client_id: mine.id });
    expect(res.status, res.text).toBe(201);
    return res.body.booking_id as string;
  };
  return { clientId: mine.id, token, bookClass };
}

async function confirm(bookingId: string): Promise<void> {
  const res = await provider(app, `/bookings/${bookingId}/confirm`, { key: gymKey, method: 'POST' });
  expect(res.status, res.text).toBe(200);
}

describe('client.subscribe', () => {
  it(
    "WatchBookingStatus › the client's class booking arrives as booking.created, typed, its eventId the SSE id; a later subscription from that id gets the later events only",
    async () => {
      const me = await sessionClient();
      const { client, connections } = clientFor(me.token);
      const first = await watch(client, connections);
      const bookingId = await me.bookClass();
      await confirm(bookingId);
      const [created, confirmed] = await first.take(2);
      expect(created!.data.bookingStatusChanged).toMatchObject({
        type: 'booking.created',
        booking: { id: bookingId, status: expect.any(String), provider: { id: w.gym.id, name: expect.any(String) } },
      });
      expect(created!.eventId).toMatch(/^evt_/);
      expect(created!.eventId).toBe(created!.data.bookingStatusChanged.eventId);
      expect(confirmed!.data.bookingStatusChanged).toMatchObject({
        type: 'booking.confirmed',
        booking: { id: bookingId, status: 'CONFIRMED' },
      });
      expect(connections[0]!.headers).toMatchObject({ Accept: 'text/event-stream', Authorization: `Bearer ${me.token}` });
      expect(connections[0]!.body).toEqual({ query: String(WatchBookingStatus), variables: {} });
      expect(connections[0]!.headers['Last-Event-ID']).toBeUndefined();

      // From the first event's id: the confirm (already committed) first, then the live ones; never the first again.
      const again = clientFor(me.token);
      const resumed = await watch(again.client, again.connections, { lastEventId: created!.eventId });
      expect(again.connections[0]!.headers['Last-Event-ID']).toBe(created!.eventId);
      const second = await me.bookClass();
      const later = await resumed.take(2);
      expect(later.map((e) => [e.data.bookingStatusChanged.type, e.data.bookingStatusChanged.booking.id])).toEqual([
        ['booking.confirmed', bookingId],
        ['booking.created', second],
      ]);
      expect(later[0]!.eventId).toBe(confirmed!.eventId);
      await first.iterator.return?.();
      await resumed.iterator.return?.();
    },
    T,
  );

  it('signal › aborting ends the iteration without an error, waiting or not', async () => {
    const me = await sessionClient();
    const { client, connections } = clientFor(me.token);
    const abort = new AbortController();
    const seen: Status[] = [];
    const loop = (async () => {
      for await (const event of client.subscribe(WatchBookingStatus, {}, { signal: abort.signal })) {
        seen.push(event);
        abort.abort(); // inside the loop: the next step ends it
      }
      return 'ended';
    })();
    while (connections.length === 0) await new Promise((r) => setTimeout(r, 10));
    await connections[0]!.opened;
    await me.bookClass();
    await expect(loop).resolves.toBe('ended');
    expect(seen).toHaveLength(1);

    // Aborted while it waits for an event that never comes.
    const idle = new AbortController();
    const waiting = (async () => {
      for await (const event of client.subscribe(WatchBookingStatus, {}, { signal: idle.signal })) seen.push(event);
      return 'ended';
    })();
    while (connections.length === 1) await new Promise((r) => setTimeout(r, 10));
    await connections[1]!.opened;
    idle.abort();
    await expect(waiting).resolves.toBe('ended');
    expect(seen).toHaveLength(1);
  });

  it('a refused subscription throws GatewayError: a bad token is invalid_client_session (401), an unknown lastEventId validation_error', async () => {
    const bad = clientFor('cs_notatoken').client;
    const refusal = await (async () => {
      for await (const _ of bad.subscribe(WatchBookingStatus)) return undefined;
      return undefined;
    })().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(GatewayError);
    expect(refusal).toMatchObject({ code: 'invalid_client_session', status: 401, requestId: expect.stringMatching(/^req_/) });

    // resume: true does not retry a refusal either.
    const me = await sessionClient();
    const { client } = clientFor(me.token);
    const unknown = await (async () => {
      for await (const _ of client.subscribe(WatchBookingStatus, {}, { lastEventId: 'evt_nope', resume: true })) return undefined;
      return undefined;
    })().catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(GatewayError);
    expect(unknown).toMatchObject({ code: 'validation_error', param: 'Last-Event-ID', status: 400 });
  });

  it(
    'resume › a dropped connection reconnects with Last-Event-ID = the last id, and every event arrives once, in order; without resume the drop throws',
    async () => {
      const me = await sessionClient();
      const { client, connections } = clientFor(me.token, { cutAfter: 1 });
      const stream = await watch(client, connections, { resume: true });
      const one = await me.bookClass();
      const [created] = await stream.take(1);
      // Missed while the connection is down (it is cut right after the first event).
      await confirm(one);
      const two = await me.bookClass();
      const rest = await stream.take(2);
      expect(rest.map((e) => [e.data.bookingStatusChanged.type, e.data.bookingStatusChanged.booking.id])).toEqual([
        ['booking.confirmed', one],
        ['booking.created', two],
      ]);
      expect(connections).toHaveLength(2);
      expect(connections[1]!.headers['Last-Event-ID']).toBe(created!.eventId);
      await stream.iterator.return?.();

      const fragile = clientFor(me.token, { cutAfter: 1 });
      const once = await watch(fragile.client, fragile.connections);
      await me.bookClass();
      await once.take(1);
      await expect(once.iterator.next()).rejects.toThrow(TypeError);
      expect(fragile.connections).toHaveLength(1);
    },
    T,
  );

  it(
    'resume › an instance that stops ends its streams with complete: resumed on another instance from the last id, every event once, in order; without resume complete ends the iteration',
    async () => {
      const stopping = new Service(['serve'], { DATABASE_URL: app.databaseUrl, PORT: '0', SHUTDOWN_DRAIN_MS: '300' });
      await stopping.waitForStdout(/"msg":"listening"/, 90_000);
      const base = stopping.logLines().find((l) => l.msg === 'listening')!.url as string;
      const me = await sessionClient();
      // A rolling restart: the first connection reaches the instance about to stop, a reconnect the other one.
      const rolling = clientFor(me.token, { baseFor: (n) => (n === 0 ? base : app.baseUrl) });
      const stream = await watch(rolling.client, rolling.connections, { resume: true });
      const plain = clientFor(me.token, { baseFor: () => base });
      const ending = await watch(plain.client, plain.connections);
      const one = await me.bookClass();
      const [created] = await stream.take(1);
      await ending.take(1);

      stopping.child.kill('SIGTERM');
      // Both streams get the stopping instance's `complete` together: without resume the iteration ends.
      expect(await ending.iterator.next()).toEqual({ done: true, value: undefined });
      expect(plain.connections).toHaveLength(1);
      // Recorded after that instance's streams ended: only a resumed subscription can get them.
      await confirm(one);
      const two = await me.bookClass();
      const rest = await stream.take(2);
      expect(rest.map((e) => [e.data.bookingStatusChanged.type, e.data.bookingStatusChanged.booking.id])).toEqual([
        ['booking.confirmed', one],
        ['booking.created', two],
      ]);
      expect(rolling.connections).toHaveLength(2);
      expect(rolling.connections[1]!.headers['Last-Event-ID']).toBe(created!.eventId);
      expect(await stopping.exited).toEqual({ code: 0, signal: null });
      await stream.iterator.return?.();
    },
    T * 2,
  );

  it("WatchAccessCodeRedeemed › the client's access code redeemed by the provider arrives typed, with its eventId", async () => {
    const me = await sessionClient();
    const { client, connections } = clientFor(me.token);
    const iterator = client.subscribe(WatchAccessCodeRedeemed)[Symbol.asyncIterator]();
    const first = iterator.next();
    while (connections.length === 0) await new Promise((r) => setTimeout(r, 10));
    await connections[0]!.opened;
    const made = await madeCode(app, w, { client_id: me.clientId, provider_id: w.gym.id });
    const res = await redeem(app, gymKey, made.code);
    expect(res.status, res.text).toBe(200);
    const { value, done } = await first;
    expect(done).toBe(false);
    expect(value!.data.accessCodeRedeemed).toMatchObject({
      accessCodeId: made.id,
      status: 'REDEEMED',
      redeemedAt: expect.any(String),
      provider: { id: w.gym.id, name: expect.any(String) },
    });
    expect(value!.eventId).toBe(value!.data.accessCodeRedeemed.eventId);
    await iterator.return?.();
  });

  it('persisted › the subscription is sent by its documentId, registered as a trusted document', async () => {
    const registered = await v3(app, '/trusted_documents', { key: w.reseller.key, body: { documents: Object.values(manifest) } });
    expect(registered.status, registered.text).toBeLessThan(300);
    const me = await sessionClient();
    const { client, connections } = clientFor(me.token, { persisted: true });
    const stream = await watch(client, connections);
    const bookingId = await me.bookClass();
    const [created] = await stream.take(1);
    expect(created!.data.bookingStatusChanged).toMatchObject({ type: 'booking.created', booking: { id: bookingId } });
    expect(connections[0]!.body).toEqual({ documentId: expect.stringMatching(/^sha256:/), variables: {} });
    expect((manifest as Record<string, string>)[connections[0]!.body.documentId as string]).toMatch(/^subscription WatchBookingStatus/);
    await stream.iterator.return?.();
  });
});
