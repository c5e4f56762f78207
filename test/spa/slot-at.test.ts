import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBookedIntervals, spaDaySlots, spaSlotAt, type BookedInterval } from '../../src/modules/spa/availability.ts';
import type { Provider } from '../../src/modules/providers/index.ts';
import { timeOfMinutes, weekdays } from '../../src/platform/time.ts';
import { useApp } from '../support/app.ts';

// A booking checks its one slot (spaSlotAt) instead of building the whole day: it must answer
// exactly what the availability lists for that time (spaDaySlots), whatever the zone, the DST day,
// the opening hours, the duration and the appointments already booked.

const app = useApp();
let booked: BookedInterval[] = [];
let restore: () => void;
beforeAll(() => {
  restore = registerBookedIntervals(async (_em, _id, from, to) => booked.filter((b) => b.start < to && b.end > from));
});
afterAll(() => restore?.());

const zones = ['Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'Australia/Lord_Howe', 'UTC'];
// DST days of Berlin and New York, the days around them, and ordinary ones.
const dates = ['2026-03-08', '2026-03-29', '2026-03-30', '2026-10-25', '2026-11-01', '2026-11-02', '2026-06-15', '2026-04-05'];
const quarter = fc.integer({ min: 0, max: 96 }).map((q) => timeOfMinutes(Math.min(q * 15, 1439)));
const interval = fc
  .tuple(quarter, quarter, fc.integer({ min: 0, max: 14 }))
  .map(([a, b, skew]) => ({ open: a < b ? a : b, close: a < b ? b : a, skew }))
  .map(({ open, close, skew }) => ({
    open: timeOfMinutes(Math.min(Number(open.slice(0, 2)) * 60 + Number(open.slice(3)) + skew, 1439)),
    close,
  }));

describe('spaSlotAt', () => {
  it('equals the day’s slot of the same time, or is undefined exactly when the day has none', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...zones),
        fc.constantFrom(...dates),
        fc.array(interval, { minLength: 0, maxLength: 3 }),
        fc.constantFrom(15, 30, 45, 60, 90, 120, 180),
        fc.integer({ min: 1, max: 2 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 48 * 4 }), fc.integer({ min: 1, max: 12 })), { maxLength: 6 }),
        fc.integer({ min: 0, max: 24 * 60 - 1 }),
        async (timezone, date, intervals, duration, roomCapacity, bookings, asked) => {
          const openingHours = Object.fromEntries(weekdays.map((d) => [d, intervals.map(({ open, close }) => ({ open, close }))]));
          const provider = { id: 'prov_test', timezone, openingHours, roomCapacity } as unknown as Provider;
          const dayStart = new Date(`${date}T00:00:00Z`).getTime() - 14 * 3600_000;
          booked = bookings.map(([q, len]) => ({
            start: new Date(dayStart + q * 15 * 60_000),
            end: new Date(dayStart + (q + len) * 15 * 60_000),
          }));
          const now = new Date(`${date}T06:00:00Z`);
          const em = app.orm.em.fork();
          const day = await spaDaySlots(em, provider, date, duration, now);
          for (const time of [...day.map((s) => s.time), timeOfMinutes(asked), timeOfMinutes(asked - (asked % 15))]) {
            const one = await spaSlotAt(em, provider, date, time, duration, now);
            expect(one, `${timezone} ${date} ${time} ${JSON.stringify(intervals)}`).toEqual(day.find((s) => s.time === time));
          }
        },
      ),
      { numRuns: 300 },
    );
  }, 120_000);
});
