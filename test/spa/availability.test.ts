import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBookedIntervals, type BookedInterval } from '../../src/modules/spa/availability.ts';
import type { OpeningHours } from '../../src/modules/providers/providers.entity.ts';
import { useApp } from '../support/app.ts';
import { createProvider, createSpaService } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { unix } from '../support/assertions.ts';

// Every tested date lies ahead of this instant unless a test moves the clock.
const app = useApp({}, { now: new Date('2026-01-01T00:00:00Z') });
let reseller: TestReseller;

/**
 * Bookings do not exist yet: the test plugs booked intervals in through the seam the bookings
 * module will use, and records the windows it is asked about.
 */
const booked = new Map<string, BookedInterval[]>();
const asked: { providerId: string; from: Date; to: Date }[] = [];
let restoreBookedIntervals: () => void;

beforeAll(async () => {
  reseller = await createReseller(app);
  restoreBookedIntervals = registerBookedIntervals(async (_em, providerId, from, to) => {
    asked.push({ providerId, from, to });
    return (booked.get(providerId) ?? []).filter((b) => b.start < to && b.end > from);
  });
});
afterAll(() => {
  restoreBookedIntervals?.();
});

const at = (iso: string) => new Date(iso);

async function spaWith(opts: { timezone?: string; openingHours: OpeningHours; roomCapacity?: number; durations?: number[] }) {
  const spa = await createProvider(app, {
    category: 'SPA',
    timezone: opts.timezone ?? 'Europe/Berlin',
    openingHours: opts.openingHours,
    roomCapacity: opts.roomCapacity ?? 1,
  });
  const serviceIds: string[] = [];
  for (const durationMinutes of opts.durations ?? [60]) serviceIds.push((await createSpaService(app, spa.id, { durationMinutes })).id);
  return { spaId: spa.id, serviceIds };
}

interface SlotJson {
  time: string;
  available: boolean;
  scheduled_for: number;
}

async function availability(spaId: string, date: string, serviceIds: string[]) {
  const res = await v3(app, `/spas/${spaId}/availability?date=${date}&service_ids=${serviceIds.join(',')}`, { key: reseller.key });
  expect(res.status, res.text).toBe(200);
  return res.body as {
    object: string;
    spa_id: string;
    date: string;
    timezone: string;
    service_ids: string[];
    duration_minutes: number;
    slots: SlotJson[];
  };
}

/** Wall times every 15 minutes from `from` to `to` inclusive. */
function quarterHours(from: string, to: string): string[] {
  const m = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3));
  const out: string[] = [];
  for (let x = m(from); x <= m(to); x += 15) out.push(`${String(Math.floor(x / 60)).padStart(2, '0')}:${String(x % 60).padStart(2, '0')}`);
  return out;
}

const slotAt = (slots: SlotJson[], time: string) => {
  const slot = slots.find((s) => s.time === time);
  if (!slot) throw new Error(`no slot at ${time}`);
  return slot;
};

describe('GET /spas/{spa_id}/availability', () => {
  it('lists 15-minute slots inside each opening interval where the whole appointment fits', async () => {
    // 2026-06-15 is a Monday; two intervals; 60 + 30 minutes of services.
    const { spaId, serviceIds } = await spaWith({
      openingHours: {
        mon: [
          { open: '09:00', close: '12:00' },
          { open: '14:00', close: '16:30' },
        ],
      },
      durations: [60, 30],
    });
    const body = await availability(spaId, '2026-06-15', [serviceIds[1], serviceIds[0]]);
    expect(body).toMatchObject({
      object: 'availability',
      spa_id: spaId,
      date: '2026-06-15',
      timezone: 'Europe/Berlin',
      service_ids: [serviceIds[1], serviceIds[0]],
      duration_minutes: 90,
    });
    // The last start of each interval ends exactly at its close (10:30 + 90 min = 12:00).
    expect(body.slots.map((s) => s.time)).toEqual([...quarterHours('09:00', '10:30'), ...quarterHours('14:00', '15:00')]);
    expect(body.slots.every((s) => s.available)).toBe(true);
    // Berlin is UTC+2 in June.
    expect(slotAt(body.slots, '09:00').scheduled_for).toBe(unix('2026-06-15T07:00:00Z'));
    expect(slotAt(body.slots, '15:00').scheduled_for).toBe(unix('2026-06-15T13:00:00Z'));
  });

  it('starts on the quarter hours of the clock when a spa opens between them', async () => {
    const { spaId, serviceIds } = await spaWith({ openingHours: { mon: [{ open: '09:10', close: '11:00' }] } });
    const body = await availability(spaId, '2026-06-15', serviceIds);
    expect(body.slots.map((s) => s.time)).toEqual(quarterHours('09:15', '10:00'));
  });

  it("a day without opening hours, or an appointment longer than the day's interval › no slots", async () => {
    const { spaId, serviceIds } = await spaWith({
      openingHours: { mon: [{ open: '09:00', close: '10:00' }], tue: [] },
      durations: [60, 15],
    });
    expect((await availability(spaId, '2026-06-16', [serviceIds[0]])).slots).toEqual([]); // Tuesday: empty list
    expect((await availability(spaId, '2026-06-17', [serviceIds[0]])).slots).toEqual([]); // Wednesday: absent
    expect((await availability(spaId, '2026-06-15', serviceIds)).slots).toEqual([]); // 75 minutes in a 60-minute day
    expect((await availability(spaId, '2026-06-15', [serviceIds[0]])).slots.map((s) => s.time)).toEqual(['09:00']);
  });

  it("slots that start at or before the clock's now are unavailable, later ones available", async () => {
    const { spaId, serviceIds } = await spaWith({ openingHours: { mon: [{ open: '09:00', close: '11:00' }] } });
    app.clock.set(at('2026-06-15T07:30:00Z')); // 09:30 in Berlin
    try {
      const body = await availability(spaId, '2026-06-15', serviceIds);
      expect(body.slots.map((s) => [s.time, s.available])).toEqual([
        ['09:00', false],
        ['09:15', false],
        ['09:30', false],
        ['09:45', true],
        ['10:00', true],
      ]);
      expect((await availability(spaId, '2026-06-08', serviceIds)).slots.every((s) => !s.available)).toBe(true);
    } finally {
      app.clock.set(new Date('2026-01-01T00:00:00Z'));
    }
  });
});

describe('room capacity against booked intervals (through registerBookedIntervals)', () => {
  it('capacity 2 › a slot is unavailable while two bookings run at once, available with one', async () => {
    const { spaId, serviceIds } = await spaWith({ openingHours: { mon: [{ open: '09:00', close: '14:00' }] }, roomCapacity: 2 });
    // Local 10:00–11:00 and 10:30–11:30 (Berlin, UTC+2), and back-to-back 12:00–12:30, 12:30–13:00.
    booked.set(spaId, [
      { start: at('2026-06-15T08:00:00Z'), end: at('2026-06-15T09:00:00Z') },
      { start: at('2026-06-15T08:30:00Z'), end: at('2026-06-15T09:30:00Z') },
      { start: at('2026-06-15T10:00:00Z'), end: at('2026-06-15T10:30:00Z') },
      { start: at('2026-06-15T10:30:00Z'), end: at('2026-06-15T11:00:00Z') },
    ]);
    asked.length = 0;
    const body = await availability(spaId, '2026-06-15', serviceIds);
    const state = Object.fromEntries(body.slots.map((s) => [s.time, s.available]));
    expect(state).toEqual({
      '09:00': true, // ends as the first booking starts
      '09:15': true,
      '09:30': true, // overlaps one booking only
      '09:45': false,
      '10:00': false,
      '10:15': false,
      '10:30': false,
      '10:45': false, // both run at once within the hour
      '11:00': true,
      '11:15': true, // only the second booking left
      // Two bookings overlap the hour but never run at the same time: one room stays free.
      '11:30': true,
      '11:45': true,
      '12:00': true,
      '12:15': true,
      '12:30': true,
      '12:45': true,
      '13:00': true,
    });
    // The source is asked once, for the day's window: the first start to the last end.
    expect(asked).toEqual([{ providerId: spaId, from: at('2026-06-15T07:00:00Z'), to: at('2026-06-15T12:00:00Z') }]);
  });

  it("capacity 1 › one overlapping booking makes the slot unavailable; another spa's bookings do not count", async () => {
    const small = await spaWith({ openingHours: { mon: [{ open: '09:00', close: '11:00' }] }, roomCapacity: 1 });
    const neighbour = await spaWith({ openingHours: { mon: [{ open: '09:00', close: '11:00' }] }, roomCapacity: 1 });
    booked.set(small.spaId, [{ start: at('2026-06-15T07:30:00Z'), end: at('2026-06-15T08:00:00Z') }]);
    const body = await availability(small.spaId, '2026-06-15', small.serviceIds);
    expect(body.slots.map((s) => [s.time, s.available])).toEqual([
      ['09:00', false],
      ['09:15', false],
      ['09:30', false],
      ['09:45', false],
      ['10:00', true],
    ]);
    expect((await availability(neighbour.spaId, '2026-06-15', neighbour.serviceIds)).slots.every((s) => s.available)).toBe(true);
  });
});

describe('time zones', () => {
  it.each([
    ['Europe/Berlin', '2026-06-15T07:00:00Z'],
    ['America/New_York', '2026-06-15T13:00:00Z'],
    ['Asia/Tokyo', '2026-06-15T00:00:00Z'],
  ])('%s › the same local hours, each slot at its own instant', async (timezone, firstStart) => {
    const { spaId, serviceIds } = await spaWith({ timezone, openingHours: { mon: [{ open: '09:00', close: '11:00' }] } });
    const body = await availability(spaId, '2026-06-15', serviceIds);
    expect(body.timezone).toBe(timezone);
    expect(body.slots.map((s) => s.time)).toEqual(quarterHours('09:00', '10:00'));
    expect(body.slots.map((s) => s.scheduled_for)).toEqual([0, 1, 2, 3, 4].map((i) => unix(firstStart) + i * 900));
    // The weekday is the local date's: Tuesday the 16th is closed even where it is still Monday in UTC.
    expect((await availability(spaId, '2026-06-16', serviceIds)).slots).toEqual([]);
  });

  it('Europe/Berlin spring forward (2026-03-29) › 02:00–02:45 are not listed; instants right on both sides', async () => {
    const { spaId, serviceIds } = await spaWith({ openingHours: { sun: [{ open: '00:00', close: '06:00' }] } });
    const body = await availability(spaId, '2026-03-29', serviceIds);
    expect(body.slots.map((s) => s.time)).toEqual([...quarterHours('00:00', '01:45'), ...quarterHours('03:00', '05:00')]);
    expect(slotAt(body.slots, '00:00').scheduled_for).toBe(unix('2026-03-28T23:00:00Z')); // CET, UTC+1
    expect(slotAt(body.slots, '01:45').scheduled_for).toBe(unix('2026-03-29T00:45:00Z'));
    expect(slotAt(body.slots, '03:00').scheduled_for).toBe(unix('2026-03-29T01:00:00Z')); // CEST, UTC+2
    expect(slotAt(body.slots, '05:00').scheduled_for).toBe(unix('2026-03-29T03:00:00Z'));
  });

  it('Europe/Berlin spring forward › the appointment must fit in real time, not wall-clock minutes', async () => {
    // 01:00–03:00 on the wall is one real hour that night: only a start at 01:00 fits 60 minutes.
    const { spaId, serviceIds } = await spaWith({ openingHours: { sun: [{ open: '01:00', close: '03:00' }] } });
    const body = await availability(spaId, '2026-03-29', serviceIds);
    expect(body.slots).toEqual([{ time: '01:00', available: true, scheduled_for: unix('2026-03-29T00:00:00Z') }]);
  });

  it('Europe/Berlin fall back (2026-10-25) › each wall time once, at its first occurrence; instants right on both sides', async () => {
    const { spaId, serviceIds } = await spaWith({ openingHours: { sun: [{ open: '00:00', close: '06:00' }] } });
    const body = await availability(spaId, '2026-10-25', serviceIds);
    expect(body.slots.map((s) => s.time)).toEqual(quarterHours('00:00', '05:00'));
    expect(slotAt(body.slots, '00:00').scheduled_for).toBe(unix('2026-10-24T22:00:00Z')); // CEST, UTC+2
    expect(slotAt(body.slots, '02:00').scheduled_for).toBe(unix('2026-10-25T00:00:00Z')); // first 02:00 (CEST)
    expect(slotAt(body.slots, '02:45').scheduled_for).toBe(unix('2026-10-25T00:45:00Z'));
    expect(slotAt(body.slots, '03:00').scheduled_for).toBe(unix('2026-10-25T02:00:00Z')); // CET, UTC+1
    expect(slotAt(body.slots, '05:00').scheduled_for).toBe(unix('2026-10-25T04:00:00Z')); // ends at the 06:00 close
  });

  it('America/New_York spring forward (2026-03-08) › 02:00–02:45 are not listed', async () => {
    const { spaId, serviceIds } = await spaWith({
      timezone: 'America/New_York',
      openingHours: { sun: [{ open: '01:00', close: '04:00' }] },
      durations: [30],
    });
    const body = await availability(spaId, '2026-03-08', serviceIds);
    expect(body.slots.map((s) => s.time)).toEqual([...quarterHours('01:00', '01:45'), ...quarterHours('03:00', '03:30')]);
    expect(slotAt(body.slots, '01:45').scheduled_for).toBe(unix('2026-03-08T06:45:00Z')); // EST, UTC-5
    expect(slotAt(body.slots, '03:00').scheduled_for).toBe(unix('2026-03-08T07:00:00Z')); // EDT, UTC-4
  });
});

const AVAILABILITY = `query($spaId: ID!, $date: Date!, $serviceIds: [ID!]!) {
  spaAvailability(spaId: $spaId, date: $date, serviceIds: $serviceIds) {
    spa { id timezone } date timezone durationMinutes services { id durationMinutes } slots { time startsAt available }
  }
}`;

describe('GraphQL spaAvailability', () => {
  it('answers the same slots as REST, with startsAt instants', async () => {
    const { spaId, serviceIds } = await spaWith({
      openingHours: { sun: [{ open: '00:00', close: '06:00' }] },
      roomCapacity: 1,
      durations: [30, 30],
    });
    booked.set(spaId, [{ start: at('2026-03-29T01:00:00Z'), end: at('2026-03-29T01:30:00Z') }]);
    const res = await gql(app, reseller.key, AVAILABILITY, { spaId, date: '2026-03-29', serviceIds });
    expect(res.body.errors).toBeUndefined();
    const a = res.body.data.spaAvailability;
    expect(a).toMatchObject({
      spa: { id: spaId, timezone: 'Europe/Berlin' },
      date: '2026-03-29',
      timezone: 'Europe/Berlin',
      durationMinutes: 60,
      services: serviceIds.map((id) => ({ id, durationMinutes: 30 })),
    });
    const rest = await availability(spaId, '2026-03-29', serviceIds);
    expect(a.slots).toEqual(
      rest.slots.map((s) => ({
        time: s.time,
        available: s.available,
        startsAt: new Date(s.scheduled_for * 1000).toISOString().replace('.000Z', 'Z'),
      })),
    );
    expect(a.slots.find((s: { time: string }) => s.time === '03:00')).toEqual({
      time: '03:00',
      startsAt: '2026-03-29T01:00:00Z',
      available: false,
    });
    // 01:45 runs an hour of real time across the gap, into the booking; 01:00 ends as it starts.
    expect(a.slots.find((s: { time: string }) => s.time === '01:45')).toEqual({
      time: '01:45',
      startsAt: '2026-03-29T00:45:00Z',
      available: false,
    });
    expect(a.slots.find((s: { time: string }) => s.time === '01:00')).toEqual({
      time: '01:00',
      startsAt: '2026-03-29T00:00:00Z',
      available: true,
    });
  });
});
