import { z } from 'zod';
import { DomainError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { parseInput } from '../../platform/validation.ts';
import { preparedRead, sqlText } from '../../db/engine/index.ts';
import { localTimeOf } from '../../platform/time.ts';
import { lockClassInstance, takeSpot, type BookableInstance } from '../classes/index.ts';
import { idParam, takeEntitlementVisit, takePassVisit, visitsUsed } from '../passes/index.ts';
import { copayOptionsOf } from '../providers/index.ts';
import { LIVE_STATUS_LIST, insertBooking, insertSession, type Booking, type BookingSession, type NewBooking } from './bookings.service.ts';
import { checkPassLasts, costPerVisit, coverageOf, holderFields, holderOf, type Holder } from './eligibility.ts';
import { classBooked, classSessionOpened, type Initiation } from './initiation.ts';
import { recordBookingEvent } from './bookings.events.ts';

export const bookClassInput = z.strictObject({ class_instance_id: idParam, ...holderFields });
export type BookClassInput = z.input<typeof bookClassInput>;

/** Locks the instance and checks it can take a booking now: scheduled and not started (409 class_not_bookable). */
export async function lockBookableInstance(ctx: TxCtx, id: string, param = 'class_instance_id'): Promise<BookableInstance> {
  const locked = await lockClassInstance(ctx.em, id, param);
  if (locked.instance.status !== 'SCHEDULED') throw new DomainError('class_not_bookable', `Class instance '${id}' is cancelled`);
  if (locked.instance.startsAt.getTime() <= ctx.clock.now().getTime())
    throw new DomainError('class_not_bookable', `Class instance '${id}' has started`);
  return locked;
}

/**
 * Whether the client holds a live booking of the instance; read under the instance's lock (after
 * lockClassInstance in the transaction). The statuses are written out as the partial unique index
 * `booking_one_per_instance_client` states them, so the check is one probe of that index: with the
 * list as a parameter the planner cannot tell the index applies, and read every booking the client
 * ever made instead.
 */
async function holdsBooking(ctx: TxCtx, instanceId: string, clientId: string): Promise<boolean> {
  const [{ booked }] = await preparedRead<{ booked: boolean }>(
    ctx.em,
    sqlText`select exists (select 1 from booking where class_instance_id = ? and client_id = ? and status in (${LIVE_STATUS_LIST})) as booked`,
    [instanceId, clientId],
  );
  return booked;
}

/** Under the instance's lock: one live booking per client (409 already_booked) and a spot left (409 class_full). */
export async function checkSpot(ctx: TxCtx, slot: BookableInstance, clientId: string, booked?: boolean): Promise<void> {
  if (booked ?? (await holdsBooking(ctx, slot.instance.id, clientId))) {
    throw new DomainError('already_booked', `Client '${clientId}' already holds a booking for class instance '${slot.instance.id}'`);
  }
  if (slot.instance.spotsTaken >= slot.instance.capacity)
    throw new DomainError('class_full', `Class instance '${slot.instance.id}' has no spots left`);
}

/**
 * The instance locked, the holder and (for a client named by client_id) whether it already booked
 * the instance: three reads that need nothing of each other, issued together so they take one round
 * trip (src/db/engine/prepared-read.ts). PostgreSQL runs them in this order, so the already-booked
 * check runs under the instance's lock. Their refusals come in the same order as one after another:
 * the instance's, then the holder's, then the pass lasting until the class starts.
 */
async function readForBooking(ctx: TxCtx, input: z.output<typeof bookClassInput>) {
  const namedClient = input.user_pass_id === undefined ? input.client_id : undefined;
  const [slot, holder, booked] = await Promise.allSettled([
    lockBookableInstance(ctx, input.class_instance_id),
    holderOf(ctx, input),
    namedClient === undefined ? undefined : holdsBooking(ctx, input.class_instance_id, namedClient),
  ]);
  if (slot.status === 'rejected') throw slot.reason;
  if (holder.status === 'rejected') throw holder.reason;
  checkPassLasts(holder.value, slot.value.instance.startsAt);
  if (booked.status === 'rejected') throw booked.reason;
  return { slot: slot.value, holder: holder.value, booked: booked.value };
}

/**
 * POST /bookings/class, three outcomes (docs/partner-guide.md "Bookings"): booked now with a visit taken from the
 * pass (or from extra visits bought before, or a co-pay package at this provider);
 * `additional_visits_required` when the pass covers the tier but the month's visits are used up;
 * `copay_required` when it does not cover the tier and the provider offers co-pay options.
 * Otherwise 403 provider_not_covered.
 */
export async function bookClass(ctx: TxCtx, raw: BookClassInput): Promise<Initiation> {
  const input = parseInput(bookClassInput, raw);
  const { slot, holder, booked } = await readForBooking(ctx, input);
  await checkSpot(ctx, slot, holder.client.id, booked);
  const now = ctx.clock.now();
  const id = newId('booking', now.getTime());
  const { covered, category } = coverageOf(holder.pass, slot.provider);
  const visit = {
    issuedPassId: holder.issuedPass.id,
    clientId: holder.client.id,
    category: slot.provider.category,
    at: now,
    bookingId: id,
    reason: 'BOOKING' as const,
  };

  if (covered) {
    const period = await takePassVisit(ctx.em, { ...visit, allowed: category!.visits_allowed });
    if (period) return classBooked(await bookInstance(ctx, holder, slot, { payment: 'PASS', visitPeriod: period }, id));
    const extra = await takeEntitlementVisit(ctx.em, { ...visit, kind: 'EXTRA_VISITS' });
    if (extra) return classBooked(await bookInstance(ctx, holder, slot, { payment: 'EXTRA_VISITS', visitEntitlementId: extra }, id));
    const session = await openClassSession(ctx, holder, slot, {
      kind: 'CLASS_EXTRA_VISITS',
      copayOptionIds: [],
      costPerVisit: costPerVisit(holder.pass, category!),
      visitsUsed: visitsUsed(holder.issuedPass, slot.provider.category, now),
      maxVisits: category!.visits_allowed,
    });
    return classSessionOpened(session, []);
  }
  const copay = await takeEntitlementVisit(ctx.em, { ...visit, kind: 'COPAY', providerId: slot.provider.id });
  if (copay) return classBooked(await bookInstance(ctx, holder, slot, { payment: 'COPAY', visitEntitlementId: copay }, id));
  const options = await copayOptionsOf(ctx.em, slot.provider.id, resellerOf(ctx).currency);
  if (options.length === 0) {
    throw new DomainError(
      'provider_not_covered',
      `The client's pass does not cover provider '${slot.provider.id}' (tier ${slot.provider.tier}) and it offers no co-pay option`,
    );
  }
  const session = await openClassSession(ctx, holder, slot, {
    kind: 'CLASS_COPAY',
    copayOptionIds: options.map((o) => o.id),
    costPerVisit: null,
    visitsUsed: null,
    maxVisits: null,
  });
  return classSessionOpened(session, options);
}

async function openClassSession(
  ctx: TxCtx,
  holder: Holder,
  slot: BookableInstance,
  purchase: {
    kind: 'CLASS_COPAY' | 'CLASS_EXTRA_VISITS';
    copayOptionIds: string[];
    costPerVisit: number | null;
    visitsUsed: number | null;
    maxVisits: number | null;
  },
): Promise<BookingSession> {
  const now = ctx.clock.now();
  const session = await insertSession(
    ctx.em,
    {
      ...classFields(holder, slot),
      kind: purchase.kind,
      currency: resellerOf(ctx).currency,
      copayAmount: null,
      copayCredits: null,
      copayOptionIds: purchase.copayOptionIds,
      costPerVisit: purchase.costPerVisit,
      visitsUsed: purchase.visitsUsed,
      maxVisits: purchase.maxVisits,
    },
    now,
  );
  await recordBookingEvent(ctx, 'booking_session.created', session);
  return session;
}

type Payment = Pick<NewBooking, 'payment'> & Partial<Pick<Booking, 'visitPeriod' | 'visitEntitlementId' | 'sessionId' | 'rescheduledFrom'>>;

/** Takes the spot (checkSpot found it free under the instance's lock) and creates the PENDING booking holding one visit. */
export async function bookInstance(ctx: TxCtx, holder: Holder, slot: BookableInstance, payment: Payment, id: string): Promise<Booking> {
  await takeSpot(ctx.em, slot.instance.id);
  const now = ctx.clock.now();
  const booking = await insertBooking(
    ctx.em,
    {
      ...classFields(holder, slot),
      ...payment,
      visitsDeducted: 1,
      creditsCharged: 0,
      currency: resellerOf(ctx).currency,
    },
    now,
    id,
  );
  await recordBookingEvent(ctx, 'booking.created', booking);
  return booking;
}

/** The fields every booking or session of this class instance has. */
export function classFields(holder: Holder, slot: BookableInstance) {
  return {
    resellerId: holder.resellerId,
    clientId: holder.client.id,
    issuedPassId: holder.issuedPass.id,
    providerId: slot.provider.id,
    type: 'class' as const,
    classInstanceId: slot.instance.id,
    serviceIds: [],
    serviceName: slot.cls.name,
    providerName: slot.provider.name,
    localDate: slot.instance.localDate,
    localTime: localTimeOf(slot.instance.startsAt, slot.provider.timezone),
    startsAt: slot.instance.startsAt,
    endsAt: new Date(slot.instance.startsAt.getTime() + slot.cls.durationMinutes * 60_000),
  };
}
