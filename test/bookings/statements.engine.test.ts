import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { planScans } from '../support/plans.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { v3 } from '../support/http.ts';
import { createCode } from '../support/access-codes.ts';
import { createPassPackage, issuePass } from '../support/factories.ts';
import { countRoundTrips } from '../support/round-trips.ts';
import { KEY_CACHE_MS } from '../../src/platform/auth.ts';
import { createProvider, createSpaService, everyDay } from '../support/catalog.ts';

// SQL statements per booking (bench/README.md "Bookings" has the figures at load): a booking's reads
// share round trips where no lock orders them (a class instance is locked and read with its class
// and provider; a spa is read with the services asked for; a client with its current pass and
// package); its last writes, whose results nothing reads (the spot, the booking, the session marked
// used, the event and its outbox row), go together in one statement, the idempotency record's when
// there is one (src/db/engine/prepared-read.ts queueWrite), sent with COMMIT in one exchange
// (src/db/engine/edges-along.ts, whose tests count the exchanges); and the count does not grow with
// the bookings an instance or a spa day already holds.
const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app, { spaCapacity: 10 });
});

/** The request's status and its own statements (the API key's look-up, cached, left out). */
async function counted(send: () => Promise<{ status: number; text: string }>): Promise<{ status: number; statements: string[] }> {
  app.queries!.reset();
  const res = await send();
  expect(res.status, res.text).toBe(201);
  return { status: res.status, statements: [...app.queries!.ownStatements] };
}

/**
 * The request's round trips to the database, over every connection of the app's pool (counted at
 * each client's protocol writes: test/support/round-trips.ts). The API key's look-up is taken out
 * of the window: once the key's cache has lapsed, a request of the same key just before fills it
 * anew for 500 ms (src/platform/auth.ts); a lookup left from earlier could lapse inside the window.
 */
async function roundTripsOf(send: () => Promise<{ status: number; text: string }>): Promise<number> {
  const pool = await app.orm.em.getConnection().getNativeClient();
  const counters = trackedPools.get(pool) ?? new Map<object, ReturnType<typeof countRoundTrips>>();
  if (!trackedPools.has(pool)) {
    trackedPools.set(pool, counters);
    pool.on('acquire', (client) => {
      if (!counters.has(client)) counters.set(client, countRoundTrips(client));
    });
  }
  const total = () => [...counters.values()].reduce((sum, c) => sum + c.roundTrips(), 0);
  // Past the cache's life first: a lookup made just before would lapse within the window.
  await new Promise((resolve) => setTimeout(resolve, KEY_CACHE_MS + 20));
  await v3(app, '/passes?limit=1', { key: w.reseller.key });
  const before = total();
  const res = await send();
  expect(res.status, res.text).toBe(201);
  return total() - before;
}
const trackedPools = new WeakMap<object, Map<object, ReturnType<typeof countRoundTrips>>>();

describe('round trips per booking', () => {
  it('a covered class booking › the instance locked, the client with its pass and the already-booked check in one round trip: 3 with a monthly visit limit, 2 without', async () => {
    const instance = await instanceIn(app, w.gym.classId, 58, { capacity: 5 });
    const client = await anotherClient(app, w, 'tony.hoare@example.com');
    // The reads; the visit taken (a statement whose answer says whether one was left); the writes with COMMIT.
    expect(await roundTripsOf(() => book.cls(app, w, { class_instance_id: instance.id, client_id: client.id }))).toBe(3);
    const unlimited = await createPassPackage(app, w.reseller, {
      categories: [{ type: 'GYM', tiers: ['SILVER'], visits_allowed: null, credit_allocated: 0 }],
    });
    const holders = [
      await issuePass(app, w.reseller, unlimited.id, { email: 'robin.milner@example.com' }),
      await issuePass(app, w.reseller, unlimited.id, { email: 'kristen.nygaard@example.com' }),
    ];
    // The reads; the visit, the spot, the booking and the event with COMMIT.
    expect(await roundTripsOf(() => book.cls(app, w, { class_instance_id: instance.id, client_id: holders[0].client_id }))).toBe(2);
    expect(
      await roundTripsOf(() =>
        book.cls(app, w, { class_instance_id: instance.id, client_id: holders[1].client_id }, 'class-round-trips-1'),
      ),
    ).toBe(2);
  });

  it("a covered spa booking › at a spa this process has not booked yet 3: the client and the spa locked together, the slot check under the lock, the writes with COMMIT; afterwards 2, the slot's appointments read right behind the spa", async () => {
    const spa = await createProvider(app, { category: 'SPA', tier: 'SILVER', openingHours: everyDay('09:00', '18:00'), roomCapacity: 5 });
    const sauna = (await createSpaService(app, spa.id, { name: 'Sauna', durationMinutes: 15, credits: 10 })).id;
    const clients = [await anotherClient(app, w, 'john.backus@example.com'), await anotherClient(app, w, 'peter.naur@example.com')];
    const body = (clientId: string) => ({ spa_id: spa.id, service_ids: [sauna], date: '2026-03-05', time: '15:00', client_id: clientId });
    expect(await roundTripsOf(() => book.spa(app, w, body(clients[0].id)))).toBe(3);
    expect(await roundTripsOf(() => book.spa(app, w, body(clients[1].id)))).toBe(2);
  });

  it("a spa co-pay confirm › 2: the session and its spa locked, the appointments at the session's instants right behind; the writes with COMMIT", async () => {
    const client = await anotherClient(app, w, 'niklaus.wirth@example.com');
    const session = await book.spa(app, w, {
      spa_id: w.copaySpa.id,
      service_ids: [w.copaySpa.sauna],
      date: '2026-03-06',
      time: '15:00',
      client_id: client.id,
    });
    expect(session.body).toMatchObject({ status: 'AWAITING_COPAY' });
    expect(await roundTripsOf(() => v3(app, `/bookings/spa/${session.body.session_id}/confirm`, { key: w.reseller.key, body: {} }))).toBe(
      2,
    );
  });
});

describe('statements per booking', () => {
  it('a covered class booking › 7, with or without an Idempotency-Key, the first and the third of an instance alike', async () => {
    const instance = await instanceIn(app, w.gym.classId, 50, { capacity: 5 });
    const clients = [w.client, await anotherClient(app, w, 'grace@example.com'), await anotherClient(app, w, 'alan@example.com')];
    const first = await counted(() => book.cls(app, w, { class_instance_id: instance.id, client_id: clients[0].id }));
    expect(first.statements, first.statements.join('\n')).toHaveLength(7);
    // The instance, its class and its provider: one statement, under the instance's lock.
    expect(first.statements.filter((q) => /\bfrom provider\b|\bjoin provider\b/.test(q))).toHaveLength(1);
    // The spot, the booking, the event and its outbox row: one statement, just before COMMIT.
    expect(first.statements.at(-2)).toMatch(
      /^\/\* sent with COMMIT \*\/ with queued_write_1 as \(update class_instance .*insert into booking .*insert into event .*insert into outbox /s,
    );
    expect((await counted(() => book.cls(app, w, { class_instance_id: instance.id, client_id: clients[1].id }))).statements).toHaveLength(
      7,
    );
    const keyed = await counted(() => book.cls(app, w, { class_instance_id: instance.id, client_id: clients[2].id }, 'class-statements-1'));
    expect(keyed.statements, keyed.statements.join('\n')).toHaveLength(7);
    // With a key, they ride in the idempotency record's statement.
    expect(keyed.statements.at(-2)).toMatch(
      /^\/\* sent with COMMIT \*\/ with queued_write_1 as \(update class_instance .*insert into outbox .*insert into idempotency_record /s,
    );
  });

  it('the already-booked check of a class booking › one probe of the index booking_one_per_instance_client, not a read of every booking the client made', async () => {
    const instance = await instanceIn(app, w.gym.classId, 54, { capacity: 5 });
    const client = await anotherClient(app, w, 'margaret@example.com');
    const { statements } = await counted(() => book.cls(app, w, { class_instance_id: instance.id, client_id: client.id }));
    const scans = await planScans(app, statements, /^select exists \(select 1 from booking /, [instance.id, client.id]);
    expect(scans, JSON.stringify(scans)).toHaveLength(1);
    expect(scans[0]).toMatchObject({ 'Index Name': 'booking_one_per_instance_client' });
    expect(scans[0]['Index Cond']).toMatch(/class_instance_id = \$1.*client_id = \$2/);
  });

  it("a co-pay confirm's appointments at the session's instants › the spa an index condition with the session's value as a parameter, whatever the statistics say", async () => {
    const session = await book.spa(app, w, {
      spa_id: w.copaySpa.id,
      service_ids: [w.copaySpa.sauna],
      date: '2026-03-07',
      time: '15:00',
      client_id: w.client.id,
    });
    expect(session.status, session.text).toBe(201);
    const { statements } = await counted(() =>
      v3(app, `/bookings/spa/${session.body.session_id}/confirm`, { key: w.reseller.key, body: {} }),
    );
    // The generic plan, made from this test's statistics (a few rows, or none read yet): a join on
    // the session's columns was planned from such statistics as a walk over a whole index of
    // bookings, filtered row by row (docs/adr/0021-pipelined-reads.md). Which index
    // serves the range depends on the statistics; that the spa bounds it must not.
    const scans = await planScans(
      app,
      statements,
      /^with s as \(select provider_id, starts_at, ends_at from booking_session /,
      [session.body.session_id, w.reseller.id, '90000 seconds'],
      { indexesOnly: true },
    );
    const onBookings = scans.filter((n) => n['Relation Name'] === 'booking');
    expect(onBookings, JSON.stringify(scans)).toHaveLength(1);
    // A parameter: `$n` on PostgreSQL 15, `(InitPlan n).coln` from 17 on (the embedded one).
    expect(onBookings[0]['Index Cond'], JSON.stringify(scans)).toMatch(/\(provider_id = (\$\d+|\(InitPlan \d+\)\.col\d+)\)/);
  });

  it("the client and its newest pass, named by client_id › its passes read by issued_pass_client_idx, not the reseller's newest first", async () => {
    const instance = await instanceIn(app, w.gym.classId, 56, { capacity: 5 });
    const client = await anotherClient(app, w, 'barbara.liskov@example.com');
    const { statements } = await counted(() => book.cls(app, w, { class_instance_id: instance.id, client_id: client.id }));
    const scans = await planScans(app, statements, /\bleft join lateral \(select \* from issued_pass where /, [client.id, w.reseller.id]);
    const onPasses = scans.filter((n) => n['Relation Name'] === 'issued_pass');
    expect(onPasses, JSON.stringify(scans)).toHaveLength(1);
    expect(onPasses[0]).toMatchObject({ 'Index Name': 'issued_pass_client_idx' });
    expect(onPasses[0]['Index Cond']).toMatch(/client_id = c\.id/);
  });

  it('a covered class booking on a pass with unlimited visits › 6: the visit rides with the spot and the booking', async () => {
    const unlimited = await createPassPackage(app, w.reseller, {
      categories: [{ type: 'GYM', tiers: ['SILVER'], visits_allowed: null, credit_allocated: 0 }],
    });
    const instance = await instanceIn(app, w.gym.classId, 52, { capacity: 5 });
    const clients = [
      await issuePass(app, w.reseller, unlimited.id, { email: 'ada.unlimited@example.com' }),
      await issuePass(app, w.reseller, unlimited.id, { email: 'alan.unlimited@example.com' }),
    ];
    const first = await counted(() => book.cls(app, w, { class_instance_id: instance.id, client_id: clients[0].client_id }));
    expect(first.statements, first.statements.join('\n')).toHaveLength(6);
    expect(first.statements.at(-2)).toMatch(
      /^\/\* sent with COMMIT \*\/ with queued_write_1 as \(update issued_pass .*insert into visit_transaction .*update class_instance .*insert into booking .*insert into outbox /s,
    );
    const keyed = await counted(() =>
      book.cls(app, w, { class_instance_id: instance.id, client_id: clients[1].client_id }, 'class-statements-unlimited'),
    );
    expect(keyed.statements, keyed.statements.join('\n')).toHaveLength(6);
    expect(keyed.statements.at(-2)).toMatch(
      /^\/\* sent with COMMIT \*\/ with queued_write_1 as \(update issued_pass .*insert into idempotency_record /s,
    );
  });

  it('a covered spa booking › 6, with or without an Idempotency-Key, the first and the third of a day alike', async () => {
    const clients = [w.client, await anotherClient(app, w, 'edsger@example.com'), await anotherClient(app, w, 'barbara@example.com')];
    const body = (clientId: string, time: string) => ({
      spa_id: w.spa.id,
      service_ids: [w.spa.sauna, w.spa.massage],
      date: '2026-03-05',
      time,
      client_id: clientId,
    });
    const first = await counted(() => book.spa(app, w, body(clients[0].id, '10:00')));
    expect(first.statements, first.statements.join('\n')).toHaveLength(6);
    // The spa and both services: one statement, which also locks the spa; the slot check follows it.
    expect(first.statements.filter((q) => /\bspa_service\b/.test(q))).toEqual([expect.stringMatching(/for no key update of p$/)]);
    expect(first.statements.filter((q) => /^select id from provider/.test(q))).toEqual([]);
    // The client, its current issued pass and the pass package: one statement.
    expect(first.statements.filter((q) => /\bfrom client\b|\bfrom issued_pass\b|\bjoin pass_package\b/.test(q))).toHaveLength(1);
    // The wallet's ledger row (its trigger moves the balance) rides with the booking and the event.
    expect(first.statements.at(-2)).toMatch(
      /^\/\* sent with COMMIT \*\/ with queued_write_1 as \(insert into credit_transaction .*insert into booking .*insert into outbox /s,
    );
    expect(first.statements.filter((q) => /\bupdate client\b/.test(q))).toEqual([]);
    const second = await counted(() => book.spa(app, w, body(clients[1].id, '10:00')));
    expect(second.statements).toHaveLength(6);
    // This process knows the spa now: the room's appointments are read right behind its locking read,
    // so under its lock (the log is in the order PostgreSQL answered, which is the order it ran them).
    const locked = second.statements.findIndex((q) => /for no key update of p$/.test(q));
    expect(second.statements[locked + 1], second.statements.join('\n')).toMatch(
      /^select starts_at, ends_at from booking\s+where provider_id = /,
    );
    expect((await counted(() => book.spa(app, w, body(clients[2].id, '12:00'), 'spa-statements-1'))).statements).toHaveLength(6);
  });

  it('a spa co-pay confirm › 5, with or without an Idempotency-Key; the business account moved at COMMIT', async () => {
    const session = async (time: string) => {
      const res = await book.spa(app, w, {
        spa_id: w.copaySpa.id,
        service_ids: [w.copaySpa.sauna],
        date: '2026-03-06',
        time,
        client_id: w.client.id,
      });
      expect(res.status, res.text).toBe(201);
      return res.body.session_id as string;
    };
    const confirm = (id: string, key?: string) => () =>
      v3(app, `/bookings/spa/${id}/confirm`, { key: w.reseller.key, body: {}, idempotencyKey: key });
    const first = await counted(confirm(await session('10:00')));
    expect(first.statements, first.statements.join('\n')).toHaveLength(5);
    // The session, locked, with its issued pass, the pass's package, its client and its spa, locked
    // too, with the services it asks for: one statement.
    expect(first.statements.filter((q) => /\b(join|from) (client|provider|spa_service)\b/.test(q))).toEqual([
      expect.stringMatching(
        /^select bs\.\*, .*join client .*join provider p .*join spa_service s .* for update of bs for no key update of p$/s,
      ),
    ]);
    // The booking, the session marked used, the event, its outbox row and the ledger row: one
    // statement, then COMMIT, which applies the ledger row to the business account.
    expect(first.statements.at(-2)).toMatch(
      /^\/\* sent with COMMIT \*\/ with queued_write_1 as \(insert into booking .*update booking_session .*insert into event .*insert into outbox .*insert into business_transaction /s,
    );
    expect(first.statements.filter((q) => /\bbusiness_account\b/.test(q))).toEqual([]);
    // The room's appointments are read right behind the spa's locking read, so under its lock (the
    // log is in the order PostgreSQL answered, which is the order it ran them).
    const locked = first.statements.findIndex((q) => /for no key update of p$/.test(q));
    expect(locked, first.statements.join('\n')).toBeGreaterThan(0);
    expect(first.statements[locked + 1]).toMatch(
      /^with s as \(select provider_id, starts_at, ends_at from booking_session where id = .*\)\s+select starts_at, ends_at from booking\s+where provider_id = \(select provider_id from s\)/s,
    );
    const keyed = await counted(confirm(await session('11:00'), 'confirm-statements-1'));
    expect(keyed.statements, keyed.statements.join('\n')).toHaveLength(5);
    expect(keyed.statements.at(-2)).toMatch(
      /^\/\* sent with COMMIT \*\/ with queued_write_1 as \(insert into booking .*insert into business_transaction .*insert into idempotency_record /s,
    );
  });

  it('a holder named by its passcode (an access code) › its issued pass, package and client in one statement', async () => {
    const issued = await issuePass(app, w.reseller, w.passId, { first_name: 'Pat', last_name: 'Code', email: 'passcode@example.com' });
    const res = await counted(() => createCode(app, w, { pass_code: issued.passcode.toLowerCase(), provider_id: w.gym.id }));
    expect(
      res.statements.filter((q) => /\b(from|join) "?(issued_pass|client|pass_package)"?\s/.test(q)),
      res.statements.join('\n'),
    ).toHaveLength(1);
  });
});
