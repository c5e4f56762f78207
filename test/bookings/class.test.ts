import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged, expectValidationError, unix } from '../support/assertions.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

const visitsUsed = async (issuedPassId: string) => {
  const [row] = await app.sql<{ visits_used: Record<string, number> }>('select visits_used from issued_pass where id = ?', [issuedPassId]);
  return row.visits_used.GYM ?? 0;
};
const confirm = (sessionId: string, body: Record<string, unknown>, idempotencyKey?: string) =>
  v3(app, `/bookings/class/${sessionId}/confirm`, { key: w.reseller.key, body, idempotencyKey });

describe('POST /bookings/class › covered: booked now', () => {
  it('takes one of the month’s visits and a spot; the booking is PENDING with the local date and time', async () => {
    const instance = await instanceIn(app, w.gym.classId, 50, { capacity: 5 });
    const outbox = await lastOutboxId(app);
    const res = await book.cls(app, w, { class_instance_id: instance.id, client_id: w.client.id, first_name: 'ada' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      object: 'class_booking_initiation',
      copay_required: false,
      additional_visits_required: false,
      status: 'PENDING',
      class_instance_id: instance.id,
      class_name: 'Morning Flow',
      provider_name: 'Silver Gym',
      visits_deducted: 1,
      // 2026-03-04T10:00Z is 11:00 in Berlin
      date: '2026-03-04',
      time: '11:00',
      scheduled_for: unix('2026-03-04T10:00:00Z'),
    });
    expect(await visitsUsed(w.client.issuedPassId)).toBe(1);
    const [spots] = await app.sql<{ spots_taken: number }>('select spots_taken from class_instance where id = ?', [instance.id]);
    expect(spots.spots_taken).toBe(1);
    const events = await outboxSince(app, outbox);
    expect(events.map((e) => e.payload.type)).toEqual(['booking.created']);
    expect(events[0].payload.data.object).toMatchObject({ id: res.body.booking_id, type: 'class', class_instance_id: instance.id });

    // The same client again: 409 already_booked, nothing written.
    const before = await dbState(app);
    expectError(await book.cls(app, w, { class_instance_id: instance.id, user_pass_id: w.client.issuedPassId }), 409, 'already_booked');
    await expectUnchanged(app, before);
  });

  it('a full instance › 409 class_full; a cancelled or started one › 409 class_not_bookable', async () => {
    const full = await instanceIn(app, w.gym.classId, 30, { capacity: 3, spotsTaken: 3 });
    const before = await dbState(app);
    expectError(await book.cls(app, w, { class_instance_id: full.id, client_id: w.client.id }), 409, 'class_full');
    await expectUnchanged(app, before);
    const started = await instanceIn(app, w.gym.classId, -1);
    expectError(await book.cls(app, w, { class_instance_id: started.id, client_id: w.client.id }), 409, 'class_not_bookable');
  });
});

describe('POST /bookings/class › visits used up: additional_visits_required', () => {
  it('opens a session with the counters and price; the confirm buys visits, debits cost × n and books', async () => {
    const client = await anotherClient(app, w, 'visits@example.com');
    await app.sql(`update issued_pass set visits_used = '{"GYM": 8}', visits_period = '2026-03' where id = ?`, [client.issuedPassId]);
    // The counters and the ledger stay equal: the 8 visits are on the ledger too.
    await app.sql(
      `insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, created_at)
      values ('vtxn_01JTESTSEED00000000000000', ?, ?, ?, 'GYM', '2026-03', 8, 'BOOKING', now())`,
      [w.reseller.id, client.id, client.issuedPassId],
    );
    const instance = await instanceIn(app, w.gym.classId, 72);
    const res = await book.cls(app, w, { class_instance_id: instance.id, client_id: client.id });
    expect(res.status, res.text).toBe(201);
    // The pass costs 8000 a month for 8 visits: one more visit costs 1000.
    expect(res.body).toMatchObject({
      copay_required: false,
      additional_visits_required: true,
      status: 'AWAITING_VISITS',
      visits_used: 8,
      max_visits: 8,
      cost_per_visit: 1000,
      session_expires_at: unix('2026-03-03T08:00:00Z'),
    });
    expect(res.body).not.toHaveProperty('booking_id');

    // The wrong body for this session type is a 400 naming the field.
    expectValidationError(await confirm(res.body.session_id, { copay_package_id: w.copayGym.optionId }), 'copay_package_id');
    expectValidationError(await confirm(res.body.session_id, { number_of_visits: 51, duration: 'MONTHLY' }), 'number_of_visits');
    expectValidationError(await confirm(res.body.session_id, { number_of_visits: 2, duration: 'WEEKLY' }), 'duration');

    const ledger = await businessLedger(app, w.reseller.id);
    const done = await confirm(res.body.session_id, { number_of_visits: 3, duration: 'MONTHLY' });
    expect(done.status, done.text).toBe(201);
    expect(done.body).toMatchObject({
      object: 'booking',
      status: 'PENDING',
      type: 'class',
      visits_deducted: 1,
      class_instance_id: instance.id,
    });
    expect((await businessLedger(app, w.reseller.id)).balance).toBe(ledger.balance - 3000);
    const [entitlement] = await app.sql<{ visits_total: number; visits_used: number; valid_until: Date }>(
      'select visits_total, visits_used, valid_until from visit_entitlement where client_id = ?',
      [client.id],
    );
    expect(entitlement).toMatchObject({ visits_total: 3, visits_used: 1 });
    expect(new Date(entitlement.valid_until).toISOString()).toBe('2026-04-01T00:00:00.000Z');

    // The next class of the month uses a bought visit: booked now, no session.
    const next = await book.cls(app, w, { class_instance_id: (await instanceIn(app, w.gym.classId, 96)).id, client_id: client.id });
    expect(next.body).toMatchObject({ status: 'PENDING', visits_deducted: 1 });
    expectError(await confirm(res.body.session_id, { number_of_visits: 3, duration: 'MONTHLY' }), 409, 'session_already_confirmed');
  });
});

describe('POST /bookings/class › tier not covered: copay_required', () => {
  it('offers the provider’s co-pay options; the confirm debits the option and books', async () => {
    const client = await anotherClient(app, w, 'copay@example.com');
    const instance = await instanceIn(app, w.copayGym.classId, 30);
    const res = await book.cls(app, w, { class_instance_id: instance.id, client_id: client.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      copay_required: true,
      additional_visits_required: false,
      status: 'AWAITING_COPAY',
      provider_name: 'Gold Gym',
    });
    expect(res.body.copay_options).toEqual([
      expect.objectContaining({ id: w.copayGym.optionId, max_visits: 3, visit_duration_days: 30, client_copay_amount: 2500 }),
    ]);

    expectValidationError(await confirm(res.body.session_id, { number_of_visits: 1, duration: 'MONTHLY' }), 'number_of_visits');
    expectValidationError(await confirm(res.body.session_id, { copay_package_id: 'copay_01JZZZZZZZZZZZZZZZZZZZZZZZ' }), 'copay_package_id');
    const ledger = await businessLedger(app, w.reseller.id);
    const done = await confirm(res.body.session_id, { copay_package_id: w.copayGym.optionId });
    expect(done.status, done.text).toBe(201);
    expect((await businessLedger(app, w.reseller.id)).balance).toBe(ledger.balance - 2500);

    // The package holds 3 visits at that provider for 30 days: the next class there is booked now.
    const next = await book.cls(app, w, { class_instance_id: (await instanceIn(app, w.copayGym.classId, 40)).id, client_id: client.id });
    expect(next.body).toMatchObject({ status: 'PENDING', copay_required: false });
  });

  it('a provider the pass does not cover and without co-pay options › 403 provider_not_covered', async () => {
    const client = await anotherClient(app, w, 'nocover@example.com');
    await app.sql('delete from copay_option where provider_id = ? and id <> ?', [w.copayGym.id, w.copayGym.optionId]);
    await app.sql('update copay_option set currency = ? where id = ?', ['USD', w.copayGym.optionId]);
    try {
      const before = await dbState(app);
      expectError(
        await book.cls(app, w, { class_instance_id: (await instanceIn(app, w.copayGym.classId, 30)).id, client_id: client.id }),
        403,
        'provider_not_covered',
      );
      const after = await dbState(app);
      expect({ ...after, class_instance: undefined }).toEqual({ ...before, class_instance: undefined });
    } finally {
      await app.sql('update copay_option set currency = ? where id = ?', ['EUR', w.copayGym.optionId]);
    }
  });
});

describe('POST /bookings/class › bad input', () => {
  it.each([
    ['no instance', { class_instance_id: undefined }, 'class_instance_id'],
    ['neither client_id nor user_pass_id', { client_id: undefined }, 'client_id'],
    ['a last name that is not the client’s', { last_name: 'Byron' }, 'last_name'],
    ['an unknown field', { seats: 2 }, 'seats'],
  ])('%s › 400 naming %s', async (_, extra, param) => {
    const instance = await instanceIn(app, w.gym.classId, 20);
    const before = await dbState(app);
    expectValidationError(await book.cls(app, w, { class_instance_id: instance.id, client_id: w.client.id, ...extra }), param as string);
    await expectUnchanged(app, before);
  });

  it('unknown instance, client or issued pass › 404 naming the field; another reseller’s client › 404', async () => {
    const instance = await instanceIn(app, w.gym.classId, 20);
    expectError(
      await book.cls(app, w, { class_instance_id: 'ci_01JZZZZZZZZZZZZZZZZZZZZZZZ', client_id: w.client.id }),
      404,
      'resource_not_found',
      'class_instance_id',
    );
    expectError(
      await book.cls(app, w, { class_instance_id: instance.id, user_pass_id: 'ipass_01JZZZZZZZZZZZZZZZZZZZZZZZ' }),
      404,
      'resource_not_found',
      'user_pass_id',
    );
    const other = await createBookingWorld(app);
    expectError(
      await book.cls(app, w, { class_instance_id: instance.id, client_id: other.client.id }),
      404,
      'resource_not_found',
      'client_id',
    );
  });

  it('an expired pass › 409 pass_not_active', async () => {
    const client = await anotherClient(app, w, 'expired@example.com');
    await app.sql('update issued_pass set expires_at = ? where id = ?', [new Date('2026-03-01T00:00:00Z'), client.issuedPassId]);
    const instance = await instanceIn(app, w.gym.classId, 20);
    expectError(await book.cls(app, w, { class_instance_id: instance.id, client_id: client.id }), 409, 'pass_not_active');
  });
});
