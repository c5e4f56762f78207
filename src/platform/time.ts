// Wall-clock time in a provider's IANA zone, from Intl alone (no tz library): dates and times
// the client sees are local; instants are UTC. DST gaps and folds are handled explicitly.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
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

interface Wall {
  date: string;
  time: string;
  seconds: number;
}

// Intl's formatToParts is slow (docs/adr/0017-time-zone-offsets-per-hour.md), and a spa booking converts every appointment
// of its day, so results are remembered, a bounded number of each: clearing a memo when it is full
// keeps the code simple, and what is still in use comes back at once.
const MEMO_MAX = 20_000;
const HOUR = 3_600_000;

function remember<V>(memo: Map<string, V>, key: string, value: V): V {
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(key, value);
  return value;
}

/** How far the zone's wall clock is ahead of UTC at `ms`, in ms, as Intl shows it (to the second). */
function offsetByIntl(ms: number, timeZone: string): number {
  const parts = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const asUtc = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * Each zone's offset per UTC hour: the offset at the hour's first and last millisecond, or
 * undefined when they differ (a transition falls inside). Transitions are weeks apart, so equal
 * offsets at both ends hold for the whole hour, and an hour serves every instant in it, where a
 * memo per instant missed on a spa day's every new quarter hour
 * (docs/adr/0017-time-zone-offsets-per-hour.md).
 */
const hourOffsets = new Map<string, number | undefined>();

function offsetAt(ms: number, timeZone: string): number {
  const hour = Math.floor(ms / HOUR) * HOUR;
  const key = `${timeZone} ${hour}`;
  let offset = hourOffsets.get(key);
  if (offset === undefined && !hourOffsets.has(key)) {
    const first = offsetByIntl(hour, timeZone);
    offset = remember(hourOffsets, key, first === offsetByIntl(hour + HOUR - 1, timeZone) ? first : undefined);
  }
  return offset ?? offsetByIntl(ms, timeZone);
}

const two = (n: number) => String(n).padStart(2, '0');

function wallOf(instant: Date, timeZone: string): Wall {
  const ms = instant.getTime();
  // The wall clock read off as UTC fields: the instant (to the second, as Intl shows it) moved by the offset.
  const wall = new Date(Math.floor(ms / 1000) * 1000 + offsetAt(ms, timeZone));
  return {
    date: `${String(wall.getUTCFullYear()).padStart(4, '0')}-${two(wall.getUTCMonth() + 1)}-${two(wall.getUTCDate())}`,
    time: `${two(wall.getUTCHours())}:${two(wall.getUTCMinutes())}`,
    seconds: wall.getUTCSeconds(),
  };
}

/** The local calendar date (YYYY-MM-DD) of an instant in a zone. */
export const localDateOf = (instant: Date, timeZone: string): string => wallOf(instant, timeZone).date;
/** The local wall time (HH:MM) of an instant in a zone. */
export const localTimeOf = (instant: Date, timeZone: string): string => wallOf(instant, timeZone).time;

/** Minutes the zone is ahead of UTC at an instant. */
const offsetMinutes = (instant: Date, timeZone: string): number => Math.round(offsetAt(instant.getTime(), timeZone) / 60_000);

const instants = new Map<string, number | undefined>();

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
  const matches = [...candidates]
    .filter((t) => {
      const w = wallOf(new Date(t), timeZone);
      return w.date === date && w.time === time;
    })
    .sort((a, b) => a - b);
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
