import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError } from '../support/assertions.ts';
import { book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { clientOnPass, expectBookingInvariants, tally, worldScope } from '../support/bookings-invariants.ts';
import { lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger, issuePass, walletLedger } from '../support/factories.ts';
import { v3, type Reply } from '../support/http.ts';

// Money moves once (docs/errors.md "Idempotency", docs/domain-rules.md "Money"): the same confirm sent ten
// times at once with one Idempotency-Key books once, debits once and answers the first response
// byte for byte (or 409 idempotency_request_in_progress when the wait runs out); two different
// keys for one session book once and the other is 409 session_already_confirmed; concurrent
// cancels of one booking refund once.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
const T = 60_000;
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

let emails = 0;
async function newClient() {
  const issued = await issuePass(app, w.reseller, w.passId, { email: `once.${++emails}@example.com` });
  return { id: issued.client_id, issuedPassId: issued.id };
}

interface OpenSession {
  path: string;
  body?: Record<string, unknown>;
  amount: number;
  type: 'spa' | 'class';
}

let spaTime = 0;
/** A spa co-pay session (Gold Spa, massage: 4500), each at its own time. */
async function spaSession(): Promise<OpenSession> {
  const client = await newClient();
  const time = `${String(10 + (spaTime++ % 7)).padStart(2, '0')}:00`;
  const date = `2026-03-${String(10 + Math.floor(spaTime / 7)).padStart(2, '0')}`;
  const res = await book.spa(app, w, { date, time, spa_id: w.copaySpa.id, service_ids: [w.copaySpa.massage], client_id: client.id });
  expect(res.body, res.text).toMatchObject({ status: 'AWAITING_COPAY', copay_amount: 4500 });
  return { path: `/bookings/spa/${res.body.session_id}/confirm`, amount: 4500, type: 'spa' };
}

/** A class co-pay session (Gold Gym, its option: 2500 for 3 visits). */
async function classCopaySession(): Promise<OpenSession> {
  const client = await newClient();
  const res = await book.cls(app, w, { class_instance_id: (await instanceIn(app, w.copayGym.classId, 30)).id, client_id: client.id });
  expect(res.body, res.text).toMatchObject({ status: 'AWAITING_COPAY' });
  return {
    path: `/bookings/class/${res.body.session_id}/confirm`,
    body: { copay_package_id: w.copayGym.optionId },
    amount: 2500,
    type: 'class',
  };
}

/** An extra-visits session: the month's one visit is used, two more cost 2 × 3000. */
async function extraVisitsSession(): Promise<OpenSession> {
  // One gym visit a month for 3000: a visit costs 3000.
  const client = await clientOnPass(app, w, { gymVisits: 1, price: 3000, email: `once.${++emails}@example.com` });
  const first = await book.cls(app, w, { class_instance_id: (await instanceIn(app, w.gym.classId, 20)).id, client_id: client.id });
  expect(first.body, first.text).toMatchObject({ status: 'PENDING' });
  const res = await book.cls(app, w, { class_instance_id: (await instanceIn(app, w.gym.classId, 40)).id, client_id: client.id });
  expect(res.body, res.text).toMatchObject({ status: 'AWAITING_VISITS', cost_per_visit: 3000 });
  return {
    path: `/bookings/class/${res.body.session_id}/confirm`,
    body: { number_of_visits: 2, duration: 'MONTHLY' },
    amount: 6000,
    type: 'class',
  };
}

const confirm = (s: OpenSession, idempotencyKey?: string) =>
  v3(app, s.path, { key: w.reseller.key, ...(s.body ? { body: s.body } : { method: 'POST' }), idempotencyKey });
const sessionIdOf = (s: OpenSession) => s.path.split('/')[3];

/** The bookings a session made and the business debits referencing them. */
async function effectsOf(s: OpenSession) {
  const bookings = await app.sql<{ id: string }>('select id from booking where session_id = ?', [sessionIdOf(s)]);
  const debits = await app.sql<{ amount: string }>(
    "select t.amount from business_transaction t join booking b on b.id = t.reference_id where b.session_id = ? and t.type = 'DEBIT'",
    [sessionIdOf(s)],
  );
  const entitlements = await app.sql<{ id: string; visits_used: number }>(
    'select id, visits_used from visit_entitlement where session_id = ?',
    [sessionIdOf(s)],
  );
  return { bookings: bookings.map((b) => b.id), debits: debits.map((d) => Number(d.amount)), entitlements };
}

const kinds = [
  ['a spa co-pay session', spaSession],
  ['a class co-pay session (copay_package_id)', classCopaySession],
  ['a class extra-visits session (number_of_visits, duration)', extraVisitsSession],
] as const;

describe('the same confirm, 10 at once with one Idempotency-Key', () => {
  it.each(kinds)(
    '%s › one booking, one debit, one event; every 201 the same bytes, all but one replayed',
    async (_, open) => {
      const session = await open();
      const before = await businessLedger(app, w.reseller.id);
      const outbox = await lastOutboxId(app);
      const replies = await Promise.all(Array.from({ length: 10 }, () => confirm(session, `confirm-${sessionIdOf(session)}`)));

      // A request that waited longer than IDEMPOTENCY_WAIT_MS may answer 409 in progress; nothing else.
      for (const r of replies.filter((x) => x.status !== 201)) expectError(r, 409, 'idempotency_request_in_progress');
      const created = replies.filter((r) => r.status === 201);
      expect(created.length, JSON.stringify(tally(replies))).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((r) => r.text)).size).toBe(1);
      expect(created.filter((r) => r.headers.get('x-idempotent-replayed') !== 'true')).toHaveLength(1);
      const booking = created[0].body;
      expect(booking).toMatchObject({ object: 'booking', status: 'PENDING', type: session.type });

      const effects = await effectsOf(session);
      expect(effects.bookings).toEqual([booking.id]);
      expect(effects.debits).toEqual([session.amount]);
      if (session.type === 'class') expect(effects.entitlements).toEqual([expect.objectContaining({ visits_used: 1 })]);
      expect(await businessLedger(app, w.reseller.id)).toEqual({
        balance: before.balance - session.amount,
        ledgerSum: before.balance - session.amount,
        rows: before.rows + 1,
      });
      const events = await outboxSince(app, outbox);
      expect(events.map((e) => [e.payload.type, e.payload.data.object.id])).toEqual([['booking.created', booking.id]]);

      // Later retries with the key still replay the same bytes and move nothing.
      const again = await confirm(session, `confirm-${sessionIdOf(session)}`);
      expect(again.status).toBe(201);
      expect(again.text).toBe(created[0].text);
      expect(again.headers.get('x-idempotent-replayed')).toBe('true');
      expect((await effectsOf(session)).debits).toEqual([session.amount]);
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );
});

describe('other money-moving requests, 10 at once with one Idempotency-Key', () => {
  /** Ten identical requests with one key: every 201 the same bytes, all but one replayed (or 409 in progress). */
  async function tenWithOneKey(path: string, body: Record<string, unknown>) {
    const key = `ten-${++emails}`;
    const replies = await Promise.all(Array.from({ length: 10 }, () => v3(app, path, { key: w.reseller.key, body, idempotencyKey: key })));
    for (const r of replies.filter((x) => x.status !== 201)) expectError(r, 409, 'idempotency_request_in_progress');
    const created = replies.filter((r) => r.status === 201);
    expect(new Set(created.map((r) => r.text)).size).toBe(1);
    expect(created.filter((r) => r.headers.get('x-idempotent-replayed') !== 'true')).toHaveLength(1);
    return created[0];
  }

  it(
    'a covered spa booking › one appointment, its credits debited once',
    async () => {
      const client = await newClient();
      const res = await tenWithOneKey('/bookings/spa', {
        date: '2026-03-23',
        time: '10:00',
        spa_id: w.spa.id,
        service_ids: [w.spa.massage],
        client_id: client.id,
      });
      expect(res.body).toMatchObject({ status: 'PENDING', copay_required: false });
      expect(await app.sql('select id from booking where client_id = ?', [client.id])).toEqual([{ id: res.body.booking_id }]);
      expect(await walletLedger(app, client.id)).toEqual({ balance: 20, ledgerSum: 20 });
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it(
    'a covered class booking › one booking, one visit',
    async () => {
      const client = await newClient();
      const instance = await instanceIn(app, w.gym.classId, 33);
      const res = await tenWithOneKey('/bookings/class', { class_instance_id: instance.id, client_id: client.id });
      expect(res.body).toMatchObject({ status: 'PENDING', visits_deducted: 1 });
      const visits = await app.sql('select delta from visit_transaction where issued_pass_id = ?', [client.issuedPassId]);
      expect(visits).toEqual([{ delta: 1 }]);
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it(
    'a reschedule › one new booking, the old one RESCHEDULED once',
    async () => {
      const client = await newClient();
      const booked = await book.spa(app, w, {
        date: '2026-03-24',
        time: '10:00',
        spa_id: w.spa.id,
        service_ids: [w.spa.sauna],
        client_id: client.id,
      });
      const res = await tenWithOneKey(`/bookings/${booked.body.booking_id}/reschedule`, { date: '2026-03-24', time: '15:00' });
      expect(res.body).toMatchObject({ status: 'PENDING', rescheduled_from: booked.body.booking_id, time: '15:00' });
      const rows = await app.sql<{ id: string; status: string }>('select id, status from booking where client_id = ? order by id', [
        client.id,
      ]);
      expect(rows).toEqual([
        { id: booked.body.booking_id, status: 'RESCHEDULED' },
        { id: res.body.id, status: 'PENDING' },
      ]);
      expect(await walletLedger(app, client.id)).toEqual({ balance: 40, ledgerSum: 40 });
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );
});

describe('one session, different keys or none', () => {
  it.each(kinds)(
    '%s, two keys at once › one 201, one 409 session_already_confirmed, one debit',
    async (_, open) => {
      const session = await open();
      const before = await businessLedger(app, w.reseller.id);
      const [one, two] = [`one-${sessionIdOf(session)}`, `two-${sessionIdOf(session)}`];
      const replies = await Promise.all([confirm(session, one), confirm(session, two)]);
      expect(tally(replies)).toEqual({ 201: 1, '409 session_already_confirmed': 1 });
      expectError(
        replies.find((r) => r.status === 409)!,
        409,
        'session_already_confirmed',
      );
      expect((await effectsOf(session)).debits).toEqual([session.amount]);
      expect((await businessLedger(app, w.reseller.id)).balance).toBe(before.balance - session.amount);
      // Each key keeps its own answer.
      const again = await Promise.all([confirm(session, one), confirm(session, two)]);
      expect(again.map((r) => r.text)).toEqual(replies.map((r) => r.text));
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it.each(kinds)(
    '%s, 10 at once without a key › one 201, nine 409 session_already_confirmed, one debit',
    async (_, open) => {
      const session = await open();
      const replies = await Promise.all(Array.from({ length: 10 }, () => confirm(session)));
      expect(tally(replies)).toEqual({ 201: 1, '409 session_already_confirmed': 9 });
      expect((await effectsOf(session)).debits).toEqual([session.amount]);
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );
});

const cancel = (id: string) => v3(app, `/bookings/${id}/cancel`, { key: w.reseller.key, method: 'POST' });

/** Ten cancels of one booking at once: one 200, nine 409 already_cancelled, one booking.cancelled event. */
async function cancelTenTimes(bookingId: string): Promise<Reply> {
  const outbox = await lastOutboxId(app);
  const replies = await Promise.all(Array.from({ length: 10 }, () => cancel(bookingId)));
  expect(tally(replies)).toEqual({ 200: 1, '409 already_cancelled': 9 });
  for (const r of replies.filter((x) => x.status === 409)) expectError(r, 409, 'already_cancelled');
  const events = await outboxSince(app, outbox);
  expect(events.map((e) => [e.payload.type, e.payload.data.object.id])).toEqual([['booking.cancelled', bookingId]]);
  return replies.find((r) => r.status === 200)!;
}

describe('concurrent cancels of one booking', () => {
  it(
    'a covered spa booking › the credits come back once',
    async () => {
      const client = await newClient();
      const res = await book.spa(app, w, {
        date: '2026-03-20',
        time: '10:00',
        spa_id: w.spa.id,
        service_ids: [w.spa.massage],
        client_id: client.id,
      });
      expect(await walletLedger(app, client.id)).toEqual({ balance: 20, ledgerSum: 20 });
      const done = await cancelTenTimes(res.body.booking_id);
      expect(done.body.refund).toEqual({ policy: 'FULL', credits_refunded: 30, visits_restored: 0, copay_refunded: 0, currency: 'EUR' });
      expect(await walletLedger(app, client.id)).toEqual({ balance: 50, ledgerSum: 50 });
      const refunds = await app.sql("select id from credit_transaction where booking_id = ? and type = 'CREDIT'", [res.body.booking_id]);
      expect(refunds).toHaveLength(1);
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it.each([
    ['more than 24 h ahead › FULL: all 4500', '2026-03-21', '11:00', 'FULL', 4500],
    // 15:00 in Berlin today is 14:00Z, six hours after now: LATE, the policy's 50%.
    ['less than 24 h ahead › LATE: 50%, 2250', '2026-03-02', '15:00', 'LATE', 2250],
  ] as const)(
    'a spa co-pay booking %s, back to the business account once',
    async (_, date, time, policy, refunded) => {
      const client = await newClient();
      const res = await book.spa(app, w, { date, time, spa_id: w.copaySpa.id, service_ids: [w.copaySpa.massage], client_id: client.id });
      const confirmed = await v3(app, `/bookings/spa/${res.body.session_id}/confirm`, { key: w.reseller.key, method: 'POST' });
      expect(confirmed.status, confirmed.text).toBe(201);
      const before = await businessLedger(app, w.reseller.id);
      const done = await cancelTenTimes(confirmed.body.id);
      expect(done.body.refund).toEqual({ policy, credits_refunded: 0, visits_restored: 0, copay_refunded: refunded, currency: 'EUR' });
      expect(await businessLedger(app, w.reseller.id)).toEqual({
        balance: before.balance + refunded,
        ledgerSum: before.balance + refunded,
        rows: before.rows + 1,
      });
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it(
    'a class booking › the visit comes back once and the spot is freed once',
    async () => {
      const client = await newClient();
      const instance = await instanceIn(app, w.gym.classId, 50, { capacity: 3 });
      const others = [await newClient(), await newClient()];
      for (const c of [client, ...others])
        expect((await book.cls(app, w, { class_instance_id: instance.id, client_id: c.id })).status).toBe(201);
      const mine = (await app.sql<{ id: string }>("select id from booking where client_id = ? and status = 'PENDING'", [client.id]))[0].id;
      const done = await cancelTenTimes(mine);
      expect(done.body.refund).toEqual({ policy: 'FULL', credits_refunded: 0, visits_restored: 1, copay_refunded: 0, currency: 'EUR' });
      const [spots] = await app.sql<{ spots_taken: number }>('select spots_taken from class_instance where id = ?', [instance.id]);
      expect(spots.spots_taken).toBe(2);
      const restored = await app.sql<{ delta: number }>(
        "select delta from visit_transaction where booking_id = ? and reason = 'CANCELLATION'",
        [mine],
      );
      expect(restored).toEqual([{ delta: -1 }]);
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );
});

describe('concurrent cancels and reschedules of one booking', () => {
  it(
    'a spa booking, 5 cancels and 5 moves to other times at once › exactly one of them wins',
    async () => {
      const client = await newClient();
      const res = await book.spa(app, w, {
        date: '2026-03-22',
        time: '10:00',
        spa_id: w.spa.id,
        service_ids: [w.spa.sauna],
        client_id: client.id,
      });
      const id = res.body.booking_id as string;
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          i % 2 === 0
            ? cancel(id)
            : v3(app, `/bookings/${id}/reschedule`, { key: w.reseller.key, body: { date: '2026-03-22', time: `${11 + (i >> 1)}:00` } }),
        ),
      );
      const counts = tally(replies);
      if (counts[200] === 1) {
        expect(counts).toEqual({ 200: 1, '409 already_cancelled': 4, '409 not_reschedulable': 5 });
      } else {
        expect(counts).toEqual({ 201: 1, '409 not_cancellable': 5, '409 not_reschedulable': 4 });
      }
      const live = await app.sql("select id from booking where client_id = ? and status in ('PENDING', 'CONFIRMED')", [client.id]);
      expect(live).toHaveLength(counts[200] === 1 ? 0 : 1);
      expect(await walletLedger(app, client.id)).toEqual(
        counts[200] === 1 ? { balance: 50, ledgerSum: 50 } : { balance: 40, ledgerSum: 40 },
      );
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it(
    'a class booking, 10 moves to ten other instances at once › one new booking, one spot moved, the visit still counted once',
    async () => {
      const client = await newClient();
      const from = await instanceIn(app, w.gym.classId, 60);
      const targets = await Promise.all(Array.from({ length: 10 }, (_, i) => instanceIn(app, w.gym.classId, 70 + i)));
      const id = (await book.cls(app, w, { class_instance_id: from.id, client_id: client.id })).body.booking_id as string;
      const replies = await Promise.all(
        targets.map((t) => v3(app, `/bookings/${id}/reschedule`, { key: w.reseller.key, body: { class_instance_id: t.id } })),
      );
      expect(tally(replies)).toEqual({ 201: 1, '409 not_reschedulable': 9 });
      const spots = await app.sql<{ id: string; spots_taken: number }>(
        'select id, spots_taken from class_instance where id in (?) and spots_taken > 0',
        [[from.id, ...targets.map((t) => t.id)]],
      );
      expect(spots).toEqual([{ id: replies.find((r) => r.status === 201)!.body.class_instance_id, spots_taken: 1 }]);
      const [pass] = await app.sql<{ visits_used: Record<string, number> }>('select visits_used from issued_pass where id = ?', [
        client.issuedPassId,
      ]);
      expect(pass.visits_used).toEqual({ GYM: 1 });
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );
});
