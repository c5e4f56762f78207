import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import { copayOptionSchema, presentCopayOption } from '../providers/providers.presenter.ts';
import { bookingMessages, bookingStatuses, bookingTypes, type Booking, type BookingSession } from './bookings.entity.ts';
import { initiationStatuses, type Initiation } from './initiation.ts';

// V3 presenters of bookings and their sessions (docs/partner-guide.md "Bookings"); each returns z.infer of the
// schema the OpenAPI document publishes. Amounts are minor units of `currency`.

const unixTime = (what: string) => z.int().min(0).describe(`${what}, Unix seconds`);

export const refundSchema = z
  .object({
    policy: z.enum(['FULL', 'LATE']).describe('FULL: cancelled before the free-cancellation window closed; LATE: after it'),
    credits_refunded: z.int().min(0).describe("Credits put back in the client's wallet"),
    visits_restored: z.int().min(0).describe('Visits given back to the pass or the entitlement they came from'),
    copay_refunded: z.int().min(0).describe('Co-pay credited back to the business account, minor units of `currency`'),
    currency: z.string().describe('ISO-4217 currency code of `copay_refunded`'),
  })
  .meta({ id: 'Refund', description: "What a cancellation gave back, by the provider's cancellation policy" });

export const bookingSchema = z
  .object({
    object: z.literal('booking').describe('Always `booking`'),
    id: z.string().describe('Booking id'),
    status: z.enum(bookingStatuses).describe('PENDING until the provider confirms; CONFIRMED, COMPLETED, CANCELLED or RESCHEDULED'),
    type: z.enum(bookingTypes).describe('`spa` or `class`'),
    service_name: z.string().describe('The booked services (joined with ", ") or the class name'),
    provider_name: z.string().describe('Provider name'),
    date: z.string().describe("Appointment date in the provider's zone, YYYY-MM-DD"),
    time: z.string().describe("Appointment time in the provider's zone, HH:MM"),
    scheduled_for: unixTime('The instant the appointment starts'),
    created: unixTime('Creation time'),
    message: z.string().describe('Human-readable state of the booking'),
    client_id: z.string().describe('Id of the client'),
    provider_id: z.string().describe('Id of the provider'),
    class_instance_id: z.string().optional().describe('The class instance (class bookings)'),
    service_ids: z.array(z.string()).optional().describe('The booked services (spa bookings)'),
    visits_deducted: z.int().min(0).describe('Visits this booking holds (from the pass or an entitlement)'),
    credits_charged: z.int().min(0).describe("Credits debited from the client's wallet"),
    copay_amount: z.int().min(0).optional().describe('Co-pay debited from the business account for this booking'),
    currency: z.string().describe('ISO-4217 currency code of the amounts'),
    refund: refundSchema.optional().describe('Present once cancelled'),
    rescheduled_from: z.string().optional().describe('The booking this one replaced'),
    rescheduled_to: z.string().optional().describe('The booking that replaced this one (status RESCHEDULED)'),
  })
  .meta({ id: 'Booking', description: 'A spa appointment or class booking (spec 2.3)' });
export type BookingObject = z.infer<typeof bookingSchema>;

export function presentBooking(b: Booking): BookingObject {
  return {
    object: 'booking',
    id: b.id,
    status: b.status,
    type: b.type,
    service_name: b.serviceName,
    provider_name: b.providerName,
    date: b.localDate,
    time: b.localTime,
    scheduled_for: unixSeconds(b.startsAt),
    created: unixSeconds(b.createdAt),
    message: bookingMessages[b.status],
    client_id: b.clientId,
    provider_id: b.providerId,
    ...(b.classInstanceId ? { class_instance_id: b.classInstanceId } : { service_ids: b.serviceIds }),
    visits_deducted: b.visitsDeducted,
    credits_charged: b.creditsCharged,
    ...(b.copayAmount !== null ? { copay_amount: b.copayAmount } : {}),
    currency: b.currency,
    ...(b.refund ? { refund: b.refund } : {}),
    ...(b.rescheduledFrom ? { rescheduled_from: b.rescheduledFrom } : {}),
    ...(b.rescheduledTo ? { rescheduled_to: b.rescheduledTo } : {}),
  };
}

export const bookingStatusSchema = z
  .object({
    object: z.literal('booking_status').describe('Always `booking_status`'),
    booking_id: z.string().describe('Booking id'),
    status: z.enum(bookingStatuses).describe('The current status'),
    history: z
      .array(
        z.object({
          status: z.enum(bookingStatuses).describe('The status entered'),
          at: unixTime('When'),
        }),
      )
      .describe('Every status the booking went through, oldest first'),
  })
  .meta({ id: 'BookingStatus', description: 'The current status of a booking and how it got there' });

export function presentBookingStatus(b: Booking): z.infer<typeof bookingStatusSchema> {
  return {
    object: 'booking_status',
    booking_id: b.id,
    status: b.status,
    history: b.history.map((h) => ({ status: h.status, at: unixSeconds(new Date(h.at)) })),
  };
}

export const spaInitiationSchema = z
  .object({
    object: z.literal('spa_booking_initiation').describe('Always `spa_booking_initiation`'),
    copay_required: z.boolean().describe('false: the booking was created; true: a session was opened and a co-pay must be collected'),
    status: z.enum(initiationStatuses).describe('The booking status (PENDING), or AWAITING_COPAY for a session'),
    date: z.string().describe('Appointment date, YYYY-MM-DD'),
    time: z.string().describe('Appointment time, HH:MM'),
    created: unixTime('Creation time'),
    currency: z.string().describe('ISO-4217 currency code of the co-pay amounts'),
    message: z.string().describe('Human-readable result'),
    booking_id: z.string().optional().describe('Id of the booking, when it was created now'),
    service_name: z.string().describe('Names of the booked services, joined with ", "'),
    provider_name: z.string().describe('Provider name'),
    scheduled_for: unixTime('The instant the appointment starts'),
    session_id: z.string().optional().describe('Session to confirm, when a co-pay is required'),
    copay_amount: z.int().min(0).optional().describe('Co-pay to collect, minor units of `currency`, when a co-pay is required'),
    copay_credits: z.int().min(0).optional().describe('The co-pay in credits, when a co-pay is required'),
    session_expires_at: unixTime('When the session expires (24 hours after creation)').optional(),
  })
  .meta({ id: 'SpaBookingInitiation', description: 'The result of POST /bookings/spa (spec 2.2)' });
export type SpaInitiationObject = z.infer<typeof spaInitiationSchema>;

export function presentSpaInitiation(r: Initiation): SpaInitiationObject {
  const at = r.booking ?? r.session;
  const common = {
    object: 'spa_booking_initiation' as const,
    date: at.localDate,
    time: at.localTime,
    created: unixSeconds(at.createdAt),
    currency: at.currency,
    service_name: at.serviceName,
    provider_name: at.providerName,
    scheduled_for: unixSeconds(at.startsAt),
  };
  if (r.booking) {
    return { ...common, copay_required: r.copayRequired, status: r.status, message: r.message, booking_id: r.booking.id };
  }
  return {
    ...common,
    copay_required: r.copayRequired,
    status: r.status,
    message: r.message,
    session_id: r.session.id,
    copay_amount: r.session.copayAmount ?? 0,
    copay_credits: r.session.copayCredits ?? 0,
    session_expires_at: unixSeconds(r.session.expiresAt),
  };
}

export const classInitiationSchema = z
  .object({
    object: z.literal('class_booking_initiation').describe('Always `class_booking_initiation`'),
    copay_required: z.boolean().describe("true: the pass does not cover the provider's tier; collect a co-pay option, then confirm"),
    additional_visits_required: z.boolean().describe("true: the month's visits are used up; buy extra visits, then confirm"),
    status: z.enum(initiationStatuses).describe('PENDING when booked now; AWAITING_COPAY or AWAITING_VISITS for a session'),
    message: z.string().describe('Human-readable result'),
    created: unixTime('Creation time'),
    class_instance_id: z.string().describe('The class instance'),
    class_name: z.string().describe('Class name'),
    provider_name: z.string().describe('Provider name'),
    date: z.string().describe("Class date in the provider's zone, YYYY-MM-DD"),
    time: z.string().describe("Class time in the provider's zone, HH:MM"),
    scheduled_for: unixTime('The instant the class starts'),
    currency: z.string().describe('ISO-4217 currency code of the amounts'),
    booking_id: z.string().optional().describe('Id of the booking, when booked now'),
    visits_deducted: z.int().min(0).optional().describe('Visits taken for the booking, when booked now'),
    session_id: z.string().optional().describe('Session to confirm, when a purchase is required'),
    session_expires_at: unixTime('When the session expires (24 hours after creation)').optional(),
    copay_options: z.array(copayOptionSchema).optional().describe('What can be bought, when a co-pay is required'),
    visits_used: z.int().min(0).optional().describe('Visits used this month, when extra visits are required'),
    max_visits: z.int().min(0).optional().describe('Visits the pass allows a month, when extra visits are required'),
    cost_per_visit: z.int().min(0).optional().describe('Price of one extra visit, when extra visits are required'),
  })
  .meta({
    id: 'ClassBookingInitiation',
    description: 'The result of POST /bookings/class: booked now, or a session for a co-pay or extra visits',
  });
export type ClassInitiationObject = z.infer<typeof classInitiationSchema>;

export function presentClassInitiation(r: Initiation): ClassInitiationObject {
  const at = r.booking ?? r.session;
  const common = {
    object: 'class_booking_initiation' as const,
    created: unixSeconds(at.createdAt),
    class_instance_id: at.classInstanceId ?? '',
    class_name: at.serviceName,
    provider_name: at.providerName,
    date: at.localDate,
    time: at.localTime,
    scheduled_for: unixSeconds(at.startsAt),
    currency: at.currency,
  };
  if (r.booking) {
    return {
      ...common,
      copay_required: r.copayRequired,
      additional_visits_required: r.additionalVisitsRequired,
      status: r.status,
      message: r.message,
      booking_id: r.booking.id,
      visits_deducted: r.booking.visitsDeducted,
    };
  }
  const session = { session_id: r.session.id, session_expires_at: unixSeconds(r.session.expiresAt) };
  if (r.copayRequired) {
    return {
      ...common,
      ...session,
      copay_required: r.copayRequired,
      additional_visits_required: r.additionalVisitsRequired,
      status: r.status,
      message: r.message,
      copay_options: r.copayOptions.map(presentCopayOption),
    };
  }
  return {
    ...common,
    ...session,
    copay_required: r.copayRequired,
    additional_visits_required: r.additionalVisitsRequired,
    status: r.status,
    message: r.message,
    visits_used: r.session.visitsUsed ?? 0,
    max_visits: r.session.maxVisits ?? 0,
    cost_per_visit: r.session.costPerVisit ?? 0,
  };
}

/** The `data.object` of booking_session.* events. */
export const bookingSessionSchema = z
  .object({
    object: z.literal('booking_session').describe('Always `booking_session`'),
    id: z.string().describe('Session id'),
    kind: z.enum(['SPA_COPAY', 'CLASS_COPAY', 'CLASS_EXTRA_VISITS']).describe('What the confirm buys'),
    status: z.enum(['OPEN', 'CONFIRMED', 'EXPIRED']).describe('OPEN until confirmed or expired'),
    client_id: z.string().describe('Id of the client'),
    provider_id: z.string().describe('Id of the provider'),
    type: z.enum(bookingTypes).describe('`spa` or `class`'),
    class_instance_id: z.string().optional().describe('The class instance (class sessions)'),
    service_ids: z.array(z.string()).optional().describe('The services (spa sessions)'),
    scheduled_for: unixTime('The instant the appointment starts'),
    copay_amount: z.int().min(0).optional().describe('Co-pay to collect (spa sessions)'),
    cost_per_visit: z.int().min(0).optional().describe('Price of one extra visit (extra-visit sessions)'),
    currency: z.string().describe('ISO-4217 currency code'),
    booking_id: z.string().optional().describe('The booking the confirm created'),
    expires_at: unixTime('When the session expires'),
    created: unixTime('Creation time'),
  })
  .meta({ id: 'BookingSession', description: 'A booking waiting for a co-pay or extra visits' });
export type BookingSessionObject = z.infer<typeof bookingSessionSchema>;

export function presentBookingSession(s: BookingSession): BookingSessionObject {
  return {
    object: 'booking_session',
    id: s.id,
    kind: s.kind,
    status: s.status,
    client_id: s.clientId,
    provider_id: s.providerId,
    type: s.type,
    ...(s.classInstanceId ? { class_instance_id: s.classInstanceId } : { service_ids: s.serviceIds }),
    scheduled_for: unixSeconds(s.startsAt),
    ...(s.copayAmount !== null ? { copay_amount: s.copayAmount } : {}),
    ...(s.costPerVisit !== null ? { cost_per_visit: s.costPerVisit } : {}),
    currency: s.currency,
    ...(s.bookingId ? { booking_id: s.bookingId } : {}),
    expires_at: unixSeconds(s.expiresAt),
    created: unixSeconds(s.createdAt),
  };
}
