import type { EntityManager } from '@mikro-orm/postgresql';
import { addDays, minutesOf, timeOfMinutes, weekdayOf, zonedInstant } from '../../platform/time.ts';
import type { Provider } from '../providers/index.ts';

// Spa availability for one local date: 15-minute slots inside the provider's opening hours,
// each available when it starts in the future and the room capacity is not used up by bookings
// running at the same time. Pure apart from the booked-intervals source, which bookings plug in.

export const SLOT_MINUTES = 15;

export interface BookedInterval {
  start: Date;
  end: Date;
}

/** Appointments already holding a room at a provider that overlap [from, to). */
export type BookedIntervals = (em: EntityManager, providerId: string, from: Date, to: Date) => Promise<BookedInterval[]>;

/**
 * Appointments overlapping [from, to), read ahead of the check that uses them: by a booking that
 * expects its instants before it reads the spa (a co-pay confirm, a covered spa booking), with the
 * read issued right behind the spa's locking read (src/modules/bookings/book-spa.ts).
 */
export interface BookedAhead {
  from: Date;
  to: Date;
  intervals: BookedInterval[];
}

/** Until the bookings module exists nothing is booked; it registers its own source at import time. */
const noBookingsYet: BookedIntervals = async () => [];
let bookedIntervals: BookedIntervals = noBookingsYet;

/**
 * The registration point for the bookings module (its source reads PENDING/CONFIRMED spa bookings).
 * Returns a function that restores the previous source.
 */
export function registerBookedIntervals(source: BookedIntervals): () => void {
  const previous = bookedIntervals;
  bookedIntervals = source;
  return () => {
    bookedIntervals = previous;
  };
}

/** The registered source's appointments overlapping [from, to), for spaSlotAt's `ahead`. */
export async function readBookedAhead(em: EntityManager, providerId: string, from: Date, to: Date): Promise<BookedAhead> {
  return { from, to, intervals: await bookedIntervals(em, providerId, from, to) };
}

export interface Slot {
  /** Local wall-clock time, HH:MM. */
  time: string;
  /** The instant the appointment starts. */
  startsAt: Date;
  available: boolean;
}

interface Candidate {
  time: string;
  start: Date;
  end: Date;
}

/**
 * The instant the zone's clock reaches `minutes` after midnight of `date` (1440 = the next
 * midnight). A wall time inside a spring-forward gap is reached when the clock jumps past it.
 */
function wallInstant(date: string, minutes: number, timeZone: string): Date {
  for (let m = minutes; m < minutes + 24 * 60; m++) {
    const day = m >= 1440 ? addDays(date, Math.floor(m / 1440)) : date;
    const at = zonedInstant(day, timeOfMinutes(m % 1440), timeZone);
    if (at) return at;
  }
  throw new Error(`no wall time at or after ${date} ${timeOfMinutes(minutes % 1440)} in ${timeZone}`);
}

/**
 * Slot starts on the quarter hours of the wall clock inside each opening interval of the date's
 * weekday, kept only when the whole appointment ends by the interval's close (measured in real
 * time, so a DST change inside the appointment counts). A wall time that does not exist (gap) is
 * not listed; in the autumn fold each wall time is listed once, at its first occurrence, which is
 * the instant a booking for that date and time resolves to (zonedInstant).
 */
function candidateSlots(provider: Provider, date: string, durationMinutes: number): Candidate[] {
  const intervals = provider.openingHours[weekdayOf(date)] ?? [];
  const byTime = new Map<string, Candidate>();
  for (const { open, close } of intervals) {
    const openM = minutesOf(open);
    const closeM = minutesOf(close);
    if (!(closeM > openM)) continue;
    const closesAt = wallInstant(date, closeM, provider.timezone).getTime();
    const first = Math.ceil(openM / SLOT_MINUTES) * SLOT_MINUTES;
    for (let m = first; m < Math.min(closeM, 1440); m += SLOT_MINUTES) {
      const time = timeOfMinutes(m);
      const start = zonedInstant(date, time, provider.timezone);
      if (!start) continue;
      const end = start.getTime() + durationMinutes * 60_000;
      if (end > closesAt || byTime.has(time)) continue;
      byTime.set(time, { time, start, end: new Date(end) });
    }
  }
  return [...byTime.values()].sort((a, b) => a.start.getTime() - b.start.getTime());
}

/** The most appointments running at one moment within [start, end). */
function peakConcurrency(booked: BookedInterval[], start: number, end: number): number {
  const events: [number, number][] = [];
  for (const b of booked) {
    const from = Math.max(b.start.getTime(), start);
    const to = Math.min(b.end.getTime(), end);
    if (from < to) events.push([from, 1], [to, -1]);
  }
  // Ends sort before starts at the same instant: back-to-back appointments share a room.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let running = 0;
  let peak = 0;
  for (const [, delta] of events) {
    running += delta;
    peak = Math.max(peak, running);
  }
  return peak;
}

/**
 * The one slot starting at the local `time` of `date`, exactly as spaDaySlots would list it, or
 * undefined when the day has no such slot. A booking checks only its own time: this computes one
 * candidate and reads only the appointments overlapping it, instead of the whole day; or takes them
 * from `ahead` when its range holds the candidate's (a range read for other instants, the spa's time
 * zone having changed since, say, is not used: the candidate's own are read).
 */
export async function spaSlotAt(
  em: EntityManager,
  provider: Provider,
  date: string,
  time: string,
  durationMinutes: number,
  now: Date,
  ahead?: BookedAhead,
): Promise<Slot | undefined> {
  const candidate = candidateAt(provider, date, time, durationMinutes);
  if (!candidate) return undefined;
  const covered = ahead !== undefined && ahead.from.getTime() <= candidate.start.getTime() && candidate.end.getTime() <= ahead.to.getTime();
  const booked = covered ? ahead.intervals : await bookedIntervals(em, provider.id, candidate.start, candidate.end);
  return {
    time,
    startsAt: candidate.start,
    available:
      candidate.start.getTime() > now.getTime() &&
      peakConcurrency(booked, candidate.start.getTime(), candidate.end.getTime()) < provider.roomCapacity,
  };
}

/** candidateSlots' rule for one wall time: a quarter hour of an opening interval, ending by its close. */
function candidateAt(provider: Provider, date: string, time: string, durationMinutes: number): Candidate | undefined {
  const m = minutesOf(time);
  if (m % SLOT_MINUTES !== 0) return undefined;
  const start = zonedInstant(date, time, provider.timezone);
  if (!start) return undefined;
  const end = start.getTime() + durationMinutes * 60_000;
  for (const { open, close } of provider.openingHours[weekdayOf(date)] ?? []) {
    const openM = minutesOf(open);
    const closeM = minutesOf(close);
    if (!(closeM > openM) || m < openM || m >= Math.min(closeM, 1440)) continue;
    if (end <= wallInstant(date, closeM, provider.timezone).getTime()) return { time, start, end: new Date(end) };
  }
  return undefined;
}

/**
 * The slots of `provider` on the local `date` for an appointment of `durationMinutes`. A slot is
 * available when it starts after `now` and fewer than `roomCapacity` booked appointments run at
 * any moment of it. Bookings must re-check under their lock: this is a read, not a reservation.
 */
export async function spaDaySlots(
  em: EntityManager,
  provider: Provider,
  date: string,
  durationMinutes: number,
  now: Date,
): Promise<Slot[]> {
  const candidates = candidateSlots(provider, date, durationMinutes);
  if (candidates.length === 0) return [];
  const from = candidates[0].start;
  const to = new Date(Math.max(...candidates.map((c) => c.end.getTime())));
  const booked = await bookedIntervals(em, provider.id, from, to);
  return candidates.map((c) => ({
    time: c.time,
    startsAt: c.start,
    available: c.start.getTime() > now.getTime() && peakConcurrency(booked, c.start.getTime(), c.end.getTime()) < provider.roomCapacity,
  }));
}
