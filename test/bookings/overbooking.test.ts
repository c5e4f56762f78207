import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApp, type TestApp } from '../support/app.ts';
import { expectError } from '../support/assertions.ts';
import { book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { clientOnPass, expectBookingInvariants, manyClients, tally, worldScope } from '../support/bookings-invariants.ts';
import { businessLedger } from '../support/factories.ts';
import { v3, type Reply } from '../support/http.ts';
import { killStartedProcesses, Service } from '../ops/processes.ts';

// No overbooking under concurrency (docs/domain-rules.md "Money", Concurrency): a class instance's row and a
// spa's provider row are locked for every booking change, so 50 requests racing for 10 spots or one
// room get exactly 10 spots or one room, in one process or spread over two `serve` processes on one
// database. The server processes run on the real clock, so this file does too.

const app = useApp();
const T = 120_000;

/** A date `days` after today (UTC), for spa appointments. */
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

interface Server {
  baseUrl: string;
}
/** A V3 client for a server (the in-process app or a `serve` process): requests still go through the contract check. */
const at = (server: Server) => ({ baseUrl: server.baseUrl }) as TestApp;

async function liveBookings(where: string, params: unknown[]) {
  return app.sql<{ id: string; client_id: string; status: string }>(
    `select id, client_id, status from booking where status in ('PENDING', 'CONFIRMED') and ${where} order by id`,
    params,
  );
}

/** 50 clients race for one class instance with 10 spots through `servers` (round robin). */
async function raceForClass(servers: Server[], w: BookingWorld, tag: string) {
  const clients = await manyClients(app, w, 50, tag);
  const instance = await instanceIn(app, w.gym.classId, 48, { capacity: 10 });
  const replies = await Promise.all(
    clients.map((c, i) =>
      v3(at(servers[i % servers.length]), '/bookings/class', {
        key: w.reseller.key,
        body: { class_instance_id: instance.id, client_id: c.id },
      }),
    ),
  );

  expect(tally(replies)).toEqual({ 201: 10, '409 class_full': 40 });
  const won = replies.flatMap((r, i) => (r.status === 201 ? [{ reply: r, client: clients[i] }] : []));
  for (const { reply } of won) {
    expect(reply.body).toMatchObject({ object: 'class_booking_initiation', status: 'PENDING', copay_required: false, visits_deducted: 1 });
  }
  for (const r of replies.filter((x) => x.status === 409)) expectError(r, 409, 'class_full');

  const [row] = await app.sql<{ spots_taken: number }>('select spots_taken from class_instance where id = ?', [instance.id]);
  expect(row.spots_taken).toBe(10);
  const live = await liveBookings('class_instance_id = ?', [instance.id]);
  expect(live.map((b) => b.id).sort()).toEqual(won.map((x) => x.reply.body.booking_id).sort());
  expect(new Set(live.map((b) => b.client_id))).toEqual(new Set(won.map((x) => x.client.id)));
  // One visit on the ledger per booking, from the winners' passes only.
  const visits = await app.sql<{ issued_pass_id: string; delta: number; reason: string }>(
    'select issued_pass_id, delta, reason from visit_transaction where booking_id in (?)',
    [live.map((b) => b.id)],
  );
  expect(visits).toHaveLength(10);
  expect(visits.every((v) => v.delta === 1 && v.reason === 'BOOKING')).toBe(true);
  expect(new Set(visits.map((v) => v.issued_pass_id))).toEqual(new Set(won.map((x) => x.client.issuedPassId)));
  const [ledger] = await app.sql<{ n: string }>('select count(*) as n from visit_transaction where reseller_id = ?', [w.reseller.id]);
  expect(Number(ledger.n)).toBe(10);
  await expectBookingInvariants(app, worldScope(w));
  return replies;
}

/** 50 clients race for one spa room (capacity 1) at the same time through `servers`: one appointment, one debit. */
async function raceForSpa(servers: Server[], w: BookingWorld, tag: string, times: (i: number) => string = () => '10:00') {
  const clients = await manyClients(app, w, 50, tag);
  const date = inDays(5);
  const replies = await Promise.all(
    clients.map((c, i) =>
      v3(at(servers[i % servers.length]), '/bookings/spa', {
        key: w.reseller.key,
        body: { date, time: times(i), spa_id: w.spa.id, service_ids: [w.spa.massage], client_id: c.id },
      }),
    ),
  );

  expect(tally(replies)).toEqual({ 201: 1, '409 slot_unavailable': 49 });
  const winner = replies.findIndex((r) => r.status === 201);
  expect(replies[winner].body).toMatchObject({ object: 'spa_booking_initiation', status: 'PENDING', copay_required: false });
  for (const r of replies.filter((x) => x.status === 409)) expectError(r, 409, 'slot_unavailable');

  const live = await liveBookings("provider_id = ? and type = 'spa'", [w.spa.id]);
  expect(live).toEqual([expect.objectContaining({ id: replies[winner].body.booking_id, client_id: clients[winner].id })]);
  // The massage's 30 credits, debited once, from the winner's wallet only.
  const debits = await app.sql<{ client_id: string; amount: string; booking_id: string }>(
    "select client_id, amount, booking_id from credit_transaction where reseller_id = ? and type = 'DEBIT'",
    [w.reseller.id],
  );
  expect(debits).toEqual([{ client_id: clients[winner].id, amount: '30', booking_id: replies[winner].body.booking_id }]);
  const wallets = await app.sql<{ id: string; credit_balance: string }>('select id, credit_balance from client where id in (?)', [
    clients.map((c) => c.id),
  ]);
  expect(wallets.filter((c) => c.credit_balance !== '50')).toEqual([{ id: clients[winner].id, credit_balance: '20' }]);
  await expectBookingInvariants(app, worldScope(w));
  return replies;
}

describe('one server process', () => {
  it(
    '50 concurrent covered class bookings for 10 spots › 10 × 201 PENDING, 40 × 409 class_full; 10 spots, 10 bookings, 10 visits',
    async () => {
      await raceForClass([app], await createBookingWorld(app), 'class1');
    },
    T,
  );

  it(
    '50 concurrent covered spa bookings of one time, room capacity 1 › 1 × 201, 49 × 409 slot_unavailable; credits debited once',
    async () => {
      await raceForSpa([app], await createBookingWorld(app), 'spa1');
    },
    T,
  );

  it(
    '50 concurrent spa bookings at four overlapping times (10:00–10:45, 60 minutes each) › still one appointment',
    async () => {
      await raceForSpa([app], await createBookingWorld(app), 'spa2', (i) => ['10:00', '10:15', '10:30', '10:45'][i % 4]);
    },
    T,
  );

  it(
    'two rooms, 50 concurrent bookings at four times that all overlap 11:45–12:00 › exactly 2 appointments',
    async () => {
      const w = await createBookingWorld(app, { spaCapacity: 2 });
      const clients = await manyClients(app, w, 50, 'spa3');
      const date = inDays(6);
      const replies = await Promise.all(
        clients.map((c, i) =>
          book.spa(app, w, {
            date,
            time: ['11:00', '11:15', '11:30', '11:45'][i % 4],
            spa_id: w.spa.id,
            service_ids: [w.spa.massage],
            client_id: c.id,
          }),
        ),
      );
      expect(tally(replies)).toEqual({ 201: 2, '409 slot_unavailable': 48 });
      expect(await liveBookings("provider_id = ? and type = 'spa'", [w.spa.id])).toHaveLength(2);
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it(
    '10 co-pay sessions for one room, confirmed concurrently › 1 × 201, 9 × 409 slot_unavailable; one business debit',
    async () => {
      const w = await createBookingWorld(app);
      const clients = await manyClients(app, w, 10, 'copay1');
      const date = inDays(4);
      const sessions = [];
      for (const c of clients) {
        // Sessions reserve nothing: all ten open for the same time.
        const res = await book.spa(app, w, {
          date,
          time: '14:00',
          spa_id: w.copaySpa.id,
          service_ids: [w.copaySpa.massage],
          client_id: c.id,
        });
        expect(res.body).toMatchObject({ status: 'AWAITING_COPAY', copay_amount: 4500 });
        sessions.push(res.body.session_id as string);
      }
      const before = await businessLedger(app, w.reseller.id);
      const replies = await Promise.all(
        sessions.map((s) => v3(app, `/bookings/spa/${s}/confirm`, { key: w.reseller.key, method: 'POST' })),
      );
      expect(tally(replies)).toEqual({ 201: 1, '409 slot_unavailable': 9 });
      const after = await businessLedger(app, w.reseller.id);
      expect(after).toEqual({ balance: before.balance - 4500, ledgerSum: before.balance - 4500, rows: before.rows + 1 });
      const [open] = await app.sql<{ n: string }>("select count(*) as n from booking_session where reseller_id = ? and status = 'OPEN'", [
        w.reseller.id,
      ]);
      expect(Number(open.n)).toBe(9);
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );
});

describe('one server process › other ways into a full instance or room', () => {
  it(
    '20 bookings moved at once into an instance with 3 spots left › 3 × 201, 17 × 409 class_full; nothing else moves',
    async () => {
      const w = await createBookingWorld(app);
      const clients = await manyClients(app, w, 20, 'move-class');
      const target = await instanceIn(app, w.gym.classId, 72, { capacity: 3 });
      const booked = [];
      for (const [i, c] of clients.entries()) {
        const from = await instanceIn(app, w.gym.classId, 30 + i);
        booked.push((await book.cls(app, w, { class_instance_id: from.id, client_id: c.id })).body.booking_id as string);
      }
      const replies = await Promise.all(
        booked.map((id) => v3(app, `/bookings/${id}/reschedule`, { key: w.reseller.key, body: { class_instance_id: target.id } })),
      );
      expect(tally(replies)).toEqual({ 201: 3, '409 class_full': 17 });
      const [row] = await app.sql<{ spots_taken: number }>('select spots_taken from class_instance where id = ?', [target.id]);
      expect(row.spots_taken).toBe(3);
      // The refused moves left their bookings where they were.
      const stayed = await app.sql("select id from booking where id in (?) and status = 'PENDING'", [booked]);
      expect(stayed).toHaveLength(17);
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it(
    '20 spa appointments moved at once to one time (one room) › 1 × 201, 19 × 409 slot_unavailable',
    async () => {
      const w = await createBookingWorld(app);
      const clients = await manyClients(app, w, 20, 'move-spa');
      const date = inDays(3);
      const booked = [];
      for (const [i, c] of clients.entries()) {
        const res = await book.spa(app, w, {
          date: inDays(4 + Math.floor(i / 8)),
          time: `${10 + (i % 8)}:00`,
          spa_id: w.spa.id,
          service_ids: [w.spa.sauna],
          client_id: c.id,
        });
        expect(res.status, res.text).toBe(201);
        booked.push(res.body.booking_id as string);
      }
      const replies = await Promise.all(
        booked.map((id) => v3(app, `/bookings/${id}/reschedule`, { key: w.reseller.key, body: { date, time: '12:00' } })),
      );
      expect(tally(replies)).toEqual({ 201: 1, '409 slot_unavailable': 19 });
      expect(await liveBookings("provider_id = ? and type = 'spa'", [w.spa.id])).toHaveLength(20);
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it(
    '10 extra-visits sessions confirmed at once for an instance with 3 spots › 3 × 201, 7 × 409 class_full; only 3 purchases debited',
    async () => {
      const w = await createBookingWorld(app);
      const instance = await instanceIn(app, w.gym.classId, 60, { capacity: 3 });
      const sessions = [];
      for (let i = 0; i < 10; i++) {
        // One gym visit a month, used on another class first: this one needs a visit bought (3000).
        const c = await clientOnPass(app, w, { gymVisits: 1, price: 3000, email: `extra.${i}@example.com` });
        expect((await book.cls(app, w, { class_instance_id: (await instanceIn(app, w.gym.classId, 20)).id, client_id: c.id })).status).toBe(
          201,
        );
        const res = await book.cls(app, w, { class_instance_id: instance.id, client_id: c.id });
        expect(res.body, res.text).toMatchObject({ status: 'AWAITING_VISITS' });
        sessions.push(res.body.session_id as string);
      }
      const before = await businessLedger(app, w.reseller.id);
      const replies = await Promise.all(
        sessions.map((s) =>
          v3(app, `/bookings/class/${s}/confirm`, { key: w.reseller.key, body: { number_of_visits: 1, duration: 'MONTHLY' } }),
        ),
      );
      expect(tally(replies)).toEqual({ 201: 3, '409 class_full': 7 });
      expect(await businessLedger(app, w.reseller.id)).toEqual({
        balance: before.balance - 9000,
        ledgerSum: before.balance - 9000,
        rows: before.rows + 3,
      });
      const [entitlements] = await app.sql<{ n: string }>('select count(*) as n from visit_entitlement where reseller_id = ?', [
        w.reseller.id,
      ]);
      expect(Number(entitlements.n)).toBe(3);
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  // docs/partner-guide.md "Bookings", Class: covered → one visit of the month while the cap allows, else a session
  // (additional_visits_required). Concurrent bookings of one client must not share one reading of
  // the counter.
  it.each([
    ['1 visit a month, 10 instances at once › 1 booked now, 9 AWAITING_VISITS', 1, 10],
    ['8 visits a month, 12 instances at once › 8 booked now, 4 AWAITING_VISITS', 8, 12],
  ])(
    'one client, %s; the counter equals the visit ledger',
    async (_, visits, instances) => {
      const w = await createBookingWorld(app);
      const c = await clientOnPass(app, w, { gymVisits: visits, price: 8000, email: `cap.${visits}@example.com` });
      const targets = await Promise.all(Array.from({ length: instances }, (_x, i) => instanceIn(app, w.gym.classId, 30 + i)));
      const replies = await Promise.all(targets.map((t) => book.cls(app, w, { class_instance_id: t.id, client_id: c.id })));
      expect(replies.map((r) => r.status)).toEqual(Array(instances).fill(201));
      const outcomes = replies.map((r) => r.body.status as string);
      expect
        .soft(
          outcomes.filter((o) => o === 'PENDING'),
          'booked now with a visit of the month',
        )
        .toHaveLength(visits);
      expect
        .soft(
          outcomes.filter((o) => o === 'AWAITING_VISITS'),
          'sessions to buy a visit',
        )
        .toHaveLength(instances - visits);
      const [pass] = await app.sql<{ visits_used: Record<string, number>; ledger: string }>(
        `select visits_used, (select sum(delta) from visit_transaction t where t.issued_pass_id = ip.id and t.visit_entitlement_id is null) as ledger
         from issued_pass ip where id = ?`,
        [c.issuedPassId],
      );
      expect.soft({ counter: pass.visits_used.GYM, ledger: Number(pass.ledger) }).toEqual({ counter: visits, ledger: visits });
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it.each([
    // Silver Gym: 4 extra visits bought, one went to the confirm's booking; Gold Gym: the option's 3, one went likewise.
    ['3 extra visits left (Silver Gym)', 'gym', 4],
    ['2 co-pay visits left (Gold Gym)', 'copayGym', 3],
  ] as const)(
    'one client holding %s, 10 instances at once › only those booked now, the rest sessions; the entitlement equals its ledger',
    async (_, gym, total) => {
      const w = await createBookingWorld(app);
      const c = await clientOnPass(app, w, { gymVisits: 1, price: 3000, email: `ent.${gym}@example.com` });
      const classId = w[gym].classId;
      // Buy the three visits through a session (the month's one visit is used first at the Silver Gym).
      if (gym === 'gym')
        expect((await book.cls(app, w, { class_instance_id: (await instanceIn(app, classId, 20)).id, client_id: c.id })).body.status).toBe(
          'PENDING',
        );
      const session = await book.cls(app, w, { class_instance_id: (await instanceIn(app, classId, 21)).id, client_id: c.id });
      const body = gym === 'gym' ? { number_of_visits: 4, duration: 'ANNUALLY' } : { copay_package_id: w.copayGym.optionId };
      const bought = await v3(app, `/bookings/class/${session.body.session_id}/confirm`, { key: w.reseller.key, body });
      expect(bought.status, bought.text).toBe(201);
      const targets = await Promise.all(Array.from({ length: 10 }, (_x, i) => instanceIn(app, classId, 30 + i)));
      const replies = await Promise.all(targets.map((t) => book.cls(app, w, { class_instance_id: t.id, client_id: c.id })));
      expect(replies.map((r) => r.status)).toEqual(Array(10).fill(201));
      const outcomes = replies.map((r) => r.body.status as string);
      expect(outcomes.filter((o) => o === 'PENDING')).toHaveLength(total - 1);
      expect(outcomes.filter((o) => o !== 'PENDING')).toEqual(
        Array(10 - (total - 1)).fill(gym === 'gym' ? 'AWAITING_VISITS' : 'AWAITING_COPAY'),
      );
      const [entitlement] = await app.sql<{ visits_used: number; visits_total: number }>(
        'select visits_used, visits_total from visit_entitlement where client_id = ?',
        [c.id],
      );
      expect(entitlement).toEqual({ visits_used: total, visits_total: total });
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it(
    'mixed traffic at once (bookings, confirms, cancels, reschedules), three rounds › never a 5xx; spots, rooms and ledgers hold',
    async () => {
      await storm([app], 'storm1');
    },
    T,
  );
});

/** A small deterministic random source, so a failing storm can be run again. */
function lcg(seed: number) {
  let x = seed >>> 0;
  return (n: number) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
}

/**
 * Rounds of ~50 concurrent requests of every kind against one world, through `servers`: each
 * answer must be 2xx or a documented 4xx (v3 holds it to the contract), and the invariants must
 * hold after each round.
 */
async function storm(servers: Server[], tag: string) {
  const w = await createBookingWorld(app, { spaCapacity: 2 });
  const clients = [
    ...(await manyClients(app, w, 8, tag)),
    ...(await Promise.all(
      [0, 1, 2, 3].map((i) => clientOnPass(app, w, { gymVisits: 1, price: 3000, email: `${tag}.one.${i}@example.com` })),
    )),
  ];
  const instances = await Promise.all([30, 40, 50, 60].map((h) => instanceIn(app, w.gym.classId, h, { capacity: 4 })));
  const copayInstances = await Promise.all([35, 45].map((h) => instanceIn(app, w.copayGym.classId, h, { capacity: 3 })));
  const dates = [inDays(3), inDays(4)];
  const times = ['10:00', '10:30', '11:00'];
  const pick = lcg(tag.length * 7919);
  const any = <T>(xs: T[]): T => xs[pick(xs.length)];
  for (let round = 0; round < 3; round++) {
    const live = await app.sql<{ id: string; type: string }>(
      "select id, type from booking where reseller_id = ? and status in ('PENDING', 'CONFIRMED')",
      [w.reseller.id],
    );
    const open = await app.sql<{ id: string; kind: string }>(
      "select id, kind from booking_session where reseller_id = ? and status = 'OPEN'",
      [w.reseller.id],
    );
    const requests: (() => Promise<Reply>)[] = [];
    for (const c of clients) {
      requests.push(() =>
        v3(at(any(servers)), '/bookings/class', { key: w.reseller.key, body: { class_instance_id: any(instances).id, client_id: c.id } }),
      );
      requests.push(() =>
        v3(at(any(servers)), '/bookings/class', {
          key: w.reseller.key,
          body: { class_instance_id: any(copayInstances).id, client_id: c.id },
        }),
      );
      const [spa, service] = any([
        [w.spa, w.spa.sauna],
        [w.spa, w.spa.massage],
        [w.copaySpa, w.copaySpa.sauna],
      ] as const);
      requests.push(() =>
        v3(at(any(servers)), '/bookings/spa', {
          key: w.reseller.key,
          body: { date: any(dates), time: any(times), spa_id: spa.id, service_ids: [service], client_id: c.id },
        }),
      );
    }
    for (const s of open) {
      const path = `/bookings/${s.kind === 'SPA_COPAY' ? 'spa' : 'class'}/${s.id}/confirm`;
      const body =
        s.kind === 'CLASS_COPAY'
          ? { copay_package_id: w.copayGym.optionId }
          : s.kind === 'CLASS_EXTRA_VISITS'
            ? { number_of_visits: 1, duration: 'MONTHLY' }
            : undefined;
      requests.push(() => v3(at(any(servers)), path, { key: w.reseller.key, ...(body ? { body } : { method: 'POST' }) }));
    }
    for (const b of live) {
      if (pick(3) === 0) requests.push(() => v3(at(any(servers)), `/bookings/${b.id}/cancel`, { key: w.reseller.key, method: 'POST' }));
      else if (pick(2) === 0) {
        const body = b.type === 'spa' ? { date: any(dates), time: any(times) } : { class_instance_id: any(instances).id };
        requests.push(() => v3(at(any(servers)), `/bookings/${b.id}/reschedule`, { key: w.reseller.key, body }));
      }
    }
    const replies = await Promise.all(requests.map((r) => r()));
    const fivexx = replies.filter((r) => r.status >= 500);
    expect(
      fivexx.map((r) => r.text),
      `round ${round}: ${JSON.stringify(tally(replies))}`,
    ).toEqual([]);
    await expectBookingInvariants(app, worldScope(w));
  }
}

describe('two `serve` processes on one database', () => {
  const servers: Service[] = [];
  let urls: Server[] = [];
  let classWorld: BookingWorld;
  let spaWorld: BookingWorld;

  beforeAll(async () => {
    // The worlds first: a database that holds resellers is not seeded, so both processes only
    // migrate (nothing to apply on the cloned template) and serve.
    classWorld = await createBookingWorld(app);
    spaWorld = await createBookingWorld(app);
    for (let i = 0; i < 2; i++) {
      servers.push(new Service(['serve'], { DATABASE_URL: app.databaseUrl, PORT: '0', OUTBOX_IN_PROCESS: 'false' }));
    }
    await Promise.all(servers.map((s) => s.waitForStdout(/"msg":"listening"/, 90_000)));
    urls = servers.map((s) => ({ baseUrl: s.logLines().find((l) => l.msg === 'listening')!.url as string }));
  }, T);
  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => s.exited));
    await killStartedProcesses();
  }, T);

  /** Each process logged `n` requests so far (pino may write a line after its response went out). */
  async function expectEachServed(n: number) {
    const served = () => servers.map((s) => s.logLines().filter((l) => l.msg === 'request').length);
    for (let i = 0; i < 100 && served().some((c) => c < n); i++) await new Promise((r) => setTimeout(r, 50));
    expect(served()).toEqual([n, n]);
  }

  it('are two processes on two ports', () => {
    expect(new Set(servers.map((s) => s.child.pid)).size).toBe(2);
    expect(new Set(urls.map((u) => u.baseUrl)).size).toBe(2);
  });

  it(
    '50 concurrent class bookings for 10 spots, alternating between them › 10 × 201, 40 × 409 class_full',
    async () => {
      await raceForClass(urls, classWorld, 'cluster-class');
      await expectEachServed(25);
    },
    T,
  );

  it(
    '50 concurrent spa bookings of one room at one time, alternating between them › 1 × 201, 49 × 409 slot_unavailable',
    async () => {
      await raceForSpa(urls, spaWorld, 'cluster-spa');
      await expectEachServed(50);
    },
    T,
  );

  it(
    'mixed traffic spread over both at once, three rounds › never a 5xx; spots, rooms and ledgers hold',
    async () => {
      await storm(urls, 'cluster-storm');
    },
    T,
  );
});
