import { z } from 'zod';
import { newId } from '../../platform/ids.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { resellerOf } from '../../platform/request-context.ts';
import { debitBusinessAccount } from '../ledger/index.ts';
import { checkSlot, spaBookingFields, type Appointment } from './book-spa.ts';
import { bookInstance, checkSpot, lockBookableInstance } from './book-class.ts';
import {
  insertBooking,
  lockOwnSession,
  lockOwnSpaSession,
  markSessionUsed,
  readBookedAheadOfSession,
  type Booking,
} from './bookings.service.ts';
import { buyVisits, checkOpen, holderOfPass, purchaseInput, purchaseOf } from './eligibility.ts';
import { recordBookingEvent } from './bookings.events.ts';

// Every confirm is one transaction: lock the session, re-check, book, mark the session used,
// write the outbox row and the business account's ledger row, which moves the balance at COMMIT
// (docs/partner-guide.md "Bookings"). A retry with the same Idempotency-Key replays; another confirm of
// a used session is 409, of an expired one 422, and debits nothing.

export const confirmSpaInput = z.strictObject({});

/** POST /bookings/spa/{sessionId}/confirm: debits the co-pay from the business account and books the slot. */
export async function confirmSpaBooking(ctx: TxCtx, sessionId: string): Promise<Booking> {
  // The session and the spa it names, locked as they are read, and right behind them the
  // appointments overlapping the session's own instants, read under the spa's lock: issued
  // together, one round trip (src/db/engine/prepared-read.ts). The slot check takes them when the
  // spa still puts the session's date and time at those instants. Refusals come in the order the
  // session, its holder, its spa and services, the slot.
  const [locked, booked] = await Promise.allSettled([
    lockOwnSpaSession(ctx, sessionId),
    readBookedAheadOfSession(ctx.em, sessionId, resellerOf(ctx).resellerId),
  ]);
  if (locked.status === 'rejected') throw locked.reason;
  if (booked.status === 'rejected') throw booked.reason;
  const { session, heldPass, spa } = locked.value;
  const now = ctx.clock.now();
  checkOpen(session, now);
  const holder = holderOfPass(ctx, heldPass(), session.startsAt);
  const appointment: Appointment = {
    ...spa(),
    date: session.localDate,
    time: session.localTime,
    startsAt: session.startsAt,
    endsAt: session.endsAt,
  };
  await checkSlot(ctx, appointment, { from: session.startsAt, to: session.endsAt, intervals: booked.value });
  const id = newId('booking', now.getTime());
  const copay = session.copayAmount ?? 0;
  const booking = await insertBooking(
    ctx.em,
    {
      ...spaBookingFields(holder, appointment),
      payment: 'COPAY',
      visitsDeducted: 0,
      creditsCharged: 0,
      copayAmount: copay,
      currency: session.currency,
      sessionId: session.id,
    },
    now,
    id,
  );
  await markSessionUsed(ctx.em, session, booking.id, now);
  await recordBookingEvent(ctx, 'booking.created', booking);
  // The co-pay moves the business account at COMMIT (src/modules/ledger/ledger.service.ts); an
  // overdraft is 422 insufficient_balance and rolls the writes above back.
  if (copay > 0) {
    await debitBusinessAccount(ctx.em, {
      resellerId: session.resellerId,
      amount: copay,
      at: now,
      referenceId: id,
      description: `Spa co-pay at ${appointment.spa.name} for ${session.clientId}`,
    });
  }
  return booking;
}

/** Every field either kind of class session takes (the route's published body); each kind parses its own (eligibility.ts). */
export const confirmClassInput = purchaseInput;
export type ConfirmClassInput = z.input<typeof confirmClassInput>;

/**
 * POST /bookings/class/{sessionId}/confirm. An extra-visits session takes
 * `{number_of_visits, duration}` and debits cost_per_visit × number_of_visits; a co-pay session
 * takes `{copay_package_id}` (one of the options it offered) and debits its client_copay_amount.
 * Either way the visits bought become an entitlement, one of them held by the new booking.
 */
export async function confirmClassBooking(ctx: TxCtx, sessionId: string, raw: ConfirmClassInput): Promise<Booking> {
  const { session, heldPass } = await lockOwnSession(ctx, sessionId, 'class');
  const now = ctx.clock.now();
  checkOpen(session, now);
  const purchase = await purchaseOf(ctx, session, session.kind === 'CLASS_EXTRA_VISITS' ? 'EXTRA_VISITS' : 'COPAY', raw, now);
  const slot = await lockBookableInstance(ctx, session.classInstanceId!, 'session_id');
  const holder = holderOfPass(ctx, heldPass(), session.startsAt);
  await checkSpot(ctx, slot, holder.client.id);

  const id = newId('booking', now.getTime());
  const { entitlementId } = await buyVisits(ctx, session, purchase, {
    category: slot.provider.category,
    providerId: slot.provider.id,
    at: now,
    referenceId: id,
    bookingSessionId: session.id,
    bookingId: id,
    reason: 'BOOKING',
  });
  const booking = await bookInstance(
    ctx,
    holder,
    slot,
    {
      payment: purchase.kind,
      visitEntitlementId: entitlementId,
      sessionId: session.id,
    },
    id,
  );
  await markSessionUsed(ctx.em, session, booking.id, now);
  return booking;
}
