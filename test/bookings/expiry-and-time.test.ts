import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged, expectValidationError, unix } from '../support/assertions.ts';
import { book, createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { clientOnPass, expectBookingInvariants, worldScope } from '../support/bookings-invariants.ts';
import { createClassInstance, createProvider, createSpaService, everyDay } from '../support/catalog.ts';
import { dbState } from '../support/db-state.ts';
import { businessLedger, issuePass } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

// Time in bookings (docs/partner-guide.md "Bookings"): sessions last 24 hours, then 422 session_expired with
// nothing written; dates and times are the provider's wall clock, instants are UTC, across DST
// changes (a local time the clocks skip is a 400 on `time`); the free-cancellation window is
// measured to the instant; a visit goes back to the pass counter only while it is that month's.

const NOW = new Date('2026-03-02T08:00:00Z');
const app = useApp({}, { now: NOW });
const HOUR = 3600_000;
let w: BookingWorld;
let ny: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
  ny = await createBookingWorld(app, { timezone: 'America/New_York' });
});

let emails = 0;
const email = () => `time.${++emails}@example.com`;
const newClient = async (world: BookingWorld) => {
  const issued = await issuePass(app, world.reseller, world.passId, { email: email() });
  return { id: issued.client_id, issuedPassId: issued.id };
};
const later = (ms: number) => app.clock.set(new Date(app.clock.now().getTime() + ms));

interface Opened {
  confirm: () => ReturnType<typeof v3>;
}

/** Three kinds of session, each opened now for a booking 50 hours ahead. */
const sessionKinds = [
  [
    'a spa co-pay session',
    async (): Promise<Opened> => {
      const client = await newClient(w);
      const time = `${String(10 + (emails % 7)).padStart(2, '0')}:00`;
      const res = await book.spa(app, w, {
        date: '2026-03-05',
        time,
        spa_id: w.copaySpa.id,
        service_ids: [w.copaySpa.sauna],
        client_id: client.id,
      });
      expect(res.body, res.text).toMatchObject({ status: 'AWAITING_COPAY', session_expires_at: unix('2026-03-03T08:00:00Z') });
      return { confirm: () => v3(app, `/bookings/spa/${res.body.session_id}/confirm`, { key: w.reseller.key, method: 'POST' }) };
    },
  ],
  [
    'a class co-pay session',
    async (): Promise<Opened> => {
      const client = await newClient(w);
      const instance = await createClassInstance(app, w.copayGym.classId, new Date(NOW.getTime() + 50 * HOUR));
      const res = await book.cls(app, w, { class_instance_id: instance.id, client_id: client.id });
      expect(res.body, res.text).toMatchObject({ status: 'AWAITING_COPAY', session_expires_at: unix('2026-03-03T08:00:00Z') });
      return {
        confirm: () =>
          v3(app, `/bookings/class/${res.body.session_id}/confirm`, {
            key: w.reseller.key,
            body: { copay_package_id: w.copayGym.optionId },
          }),
      };
    },
  ],
  [
    'a class extra-visits session',
    async (): Promise<Opened> => {
      const client = await clientOnPass(app, w, { gymVisits: 1, price: 3000, email: email() });
      const first = await createClassInstance(app, w.gym.classId, new Date(NOW.getTime() + 40 * HOUR));
      expect((await book.cls(app, w, { class_instance_id: first.id, client_id: client.id })).body).toMatchObject({ status: 'PENDING' });
      const instance = await createClassInstance(app, w.gym.classId, new Date(NOW.getTime() + 50 * HOUR));
      const res = await book.cls(app, w, { class_instance_id: instance.id, client_id: client.id });
      expect(res.body, res.text).toMatchObject({ status: 'AWAITING_VISITS', session_expires_at: unix('2026-03-03T08:00:00Z') });
      return {
        confirm: () =>
          v3(app, `/bookings/class/${res.body.session_id}/confirm`, {
            key: w.reseller.key,
            body: { number_of_visits: 1, duration: 'MONTHLY' },
          }),
      };
    },
  ],
] as const;

describe('sessions last 24 hours', () => {
  it.each(sessionKinds)(
    '%s › confirmable 1 s before its 24 h are up; at 24 h and later 422 session_expired, nothing written',
    async (_, open) => {
      const early = await open();
      const expired = await open();
      const debits = (await businessLedger(app, w.reseller.id)).rows;
      app.clock.set(new Date(NOW.getTime() + 24 * HOUR - 1000));
      const ok = await early.confirm();
      expect(ok.status, ok.text).toBe(201);
      expect((await businessLedger(app, w.reseller.id)).rows).toBe(debits + 1);

      app.clock.set(new Date(NOW.getTime() + 24 * HOUR));
      const before = await dbState(app);
      expectError(await expired.confirm(), 422, 'session_expired');
      await expectUnchanged(app, before);
      later(30 * 24 * HOUR);
      expectError(await expired.confirm(), 422, 'session_expired');
      await expectUnchanged(app, before);
    },
  );
});

describe('class bookings at a provider in America/New_York, around the DST change of 2026-03-08 (02:00 EST → 03:00 EDT)', () => {
  it.each([
    ['the day before, 10:00 EST (UTC−5)', '2026-03-07T15:00:00Z', '2026-03-07', '10:00'],
    ['late evening: the UTC date is the next day', '2026-03-08T04:30:00Z', '2026-03-07', '23:30'],
    ['the night of the change, 01:30 EST', '2026-03-08T06:30:00Z', '2026-03-08', '01:30'],
    ['the instant of the change: the clocks show 03:00 EDT', '2026-03-08T07:00:00Z', '2026-03-08', '03:00'],
    ['the day after, 10:00 EDT (UTC−4)', '2026-03-09T14:00:00Z', '2026-03-09', '10:00'],
  ])('%s › date and time on the provider’s wall clock, scheduled_for the instant', async (_, instant, date, time) => {
    const client = await newClient(ny);
    const instance = await createClassInstance(app, ny.gym.classId, new Date(instant), { timezone: 'America/New_York' });
    const res = await book.cls(app, ny, { class_instance_id: instance.id, client_id: client.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'PENDING', date, time, scheduled_for: unix(instant) });
    const booking = await v3(app, `/bookings/${res.body.booking_id}`, { key: ny.reseller.key });
    expect(booking.body).toMatchObject({ date, time, scheduled_for: unix(instant) });
  });
});

describe('spa times across DST changes', () => {
  it.each([
    ['New York, the day before the change: 10:00 EST', 'ny', '2026-03-07', '2026-03-07T15:00:00Z'],
    ['New York, the day of the change: 10:00 EDT', 'ny', '2026-03-08', '2026-03-08T14:00:00Z'],
    ['New York, the day after the change: 10:00 EDT', 'ny', '2026-03-09', '2026-03-09T14:00:00Z'],
    ['Berlin, the day before its change (2026-03-29): 10:00 CET', 'berlin', '2026-03-28', '2026-03-28T09:00:00Z'],
    ['Berlin, the day after its change: 10:00 CEST', 'berlin', '2026-03-30', '2026-03-30T08:00:00Z'],
  ])('%s › resolves to the right instant, and the slot at that instant is taken', async (_, zone, date, instant) => {
    const world = zone === 'ny' ? ny : w;
    const client = await newClient(world);
    const res = await book.spa(app, world, {
      date,
      time: '10:00',
      spa_id: world.spa.id,
      service_ids: [world.spa.sauna],
      client_id: client.id,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ date, time: '10:00', scheduled_for: unix(instant) });
    const [row] = await app.sql<{ starts_at: Date; ends_at: Date }>('select starts_at, ends_at from booking where id = ?', [
      res.body.booking_id,
    ]);
    expect(new Date(row.starts_at).toISOString()).toBe(new Date(instant).toISOString());
    expect(new Date(row.ends_at).getTime() - new Date(row.starts_at).getTime()).toBe(15 * 60_000);
    const availability = await v3(app, `/spas/${world.spa.id}/availability?date=${date}&service_ids=${world.spa.sauna}`, {
      key: world.reseller.key,
    });
    expect(availability.body.slots.find((s: { time: string }) => s.time === '10:00')).toEqual({
      time: '10:00',
      available: false,
      scheduled_for: unix(instant),
    });
  });

  describe('a spa open around the clock in America/New_York (one room)', () => {
    let spa: { id: string; service: string };
    beforeAll(async () => {
      const provider = await createProvider(app, {
        category: 'SPA',
        tier: 'SILVER',
        name: 'Night Spa',
        timezone: 'America/New_York',
        openingHours: everyDay('00:00', '23:45'),
        roomCapacity: 1,
      });
      spa = {
        id: provider.id,
        service: (await createSpaService(app, provider.id, { name: 'Steam', durationMinutes: 15, credits: 0, copayAmount: null })).id,
      };
    });
    const bookAt = (world: BookingWorld, clientId: string, date: string, time: string) =>
      book.spa(app, world, { date, time, spa_id: spa.id, service_ids: [spa.service], client_id: clientId });

    it.each(['02:00', '02:15', '02:30', '02:45'])(
      '%s on 2026-03-08 does not exist there › 400 on `time`, nothing written',
      async (time) => {
        const before = await dbState(app);
        expectValidationError(await bookAt(ny, ny.client.id, '2026-03-08', time), 'time');
        await expectUnchanged(app, before);
      },
    );

    it('around the gap: 01:45 EST and 03:00 EDT are back to back in real time (one room holds both); the day’s slots skip 02:xx', async () => {
      const availability = await v3(app, `/spas/${spa.id}/availability?date=2026-03-08&service_ids=${spa.service}`, {
        key: ny.reseller.key,
      });
      const times = availability.body.slots.map((s: { time: string }) => s.time);
      expect(times.filter((t: string) => t.startsWith('02:'))).toEqual([]);
      expect(times).toContain('01:45');
      expect(times).toContain('03:00');
      // 00:00 to 23:45 is 95 quarter hours; the four of the skipped hour do not exist.
      expect(times).toHaveLength(95 - 4);
      const a = await bookAt(ny, (await newClient(ny)).id, '2026-03-08', '01:45');
      const b = await bookAt(ny, (await newClient(ny)).id, '2026-03-08', '03:00');
      expect([a.status, b.status], a.text + b.text).toEqual([201, 201]);
      expect(a.body.scheduled_for).toBe(unix('2026-03-08T06:45:00Z'));
      expect(b.body.scheduled_for).toBe(unix('2026-03-08T07:00:00Z'));
      await expectBookingInvariants(app, worldScope(ny));
    });

    it('the autumn fold (2026-11-01 01:30 happens twice) › the first 01:30 (EDT), once; 02:00 is EST', async () => {
      app.clock.set(new Date('2026-10-26T12:00:00Z'));
      const autumn = await createBookingWorld(app, { timezone: 'America/New_York' });
      const first = await bookAt(autumn, autumn.client.id, '2026-11-01', '01:30');
      expect(first.status, first.text).toBe(201);
      expect(first.body.scheduled_for).toBe(unix('2026-11-01T05:30:00Z'));
      // The same wall time is the same instant: the one room is taken.
      expectError(await bookAt(autumn, (await newClient(autumn)).id, '2026-11-01', '01:30'), 409, 'slot_unavailable');
      const two = await bookAt(autumn, (await newClient(autumn)).id, '2026-11-01', '02:00');
      expect(two.body.scheduled_for).toBe(unix('2026-11-01T07:00:00Z'));
    });
  });

  it('Berlin’s gap (2026-03-29 02:30) › 400 on `time`', async () => {
    const night = await createProvider(app, {
      category: 'SPA',
      tier: 'SILVER',
      timezone: 'Europe/Berlin',
      openingHours: everyDay('00:00', '23:45'),
    });
    const service = await createSpaService(app, night.id, { durationMinutes: 15, credits: 0, copayAmount: null });
    const before = await dbState(app);
    expectValidationError(
      await book.spa(app, w, { date: '2026-03-29', time: '02:30', spa_id: night.id, service_ids: [service.id], client_id: w.client.id }),
      'time',
    );
    await expectUnchanged(app, before);
  });
});

describe('the free-cancellation window, to the instant', () => {
  // Silver Spa: free until 24 h before the start, then 50% (the catalogue factory's defaults).
  it.each([
    // 10:00 in Berlin on 2026-03-12 is 09:00Z, 11:00 is 10:00Z.
    ['exactly 24 h before the start › FULL', '10:00', '2026-03-11T09:00:00Z', 'FULL', 10],
    ['1 s later › LATE, half the credits', '11:00', '2026-03-11T10:00:01Z', 'LATE', 5],
  ] as const)('%s', async (_, time, cancelAt, policy, credits) => {
    const client = await newClient(w);
    const res = await book.spa(app, w, { date: '2026-03-12', time, spa_id: w.spa.id, service_ids: [w.spa.sauna], client_id: client.id });
    expect(res.status, res.text).toBe(201);
    app.clock.set(new Date(cancelAt));
    const cancelled = await v3(app, `/bookings/${res.body.booking_id}/cancel`, { key: w.reseller.key, method: 'POST' });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.refund).toMatchObject({ policy, credits_refunded: credits });
    // The slot is free again for someone else.
    app.clock.set(NOW);
    expect(
      (
        await book.spa(app, w, {
          date: '2026-03-12',
          time,
          spa_id: w.spa.id,
          service_ids: [w.spa.sauna],
          client_id: (await newClient(w)).id,
        })
      ).status,
    ).toBe(201);
  });

  it('at the start instant › 409 not_cancellable, and not reschedulable either', async () => {
    const client = await newClient(w);
    const res = await book.spa(app, w, {
      date: '2026-03-13',
      time: '10:00',
      spa_id: w.spa.id,
      service_ids: [w.spa.sauna],
      client_id: client.id,
    });
    app.clock.set(new Date('2026-03-13T09:00:00Z'));
    const before = await dbState(app);
    expectError(await v3(app, `/bookings/${res.body.booking_id}/cancel`, { key: w.reseller.key, method: 'POST' }), 409, 'not_cancellable');
    expectError(
      await v3(app, `/bookings/${res.body.booking_id}/reschedule`, { key: w.reseller.key, body: { date: '2026-03-14', time: '10:00' } }),
      409,
      'not_reschedulable',
    );
    await expectUnchanged(app, before);
  });
});

describe('a visit goes back to the pass counter only while it is that month’s (README "Bookings", Cancel)', () => {
  const counter = async (issuedPassId: string) => {
    const [row] = await app.sql<{ visits_period: string; visits_used: Record<string, number> }>(
      'select visits_period, visits_used from issued_pass where id = ?',
      [issuedPassId],
    );
    return row;
  };

  it('booked in March (a March visit), cancelled early in April › FULL, no visit restored — whether or not April’s counter has started', async () => {
    app.clock.set(new Date('2026-03-30T08:00:00Z'));
    const march = await createBookingWorld(app);
    const quiet = await newClient(march);
    const busy = await newClient(march);
    const instance = await createClassInstance(app, march.gym.classId, new Date('2026-04-06T10:00:00Z'));
    const booked = [];
    for (const c of [quiet, busy]) {
      const res = await book.cls(app, march, { class_instance_id: instance.id, client_id: c.id });
      expect(res.status, res.text).toBe(201);
      booked.push(res.body.booking_id as string);
    }
    expect(await counter(quiet.issuedPassId)).toEqual({ visits_period: '2026-03', visits_used: { GYM: 1 } });

    app.clock.set(new Date('2026-04-02T08:00:00Z'));
    // The busy client takes an April visit first: its counter is April's now.
    const april = await createClassInstance(app, march.gym.classId, new Date('2026-04-08T10:00:00Z'));
    expect((await book.cls(app, march, { class_instance_id: april.id, client_id: busy.id })).status).toBe(201);
    expect(await counter(busy.issuedPassId)).toEqual({ visits_period: '2026-04', visits_used: { GYM: 1 } });

    const busyCancel = await v3(app, `/bookings/${booked[1]}/cancel`, { key: march.reseller.key, method: 'POST' });
    expect(busyCancel.body.refund).toMatchObject({ policy: 'FULL', visits_restored: 0 });
    // The quiet client's counter still carries March's visit, but March is gone: nothing goes back
    // to it, exactly as for the busy client.
    const quietCancel = await v3(app, `/bookings/${booked[0]}/cancel`, { key: march.reseller.key, method: 'POST' });
    expect(quietCancel.status, quietCancel.text).toBe(200);
    expect(quietCancel.body.refund).toMatchObject({ policy: 'FULL', visits_restored: 0 });
    expect(await app.sql("select delta from visit_transaction where booking_id = ? and reason = 'CANCELLATION'", [booked[0]])).toEqual([]);
    await expectBookingInvariants(app, worldScope(march));
  });
});
