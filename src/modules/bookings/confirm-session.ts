import { z } from 'zod';
import { DomainError, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../platform/transaction.ts';
import { parseInput } from '../../platform/validation.ts';
import { recordEvent } from '../events/events.service.ts';
import { debitBusinessAccount } from '../ledger/ledger.service.ts';
import { addDuration, grantEntitlement, idParam, takeEntitlementVisit } from '../passes/passes.service.ts';
import { findCopayOptions } from '../providers/providers.service.ts';
import { checkSlot, appointmentParts, spaBookingFields } from './book-spa.ts';
import { bookInstance, checkSpot, lockBookableInstance } from './book-class.ts';
import { lockOwnSession, newBooking, type Booking, type BookingSession } from './bookings.service.ts';
import { presentBooking } from './bookings.presenter.ts';
import { holderOf } from './eligibility.ts';

// Every confirm is one transaction: lock the session, re-check, debit, book, mark the session
// used, write the outbox row (README "Bookings"). A retry with the same Idempotency-Key replays;
// another confirm of a used session is 409, of an expired one 422, and debits nothing.

/** The session must still be OPEN and younger than 24 hours. */
function checkOpen(session: BookingSession, now: Date): void {
  if (session.status === 'CONFIRMED') throw new DomainError('session_already_confirmed', `Session '${session.id}' was already confirmed (booking ${session.bookingId})`);
  if (session.status === 'EXPIRED' || session.expiresAt.getTime() <= now.getTime()) {
    throw new DomainError('session_expired', `Session '${session.id}' expired; start the booking again`);
  }
}

function markUsed(session: BookingSession, booking: Booking, at: Date): void {
  session.status = 'CONFIRMED';
  session.bookingId = booking.id;
  session.updatedAt = at;
}

export const confirmSpaInput = z.strictObject({});

/** POST /bookings/spa/{sessionId}/confirm: debits the co-pay from the business account and books the slot. */
export async function confirmSpaBooking(ctx: TxCtx, sessionId: string): Promise<Booking> {
  const session = await lockOwnSession(ctx, sessionId, 'spa');
  const now = ctx.clock.now();
  checkOpen(session, now);
  const holder = await holderOf(ctx, { user_pass_id: session.issuedPassId }, session.startsAt);
  const appointment = await appointmentParts(ctx, session);
  await checkSlot(ctx, appointment, true);
  const id = newId('booking', now.getTime());
  const copay = session.copayAmount ?? 0;
  if (copay > 0) {
    await debitBusinessAccount(ctx.em, {
      resellerId: session.resellerId, amount: copay, at: now, referenceId: id,
      description: `Spa co-pay at ${appointment.spa.name} for ${session.clientId}`,
    });
  }
  const booking = newBooking(ctx.em, {
    ...spaBookingFields(holder, appointment), payment: 'COPAY', visitsDeducted: 0, creditsCharged: 0,
    copayAmount: copay, currency: session.currency, sessionId: session.id,
  }, now, id);
  markUsed(session, booking, now);
  await ctx.em.flush();
  await recordEvent(ctx, 'booking.created', presentBooking(booking));
  return booking;
}

export const extraVisitsInput = z.strictObject({
  number_of_visits: z.int('Expected an integer from 1 to 50').min(1).max(50),
  duration: z.enum(['MONTHLY', 'ANNUALLY']),
});
export const copayPackageInput = z.strictObject({ copay_package_id: idParam });
/** Every field either kind of class session takes (the route's published body); each kind parses its own. */
export const confirmClassInput = z.strictObject({ ...extraVisitsInput.partial().shape, ...copayPackageInput.partial().shape });
export type ConfirmClassInput = z.input<typeof confirmClassInput>;

/**
 * POST /bookings/class/{sessionId}/confirm. An extra-visits session takes
 * `{number_of_visits, duration}` and debits cost_per_visit × number_of_visits; a co-pay session
 * takes `{copay_package_id}` (one of the options it offered) and debits its client_copay_amount.
 * Either way the visits bought become an entitlement, one of them held by the new booking.
 */
export async function confirmClassBooking(ctx: TxCtx, sessionId: string, raw: ConfirmClassInput): Promise<Booking> {
  const session = await lockOwnSession(ctx, sessionId, 'class');
  const now = ctx.clock.now();
  checkOpen(session, now);
  refuseOtherKindsFields(session, raw);
  const purchase = session.kind === 'CLASS_EXTRA_VISITS' ? extraVisits(session, raw, now) : await copayPackage(ctx, session, raw, now);
  const slot = await lockBookableInstance(ctx, session.classInstanceId!, 'session_id');
  const holder = await holderOf(ctx, { user_pass_id: session.issuedPassId }, session.startsAt);
  await checkSpot(ctx, slot, holder.client.id);

  const id = newId('booking', now.getTime());
  if (purchase.amount > 0) {
    await debitBusinessAccount(ctx.em, {
      resellerId: session.resellerId, amount: purchase.amount, at: now, referenceId: id, description: purchase.description,
    });
  }
  grantEntitlement(ctx.em, {
    resellerId: session.resellerId, clientId: session.clientId, issuedPassId: session.issuedPassId, kind: purchase.kind,
    category: slot.provider.category, providerId: purchase.kind === 'COPAY' ? slot.provider.id : null,
    copayOptionId: purchase.copayOptionId, visitsTotal: purchase.visits, amountPaid: purchase.amount, currency: session.currency,
    validFrom: now, validUntil: purchase.validUntil, sessionId: session.id,
  });
  await ctx.em.flush();
  const entitlementId = await takeEntitlementVisit(ctx.em, {
    clientId: session.clientId, kind: purchase.kind, category: slot.provider.category,
    ...(purchase.kind === 'COPAY' ? { providerId: slot.provider.id } : {}), at: now, bookingId: id, reason: 'BOOKING',
  });
  const booking = await bookInstance(ctx, holder, slot, {
    payment: purchase.kind, visitEntitlementId: entitlementId!, sessionId: session.id,
  }, id);
  markUsed(session, booking, now);
  await ctx.em.flush();
  return booking;
}

/** A field of the other session type is named first: it says the caller confirms the wrong kind of session. */
function refuseOtherKindsFields(session: BookingSession, raw: ConfirmClassInput): void {
  const [takes, needs] = session.kind === 'CLASS_EXTRA_VISITS'
    ? [extraVisitsInput, 'number_of_visits and duration (an extra-visits session)']
    : [copayPackageInput, 'copay_package_id (a co-pay session)'];
  const foreign = Object.keys(raw ?? {}).find((k) => !(k in takes.shape));
  if (foreign !== undefined) throw validationError(foreign, `Session '${session.id}' does not take '${foreign}': send ${needs}`);
}

interface Purchase { kind: 'EXTRA_VISITS' | 'COPAY'; amount: number; visits: number; validUntil: Date; copayOptionId: string | null; description: string }

function extraVisits(session: BookingSession, raw: ConfirmClassInput, now: Date): Purchase {
  const input = parseInput(extraVisitsInput, raw);
  const amount = (session.costPerVisit ?? 0) * input.number_of_visits;
  return {
    kind: 'EXTRA_VISITS', amount, visits: input.number_of_visits, copayOptionId: null,
    // MONTHLY: usable until the month's counters start again; ANNUALLY: for twelve months.
    validUntil: input.duration === 'MONTHLY' ? startOfNextMonth(now) : addDuration(now, 'ANNUALLY'),
    description: `${input.number_of_visits} extra visit(s) (${input.duration}) for ${session.clientId}`,
  };
}

async function copayPackage(ctx: TxCtx, session: BookingSession, raw: ConfirmClassInput, now: Date): Promise<Purchase> {
  const input = parseInput(copayPackageInput, raw);
  if (!session.copayOptionIds.includes(input.copay_package_id)) {
    throw validationError('copay_package_id', `'${input.copay_package_id}' is not one of the co-pay options of session '${session.id}'`);
  }
  const [option] = await findCopayOptions(ctx.em, [input.copay_package_id]);
  if (!option || option.currency !== resellerOf(ctx).currency) {
    throw validationError('copay_package_id', `Co-pay option '${input.copay_package_id}' is no longer offered`);
  }
  return {
    kind: 'COPAY', amount: option.clientCopayAmount, visits: option.maxVisits, copayOptionId: option.id,
    validUntil: new Date(now.getTime() + option.visitDurationDays * 86_400_000),
    description: `Co-pay '${option.name}' for ${session.clientId}`,
  };
}

const startOfNextMonth = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
