import { LockMode } from '@mikro-orm/core';
import { DomainError, notFound } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import type { Page, PageArgs } from '../../platform/pagination.ts';
import { providerOf, type Ctx } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { BookingSchema } from './bookings.entity.ts';
import { bookingsOfProvider, moveTo, type Booking, type BookingFilters, type BookingStatus } from './bookings.service.ts';
import { recordBookingEvent } from './bookings.events.ts';

// The provider side of bookings (docs/partner-guide.md "Provider side"): a provider, with its own API key, sees
// the bookings made at it and moves them on: PENDING → CONFIRMED (confirm), CONFIRMED → COMPLETED
// (check-in). Another provider's booking is indistinguishable from a missing one (404).

/** The caller's bookings, newest first, optionally of one status and type (any case). */
export function listProviderBookings(ctx: Ctx, filters: BookingFilters, page: PageArgs): Promise<Page<Booking>> {
  return bookingsOfProvider(ctx.em, providerOf(ctx).providerId, filters, page);
}

export async function getProviderBooking(ctx: Ctx, id: string): Promise<Booking> {
  const { providerId } = providerOf(ctx);
  const booking = isId('booking', id) ? await ctx.em.findOne(BookingSchema, { id, providerId }) : null;
  if (!booking) throw notFound('booking', id);
  return booking;
}

/** POST /bookings/{id}/confirm: the provider accepts a PENDING booking. */
export function confirmProviderBooking(ctx: TxCtx, id: string): Promise<Booking> {
  return advance(ctx, id, 'PENDING', 'CONFIRMED');
}

/** POST /bookings/{id}/check-in: the client arrived for a CONFIRMED booking. */
export function checkInProviderBooking(ctx: TxCtx, id: string): Promise<Booking> {
  return advance(ctx, id, 'CONFIRMED', 'COMPLETED');
}

const events = { CONFIRMED: 'booking.confirmed', COMPLETED: 'booking.completed' } as const;

/**
 * Moves the caller's booking from `from` to `to` under its row lock, so a cancel or reschedule
 * running at the same time is either seen or waits; any other status is 409 and changes nothing.
 * The event goes to the reseller the booking belongs to, not to the provider calling.
 */
async function advance(ctx: TxCtx, id: string, from: BookingStatus, to: keyof typeof events): Promise<Booking> {
  const { providerId } = providerOf(ctx);
  const booking = isId('booking', id)
    ? await ctx.em.findOne(BookingSchema, { id, providerId }, { lockMode: LockMode.PESSIMISTIC_WRITE })
    : null;
  if (!booking) throw notFound('booking', id);
  if (booking.status !== from) {
    throw new DomainError('booking_status_conflict', `Booking '${id}' is ${booking.status}; only a ${from} booking can become ${to}`);
  }
  moveTo(booking, to, ctx.clock.now());
  await ctx.em.flush();
  await recordBookingEvent(ctx, events[to], booking, { resellerId: booking.resellerId });
  return booking;
}
