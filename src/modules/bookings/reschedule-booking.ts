import { z } from 'zod';
import { DomainError, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { localDate, parseInput } from '../../platform/validation.ts';
import { lockClassInstance, releaseSpot } from '../classes/index.ts';
import { idParam } from '../passes/index.ts';
import { appointmentOf, checkSlot, localTime, spaBookingFields } from './book-spa.ts';
import { bookInstance, checkSpot, lockBookableInstance } from './book-class.ts';
import { insertBooking, isLive, lockOwnBooking, moveTo, type Booking } from './bookings.service.ts';
import { holderOf } from './eligibility.ts';
import { recordBookingEvent } from './bookings.events.ts';

export const rescheduleInput = z.strictObject({
  date: localDate.optional(),
  time: localTime.optional(),
  class_instance_id: idParam.optional(),
});
export type RescheduleInput = z.input<typeof rescheduleInput>;

/**
 * POST /bookings/{id}/reschedule: a spa appointment moves to `{date, time}` (same spa and
 * services), a class booking to `{class_instance_id}` (another instance at the same provider).
 * The old booking becomes RESCHEDULED with `rescheduled_to`; the new one is PENDING with
 * `rescheduled_from` and carries what the old one paid (credits, visit, co-pay): nothing is charged
 * again, and a later cancel refunds from the new one.
 */
export async function rescheduleBooking(ctx: TxCtx, id: string, raw: RescheduleInput): Promise<Booking> {
  const input = parseInput(rescheduleInput, raw);
  const old = await lockOwnBooking(ctx, id);
  const now = ctx.clock.now();
  if (!isLive(old)) throw new DomainError('not_reschedulable', `Booking '${id}' is ${old.status} and cannot be moved`);
  if (old.startsAt.getTime() <= now.getTime()) throw new DomainError('not_reschedulable', `Booking '${id}' has started`);
  const moved = old.type === 'spa' ? await moveSpa(ctx, old, input) : await moveClass(ctx, old, input);
  old.rescheduledTo = moved.id;
  await ctx.em.flush();
  await recordBookingEvent(ctx, 'booking.rescheduled', old);
  return moved;
}

/** What the old booking paid, carried over to the new one. */
const paidBy = (b: Booking) => ({
  payment: b.payment,
  visitsDeducted: b.visitsDeducted,
  visitPeriod: b.visitPeriod,
  visitEntitlementId: b.visitEntitlementId,
  creditsCharged: b.creditsCharged,
  copayAmount: b.copayAmount,
  currency: b.currency,
  rescheduledFrom: b.id,
});

async function moveSpa(ctx: TxCtx, old: Booking, input: z.infer<typeof rescheduleInput>): Promise<Booking> {
  if (input.class_instance_id !== undefined)
    throw validationError('class_instance_id', 'A spa appointment moves to a date and time, not a class instance');
  if (input.date === undefined) throw validationError('date', "Missing required field 'date'");
  if (input.time === undefined) throw validationError('time', "Missing required field 'time'");
  const appointment = await appointmentOf(ctx, { spa_id: old.providerId, service_ids: old.serviceIds, date: input.date, time: input.time });
  const holder = await holderOf(ctx, { user_pass_id: old.issuedPassId }, appointment.startsAt);
  // Out of the slot count first: the appointment may move within its own time.
  moveTo(old, 'RESCHEDULED', ctx.clock.now());
  await ctx.em.flush();
  await checkSlot(ctx, appointment);
  const now = ctx.clock.now();
  const booking = await insertBooking(
    ctx.em,
    { ...spaBookingFields(holder, appointment), ...paidBy(old) },
    now,
    newId('booking', now.getTime()),
  );
  await recordBookingEvent(ctx, 'booking.created', booking);
  return booking;
}

async function moveClass(ctx: TxCtx, old: Booking, input: z.infer<typeof rescheduleInput>): Promise<Booking> {
  const target = input.class_instance_id;
  if (input.date !== undefined || input.time !== undefined)
    throw validationError(
      input.date !== undefined ? 'date' : 'time',
      'A class booking moves to another class instance: send class_instance_id',
    );
  if (target === undefined) throw validationError('class_instance_id', "Missing required field 'class_instance_id'");
  if (target === old.classInstanceId) throw validationError('class_instance_id', 'The booking is already for this class instance');
  // Both instances locked in id order, so two moves in opposite directions cannot deadlock.
  if (old.classInstanceId! < target) await lockClassInstance(ctx.em, old.classInstanceId!);
  const slot = await lockBookableInstance(ctx, target);
  if (slot.provider.id !== old.providerId) {
    throw validationError(
      'class_instance_id',
      'A booking moves to another instance at the same provider; cancel it and book there instead',
    );
  }
  const holder = await holderOf(ctx, { user_pass_id: old.issuedPassId }, slot.instance.startsAt);
  moveTo(old, 'RESCHEDULED', ctx.clock.now());
  await ctx.em.flush();
  await checkSpot(ctx, slot, holder.client.id);
  await releaseSpot(ctx.em, old.classInstanceId!);
  const { payment, visitPeriod, visitEntitlementId, rescheduledFrom } = paidBy(old);
  return bookInstance(
    ctx,
    holder,
    slot,
    { payment, visitPeriod, visitEntitlementId, rescheduledFrom },
    newId('booking', ctx.clock.now().getTime()),
  );
}
