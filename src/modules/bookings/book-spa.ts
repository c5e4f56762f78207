import { z } from 'zod';
import { DomainError, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { resellerOf } from '../../platform/request-context.ts';
import { localDate, parseInput } from '../../platform/validation.ts';
import { zonedInstant } from '../../platform/time.ts';
import { debitWallet } from '../credits/index.ts';
import { idParam } from '../passes/index.ts';
import { MAX_SERVICES_PER_APPOINTMENT, readBookedAhead, slotAt, spaWithServices, type BookedAhead, type SpaService } from '../spa/index.ts';
import type { Provider } from '../providers/index.ts';
import { insertBooking, insertSession } from './bookings.service.ts';
import { checkPassLasts, coverageOf, holderFields, holderOf, type Holder } from './eligibility.ts';
import { spaBooked, spaCopayRequired, type Initiation } from './initiation.ts';
import { recordBookingEvent } from './bookings.events.ts';

export const localTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'Expected a time as HH:MM (24-hour)');

export const bookSpaInput = z.strictObject({
  date: localDate,
  time: localTime,
  spa_id: idParam,
  service_ids: z.array(z.string()),
  ...holderFields,
});
export type BookSpaInput = z.input<typeof bookSpaInput>;

/** A spa appointment asked for: the spa, its services and the instants it runs between. */
export interface Appointment {
  spa: Provider;
  services: SpaService[];
  date: string;
  time: string;
  startsAt: Date;
  endsAt: Date;
}

/**
 * Reads and checks what an appointment names (spa, services, a future local time that exists).
 * The spa is locked as it is read, for checkSlot (no lock statement of its own).
 */
export async function appointmentOf(
  ctx: TxCtx,
  input: { spa_id: string; service_ids: string[]; date: string; time: string },
): Promise<Appointment> {
  const { spa, services } = await spaWithServices(ctx, input.spa_id, input.service_ids, { spaId: 'spa_id' }, { lock: true });
  const instants = instantsOf(
    input,
    spa.timezone,
    sum(services, (s) => s.durationMinutes),
  );
  if (!instants) throw validationError('time', `${input.date} ${input.time} does not exist in ${spa.timezone} (the clocks skip it)`);
  if (instants.startsAt.getTime() <= ctx.clock.now().getTime()) throw validationError('time', 'The appointment must start in the future');
  return { spa, services, date: input.date, time: input.time, ...instants };
}

/** The instants an appointment of `minutes` at the local `date` `time` of `timeZone` runs between; undefined when the clocks skip that time. */
function instantsOf(at: { date: string; time: string }, timeZone: string, minutes: number): { startsAt: Date; endsAt: Date } | undefined {
  const startsAt = zonedInstant(at.date, at.time, timeZone);
  return startsAt && { startsAt, endsAt: new Date(startsAt.getTime() + minutes * 60_000) };
}

/**
 * Checks the slot under the spa's lock, which appointmentOf and a confirm's lockOwnSpaSession take
 * as they read it (FOR NO KEY UPDATE on its provider row, which bookings referencing it do not conflict with):
 * appointments of one spa are placed one at a time, so this sees every one committed before. A
 * quarter-hour start inside opening hours (else 400) with a room free for the whole appointment
 * (else 409 slot_unavailable); a session only reserves at its confirm, which checks again. `ahead`:
 * appointments read under that lock beforehand (spa.service.ts slotAt).
 */
export async function checkSlot(ctx: TxCtx, a: Appointment, ahead?: BookedAhead): Promise<void> {
  const minutes = (a.endsAt.getTime() - a.startsAt.getTime()) / 60_000;
  const slot = await slotAt(ctx.em, a.spa, a.date, a.time, minutes, ctx.clock.now(), ahead);
  if (!slot)
    throw validationError(
      'time',
      `${a.time} is not a bookable start at this spa on ${a.date}: outside opening hours, or not on a quarter hour`,
    );
  if (!slot.available) throw new DomainError('slot_unavailable', `The spa has no room free at ${a.date} ${a.time} for ${minutes} minutes`);
}

/**
 * POST /bookings/spa. Covered (the pass's SPA category includes the spa's tier): the appointment
 * is booked now and its credits debited. Not covered but every service carries a co-pay in the
 * reseller's currency: a session to confirm once the co-pay is collected. Neither: 403.
 */
export async function bookSpa(ctx: TxCtx, raw: BookSpaInput): Promise<Initiation> {
  const input = parseInput(bookSpaInput, raw);
  // The client, then the spa, locked as it is read, then (a spa this process has read before) the
  // appointments at the instants asked for, under the spa's lock (readAhead below): issued
  // together, one round trip (src/db/engine/prepared-read.ts). Without that read the slot check
  // under the lock reads them at once. Refusals come in that order, as one after the other.
  const [held, asked, read] = await Promise.allSettled([holderOf(ctx, input), appointmentOf(ctx, input), readAhead(ctx, input)]);
  if (held.status === 'rejected') throw held.reason;
  if (asked.status === 'rejected') throw asked.reason;
  if (read.status === 'rejected') throw read.reason;
  const [holder, appointment, ahead] = [held.value, asked.value, read.value];
  remember(appointment);
  checkPassLasts(holder, appointment.startsAt);
  if (coverageOf(holder.pass, appointment.spa).covered) return spaBooked(await bookCoveredSpa(ctx, holder, appointment, ahead));

  const { currency } = resellerOf(ctx);
  const priced = appointment.services.every((s) => s.copayAmount !== null && s.currency === currency);
  if (!priced) {
    throw new DomainError(
      'provider_not_covered',
      `The client's pass does not cover spa '${appointment.spa.id}' (tier ${appointment.spa.tier}) and its services carry no co-pay in ${currency}`,
    );
  }
  await checkSlot(ctx, appointment, ahead);
  const now = ctx.clock.now();
  const session = await insertSession(
    ctx.em,
    {
      resellerId: holder.resellerId,
      clientId: holder.client.id,
      issuedPassId: holder.issuedPass.id,
      providerId: appointment.spa.id,
      kind: 'SPA_COPAY',
      type: 'spa',
      classInstanceId: null,
      ...spaNames(appointment),
      localDate: appointment.date,
      localTime: appointment.time,
      startsAt: appointment.startsAt,
      endsAt: appointment.endsAt,
      currency,
      copayAmount: sum(appointment.services, (s) => s.copayAmount ?? 0),
      copayCredits: sum(appointment.services, (s) => s.credits),
      copayOptionIds: [],
      costPerVisit: null,
      visitsUsed: null,
      maxVisits: null,
    },
    now,
  );
  await recordBookingEvent(ctx, 'booking_session.created', session);
  return spaCopayRequired(session);
}

async function bookCoveredSpa(ctx: TxCtx, holder: Holder, a: Appointment, ahead: BookedAhead | undefined) {
  await checkSlot(ctx, a, ahead);
  const now = ctx.clock.now();
  const id = newId('booking', now.getTime());
  const credits = sum(a.services, (s) => s.credits);
  if (credits > 0) {
    await debitWallet(ctx.em, {
      resellerId: holder.client.resellerId,
      clientId: holder.client.id,
      amount: credits,
      at: now,
      bookingId: id,
      description: `Spa appointment at ${a.spa.name}: ${spaNames(a).serviceName}`,
    });
  }
  const booking = await insertBooking(
    ctx.em,
    {
      ...spaBookingFields(holder, a),
      payment: 'PASS',
      visitsDeducted: 0,
      creditsCharged: credits,
      currency: resellerOf(ctx).currency,
    },
    now,
    id,
  );
  await recordBookingEvent(ctx, 'booking.created', booking);
  return booking;
}

// ---- The spa's appointments read ahead ---------------------------------------------------------
//
// The slot check reads the spa's appointments at the instants asked for, which the spa's time zone
// and its services' durations give: known only once the spa is read, a round trip of its own after
// it. They rarely change, so the ones this process last read for the spa give them beforehand, and
// the read goes right behind the spa's locking read (issued together: src/db/engine/prepared-read.ts),
// one round trip fewer. It is a guess, never trusted: checkSlot takes it only when its range holds
// the instants the spa as read now gives, and reads those itself otherwise (spa.service.ts slotAt).

interface SpaShape {
  timezone: string;
  minutes: Map<string, number>;
}
const shapes = new Map<string, SpaShape>();
/** Spas remembered at most; past it the memory starts over (a miss costs a round trip, nothing else). */
const MAX_SHAPES = 10_000;

function remember(a: Appointment): void {
  let shape = shapes.get(a.spa.id);
  if (!shape || shape.timezone !== a.spa.timezone) {
    if (!shape && shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(a.spa.id, (shape = { timezone: a.spa.timezone, minutes: new Map() }));
  }
  for (const s of a.services) shape.minutes.set(s.id, s.durationMinutes);
}

/** The appointments at the instants the spa's remembered shape gives the input; undefined when it is not known. */
function readAhead(
  ctx: TxCtx,
  input: { spa_id: string; service_ids: string[]; date: string; time: string },
): Promise<BookedAhead> | undefined {
  const shape = shapes.get(input.spa_id);
  if (!shape || input.service_ids.length > MAX_SERVICES_PER_APPOINTMENT) return undefined;
  const minutes = sum(input.service_ids, (id) => shape.minutes.get(id) ?? Number.NaN);
  const instants = Number.isNaN(minutes) ? undefined : instantsOf(input, shape.timezone, minutes);
  return instants && readBookedAhead(ctx.em, input.spa_id, instants.startsAt, instants.endsAt);
}

export function spaNames(a: Appointment) {
  return { serviceIds: a.services.map((s) => s.id), serviceName: a.services.map((s) => s.name).join(', '), providerName: a.spa.name };
}

/** The fields every spa booking of this appointment has. */
export function spaBookingFields(holder: Holder, a: Appointment) {
  return {
    resellerId: holder.resellerId,
    clientId: holder.client.id,
    issuedPassId: holder.issuedPass.id,
    providerId: a.spa.id,
    type: 'spa' as const,
    classInstanceId: null,
    ...spaNames(a),
    localDate: a.date,
    localTime: a.time,
    startsAt: a.startsAt,
    endsAt: a.endsAt,
  };
}

export const sum = <T>(items: readonly T[], of: (item: T) => number): number => items.reduce((s, i) => s + of(i), 0);
