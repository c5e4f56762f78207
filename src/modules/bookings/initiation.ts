import type { CopayOption } from '../providers/index.ts';
import { bookingStatuses, type Booking, type BookingSession } from './bookings.entity.ts';

// What bookSpa and bookClass answer (docs/partner-guide.md "Bookings"), one result for every surface:
// bookings.presenter.ts writes it as the V3 initiation, bookings.graphql.ts reads it as the
// SpaBookingInitiation and ClassBookingInitiation types, the hosted page confirms its session.

/** A session's status as the initiation shows it: no booking exists until the confirm. */
export const initiationStatuses = [...bookingStatuses, 'AWAITING_COPAY', 'AWAITING_VISITS'] as const;
export type InitiationStatus = (typeof initiationStatuses)[number];

interface Outcome {
  status: InitiationStatus;
  /** A co-pay must be bought before the confirm books: the spa's, or one of `copayOptions` for a class. */
  copayRequired: boolean;
  /** The month's visits are used up: extra visits must be bought before the confirm books. */
  additionalVisitsRequired: boolean;
  message: string;
}

/** Booked now: the spa's credits debited, or a class visit taken. */
export interface BookedNow extends Outcome {
  booking: Booking;
  session?: undefined;
  copayOptions?: undefined;
}

/** A session to confirm once the co-pay or the extra visits are bought; `copayOptions` are a class co-pay's choices. */
export interface SessionOpened extends Outcome {
  booking?: undefined;
  session: BookingSession;
  copayOptions: CopayOption[];
}

export type Initiation = BookedNow | SessionOpened;

const bookedNow = (booking: Booking, message: string): BookedNow => ({
  status: booking.status,
  copayRequired: false,
  additionalVisitsRequired: false,
  message,
  booking,
});

export const spaBooked = (booking: Booking): BookedNow => bookedNow(booking, 'Spa appointment booked');

export const classBooked = (booking: Booking): BookedNow => bookedNow(booking, 'Class booked');

/** A spa appointment the pass does not cover, held by a SPA_COPAY session until its co-pay is collected. */
export const spaCopayRequired = (session: BookingSession): SessionOpened => ({
  status: 'AWAITING_COPAY',
  copayRequired: true,
  additionalVisitsRequired: false,
  message: 'Co-pay required: collect it from the client, then confirm the session',
  session,
  copayOptions: [],
});

/** A class session: CLASS_COPAY offers `copayOptions`, CLASS_EXTRA_VISITS sells visits at the session's `costPerVisit`. */
export function classSessionOpened(session: BookingSession, copayOptions: CopayOption[]): SessionOpened {
  if (session.kind === 'CLASS_COPAY') {
    return {
      status: 'AWAITING_COPAY',
      copayRequired: true,
      additionalVisitsRequired: false,
      message: 'The pass does not cover this provider: collect a co-pay option, then confirm with its id',
      session,
      copayOptions,
    };
  }
  return {
    status: 'AWAITING_VISITS',
    copayRequired: false,
    additionalVisitsRequired: true,
    message: "This month's visits are used up: buy extra visits, then confirm",
    session,
    copayOptions: [],
  };
}
