// Wall-clock time in a provider's IANA zone, from Intl alone (no tz library): dates and times
// the client sees are local; instants are UTC. DST gaps and folds are handled explicitly.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export function isTimeZone(value: string): boolean {
  try {
    formatter(value);
    return true;
  } catch {
    return false;
  }
}

interface Wall { date: string; time: string; seconds: number }

// Both conversions are pure functions of their arguments and Intl's formatToParts is slow (a spa
// booking converts every appointment of the day), so results are remembered, a bounded number.
const MEMO_MAX = 20_000;
const walls = new Map<string, Wall>();
const instants = new Map<string, number | undefined>();

function remember<V>(memo: Map<string, V>, key: string, value: V): V {
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(key, value);
  return value;
}

function wallOf(instant: Date, timeZone: string): Wall {
  const key = `${timeZone} ${instant.getTime()}`;
  const known = walls.get(key);
  if (known) return known;
  const parts = Object.fromEntries(formatter(timeZone).formatToParts(instant).map((p) => [p.type, p.value]));
  return remember(walls, key, { date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}`, seconds: Number(parts.second) });
}

/** The local calendar date (YYYY-MM-DD) of an instant in a zone. */
export const localDateOf = (instant: Date, timeZone: string): string => wallOf(instant, timeZone).date;
/** The local wall time (HH:MM) of an instant in a zone. */
export const localTimeOf = (instant: Date, timeZone: string): string => wallOf(instant, timeZone).time;

/** Minutes the zone is ahead of UTC at an instant. */
function offsetMinutes(instant: Date, timeZone: string): number {
  const w = wallOf(instant, timeZone);
  const asUtc = Date.UTC(+w.date.slice(0, 4), +w.date.slice(5, 7) - 1, +w.date.slice(8, 10), +w.time.slice(0, 2), +w.time.slice(3, 5), w.seconds);
  return Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
}

/**
 * The instant at which the zone's wall clock shows `date` `time`, or undefined when that local
 * time does not exist (the spring-forward gap). In the autumn fold the earlier instant is taken.
 */
export function zonedInstant(date: string, time: string, timeZone: string): Date | undefined {
  const key = `${timeZone} ${date} ${time}`;
  // A new Date each time: callers may hold or change theirs.
  const known = instants.has(key) ? instants.get(key) : remember(instants, key, zonedInstantOnce(date, time, timeZone));
  return known === undefined ? undefined : new Date(known);
}

function zonedInstantOnce(date: string, time: string, timeZone: string): number | undefined {
  const naive = Date.UTC(+date.slice(0, 4), +date.slice(5, 7) - 1, +date.slice(8, 10), +time.slice(0, 2), +time.slice(3, 5));
  const candidates = new Set<number>();
  // The offset at naive ± 1 day brackets both sides of any transition near this wall time.
  for (const probe of [naive - 86_400_000, naive, naive + 86_400_000]) {
    candidates.add(naive - offsetMinutes(new Date(probe), timeZone) * 60_000);
  }
  const matches = [...candidates].filter((t) => {
    const w = wallOf(new Date(t), timeZone);
    return w.date === date && w.time === time;
  }).sort((a, b) => a - b);
  return matches.length ? matches[0] : undefined;
}

/** ISO weekday key of a calendar date: mon … sun. */
export function weekdayOf(date: string): Weekday {
  return weekdays[(new Date(`${date}T12:00:00Z`).getUTCDay() + 6) % 7];
}

export const weekdays = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof weekdays)[number];

/** `date` plus `days` calendar days (YYYY-MM-DD). */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export const minutesOf = (time: string): number => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
export const timeOfMinutes = (m: number): string => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
