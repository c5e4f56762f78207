import { defineEvents } from '../events/index.ts';
import { bookingSchema, bookingSessionSchema, presentBooking, presentBookingSession } from './bookings.presenter.ts';

// The bookings module's event types: its use cases pass the booking or the session, and the events
// module builds `data.object` with these presenters (src/modules/events/events.payloads.ts).

const booking = { schema: bookingSchema, present: presentBooking };
const bookingSession = { schema: bookingSessionSchema, present: presentBookingSession };
const bookingEvents = {
  'booking.created': booking,
  'booking.confirmed': booking,
  'booking.cancelled': booking,
  'booking.completed': booking,
  'booking.rescheduled': booking,
  'booking_session.created': bookingSession,
  'booking_session.expired': bookingSession,
};

declare module '../events/index.ts' {
  interface EventPayloads extends BookingEvents {}
}
type BookingEvents = typeof bookingEvents;

/** recordEvent for the bookings module's types. */
export const recordBookingEvent = defineEvents(bookingEvents);
