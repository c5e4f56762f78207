import { DomainError } from '../../platform/errors.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { releaseSpot } from '../classes/index.ts';
import { walletResellerOf } from '../clients/index.ts';
import { creditWallet } from '../credits/index.ts';
import { creditBusinessAccount } from '../ledger/index.ts';
import { restoreVisit } from '../passes/index.ts';
import { findProviders } from '../providers/index.ts';
import { isLive, lockOwnBooking, moveTo, type Booking } from './bookings.service.ts';
import type { Refund } from './bookings.entity.ts';
import { recordBookingEvent } from './bookings.events.ts';

/**
 * POST /bookings/{id}/cancel. A PENDING or CONFIRMED booking that has not started becomes
 * CANCELLED and frees its slot or spot. The provider's policy decides the refund: at least
 * `free_cancellation_hours` before the start, everything comes back (credits to the wallet, the
 * visit to where it came from, the co-pay to the business account); later, the policy's
 * percentage of credits and co-pay (rounded down) and no visit. Already cancelled: 409, no change.
 */
export async function cancelBooking(ctx: TxCtx, id: string): Promise<Booking> {
  const booking = await lockOwnBooking(ctx, id);
  const now = ctx.clock.now();
  if (booking.status === 'CANCELLED') throw new DomainError('already_cancelled', `Booking '${id}' is already cancelled`);
  if (!isLive(booking)) throw new DomainError('not_cancellable', `Booking '${id}' is ${booking.status} and cannot be cancelled`);
  if (booking.startsAt.getTime() <= now.getTime()) throw new DomainError('not_cancellable', `Booking '${id}' has started`);

  // The spot first: bookings lock the instance before the pass, and so does a cancel (no deadlock).
  if (booking.classInstanceId) await releaseSpot(ctx.em, booking.classInstanceId);
  const [provider] = await findProviders(ctx.em, [booking.providerId]);
  const full = booking.startsAt.getTime() - now.getTime() >= provider.freeCancellationHours * 3600_000;
  const percent = full ? 100 : provider.lateCancellationRefundPercent;
  const credits = Math.floor((booking.creditsCharged * percent) / 100);
  const copay = Math.floor(((booking.copayAmount ?? 0) * percent) / 100);
  if (credits > 0) {
    await creditWallet(ctx.em, {
      // The wallet is the client's own, also when another reseller booked through a lookup (docs/partner-guide.md "Lookup").
      resellerId: await walletResellerOf(ctx.em, booking.clientId),
      clientId: booking.clientId,
      amount: credits,
      at: now,
      bookingId: booking.id,
      description: `Refund of cancelled booking ${booking.id} (${full ? 'full' : `${percent}%`})`,
    });
  }
  if (copay > 0) {
    await creditBusinessAccount(ctx.em, {
      resellerId: booking.resellerId,
      amount: copay,
      at: now,
      referenceId: booking.id,
      description: `Co-pay refund of cancelled booking ${booking.id} (${full ? 'full' : `${percent}%`})`,
    });
  }
  const visits =
    full && booking.visitsDeducted > 0
      ? await restoreVisit(ctx.em, {
          issuedPassId: booking.issuedPassId,
          category: provider.category,
          entitlementId: booking.visitEntitlementId ?? null,
          period: booking.visitPeriod ?? null,
          at: now,
          bookingId: booking.id,
        })
      : 0;

  const refund: Refund = {
    policy: full ? 'FULL' : 'LATE',
    credits_refunded: credits,
    visits_restored: visits,
    copay_refunded: copay,
    currency: booking.currency,
  };
  booking.refund = refund;
  moveTo(booking, 'CANCELLED', now);
  await ctx.em.flush();
  await recordBookingEvent(ctx, 'booking.cancelled', booking);
  return booking;
}
