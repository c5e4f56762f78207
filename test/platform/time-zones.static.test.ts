import { describe, expect, it } from 'vitest';
import { localDateOf, localTimeOf, zonedInstant } from '../../src/platform/time.ts';

// src/platform/time.ts reads a zone's wall clock as the instant moved by the zone's offset, which
// it keeps per UTC hour (both ends of the hour checked, so an hour with a transition in it asks
// Intl per instant). Held here against Intl itself, instant by instant, across the transitions of
// zones with whole-hour, half-hour and 45-minute offsets and DST steps, twice-yearly Ramadan
// changes (Casablanca) and DST that ended (Tehran, 2022). The bookings' DST tests go through HTTP
// (test/bookings, test/spa); this one covers more instants than HTTP could.

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'America/St_Johns',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'Pacific/Chatham',
  'Africa/Casablanca',
  'Asia/Tehran',
  'America/Sao_Paulo',
];
const FROM = Date.UTC(2021, 0, 1);
const TO = Date.UTC(2028, 0, 1);
const HOUR = 3_600_000;

const formatters = new Map(
  ZONES.map((timeZone) => [
    timeZone,
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    }),
  ]),
);

function byIntl(ms: number, timeZone: string): string {
  const parts = Object.fromEntries(
    formatters
      .get(timeZone)!
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

const ours = (ms: number, timeZone: string) => `${localDateOf(new Date(ms), timeZone)} ${localTimeOf(new Date(ms), timeZone)}`;

describe.each(ZONES)('%s', (zone) => {
  const reference = (ms: number) => byIntl(ms, zone);

  it("the wall clock of every 37th minute from 2021 to 2027, and of every 7th second of each hour with a transition, is Intl's", () => {
    const wrong: string[] = [];
    const check = (ms: number) => {
      const expected = reference(ms);
      if (ours(ms, zone) !== expected) wrong.push(`${new Date(ms).toISOString()}: ${ours(ms, zone)}, Intl ${expected}`);
    };
    for (let ms = FROM; ms < TO; ms += 37 * 60_000 + 13) check(ms);
    let transitions = 0;
    const offset = (ms: number) => Date.parse(`${reference(ms).replace(' ', 'T')}:00Z`) - Math.floor(ms / 60_000) * 60_000;
    for (let hour = FROM; hour < TO; hour += HOUR) {
      // A transition at the hour's first millisecond or inside it.
      if (offset(hour - 1) === offset(hour + HOUR - 1)) continue;
      transitions++;
      for (let ms = hour - 60_000; ms <= hour + HOUR; ms += 7_000) check(ms);
      for (const ms of [hour - 1, hour, hour + HOUR - 1]) check(ms);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    // The zones that change their clocks did in these years (Tehran until 2022), so the slow path ran.
    if (!['UTC', 'Asia/Kathmandu', 'America/Sao_Paulo'].includes(zone)) expect(transitions).toBeGreaterThan(0);
  }, 60_000);

  it('zonedInstant finds the instant of each wall time of a quarter hour, the earlier one in a fold, none in a gap', () => {
    const wrong: string[] = [];
    for (let ms = Date.UTC(2026, 0, 1); ms < Date.UTC(2027, 0, 1); ms += 15 * 60_000) {
      const [date, time] = reference(ms).split(' ');
      const found = zonedInstant(date, time, zone);
      // The earliest instant the zone's clock shows this minute at: a fold shows it twice.
      const earliest = [ms - 2 * HOUR, ms - HOUR, ms - HOUR / 2, ms].find((t) => reference(t) === `${date} ${time}`)!;
      if (found?.getTime() !== earliest)
        wrong.push(`${date} ${time}: ${found?.toISOString()}, expected ${new Date(earliest).toISOString()}`);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    // A wall time no instant shows (the spring-forward gap) has none.
    for (let hour = Date.UTC(2026, 0, 1); hour < Date.UTC(2027, 0, 1); hour += HOUR) {
      const before = reference(hour - 1);
      const after = reference(hour);
      const gap = Date.parse(`${after.replace(' ', 'T')}:00Z`) - Date.parse(`${before.replace(' ', 'T')}:00Z`) - 60_000;
      if (gap <= 0) continue;
      const missing = new Date(
        Date.parse(`${before.replace(' ', 'T')}:00Z`) + 60_000 + Math.floor(gap / 2 / 60_000) * 60_000,
      ).toISOString();
      expect(zonedInstant(missing.slice(0, 10), missing.slice(11, 16), zone), `${zone} ${missing}`).toBeUndefined();
    }
  }, 60_000);
});
