import { z } from 'zod';
import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { pageQuerySchema } from '../../platform/pagination.ts';
import { bookClass, bookClassInput, type BookClassInput } from './book-class.ts';
import { bookSpa, bookSpaInput, type BookSpaInput } from './book-spa.ts';
import { cancelBooking } from './cancel-booking.ts';
import { confirmClassBooking, confirmClassInput, confirmSpaBooking, type ConfirmClassInput } from './confirm-session.ts';
import { rescheduleBooking, rescheduleInput, type RescheduleInput } from './reschedule-booking.ts';
import { bookingStatuses, bookingTypes, getOwnBooking, listClientBookings } from './bookings.service.ts';
import {
  bookingSchema,
  bookingStatusSchema,
  classInitiationSchema,
  presentBooking,
  presentBookingStatus,
  presentClassInitiation,
  presentSpaInitiation,
  spaInitiationSchema,
} from './bookings.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;
const idempotencyErrors = ['idempotency_key_reused', 'idempotency_request_in_progress'] as const;
const initiationErrors = [
  ...authErrors,
  'resource_not_found',
  'provider_not_covered',
  'pass_not_active',
  'insufficient_credits',
  ...idempotencyErrors,
] as const;

const bookingsQuerySchema = pageQuerySchema.extend({
  status: z
    .string()
    .optional()
    .describe(`Only bookings in this status: ${bookingStatuses.join(', ')} (any case)`),
  type: z
    .string()
    .optional()
    .describe(`Only bookings of this type: ${bookingTypes.join(', ')} (any case)`),
});

export const bookingsRoutes = defineRoutes([
  {
    method: 'POST',
    path: '/bookings/spa',
    operationId: 'bookSpa',
    tag: 'Bookings',
    summary: 'Initiate a spa booking: booked now (credits debited) when the pass covers the spa, else a co-pay session (spec 4.1)',
    body: bookSpaInput,
    idempotent: true,
    takesLookupToken: true,
    success: { status: 201, description: 'A `spa_booking_initiation` (spec 2.2)', schema: spaInitiationSchema },
    errors: [...initiationErrors, 'slot_unavailable'],
    async handler(ctx, { body }) {
      return { status: 201, body: presentSpaInitiation(await bookSpa(ctx, body as BookSpaInput)) };
    },
  },
  {
    method: 'POST',
    path: '/bookings/spa/{session_id}/confirm',
    operationId: 'confirmSpaBooking',
    tag: 'Bookings',
    summary: 'Confirm a spa co-pay session: debits the business account and books the slot, atomically (spec 4.2)',
    idempotent: true,
    takesLookupToken: true,
    success: { status: 201, description: 'The `booking` (spec 2.3)', schema: bookingSchema },
    errors: [
      ...authErrors,
      'resource_not_found',
      'session_already_confirmed',
      'slot_unavailable',
      'session_expired',
      'insufficient_balance',
      'pass_not_active',
      ...idempotencyErrors,
    ],
    async handler(ctx, { params }) {
      return { status: 201, body: presentBooking(await confirmSpaBooking(ctx, params.session_id)) };
    },
  },
  {
    method: 'POST',
    path: '/bookings/class',
    operationId: 'bookClass',
    tag: 'Bookings',
    summary: 'Initiate a class booking: booked now (a visit taken), or a session when extra visits or a co-pay are needed',
    body: bookClassInput,
    idempotent: true,
    takesLookupToken: true,
    success: { status: 201, description: 'A `class_booking_initiation`', schema: classInitiationSchema },
    errors: [...initiationErrors, 'class_full', 'already_booked', 'class_not_bookable'],
    async handler(ctx, { body }) {
      return { status: 201, body: presentClassInitiation(await bookClass(ctx, body as BookClassInput)) };
    },
  },
  {
    method: 'POST',
    path: '/bookings/class/{session_id}/confirm',
    operationId: 'confirmClassBooking',
    tag: 'Bookings',
    summary:
      'Confirm a class session: `{number_of_visits, duration}` for extra visits, `{copay_package_id}` for a co-pay; ' +
      'debits the business account and books, atomically',
    body: confirmClassInput,
    idempotent: true,
    takesLookupToken: true,
    success: { status: 201, description: 'The `booking`', schema: bookingSchema },
    errors: [
      ...authErrors,
      'resource_not_found',
      'session_already_confirmed',
      'class_full',
      'already_booked',
      'class_not_bookable',
      'session_expired',
      'insufficient_balance',
      'pass_not_active',
      ...idempotencyErrors,
    ],
    async handler(ctx, { params, body }) {
      return { status: 201, body: presentBooking(await confirmClassBooking(ctx, params.session_id, body as ConfirmClassInput)) };
    },
  },
  listRoute({
    path: '/clients/{client_id}/bookings',
    operationId: 'listClientBookings',
    tag: 'Bookings',
    summary: "Get a client's bookings, newest first, optionally of one status and type",
    query: bookingsQuerySchema,
    item: bookingSchema,
    description: 'A list of `booking` objects',
    errors: [...authErrors, 'resource_not_found'],
    url: (params) => `/v3/api/business/reseller/clients/${params.client_id}/bookings`,
    message: 'Bookings retrieved successfully',
    list: (ctx, page, { params, query }) => listClientBookings(ctx, params.client_id, { status: query.status, type: query.type }, page),
    present: presentBooking,
  }),
  {
    method: 'GET',
    path: '/bookings/{id}',
    operationId: 'getBooking',
    tag: 'Bookings',
    summary: 'Get a booking',
    success: { status: 200, description: 'A `booking`', schema: bookingSchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentBooking(await getOwnBooking(ctx, params.id)) };
    },
  },
  {
    method: 'GET',
    path: '/bookings/{id}/status',
    operationId: 'getBookingStatus',
    tag: 'Bookings',
    summary: 'Get the current status of a booking with its history',
    success: { status: 200, description: 'A `booking_status`', schema: bookingStatusSchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentBookingStatus(await getOwnBooking(ctx, params.id)) };
    },
  },
  {
    method: 'POST',
    path: '/bookings/{id}/cancel',
    operationId: 'cancelBooking',
    tag: 'Bookings',
    summary:
      "Cancel a spa or class booking; the provider's cancellation policy decides the refund (no Idempotency-Key: a second cancel is 409 already_cancelled)",
    success: { status: 200, description: 'The cancelled `booking` with its `refund`', schema: bookingSchema },
    errors: [...authErrors, 'resource_not_found', 'already_cancelled', 'not_cancellable'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentBooking(await cancelBooking(ctx, params.id)) };
    },
  },
  {
    method: 'POST',
    path: '/bookings/{id}/reschedule',
    operationId: 'rescheduleBooking',
    tag: 'Bookings',
    summary:
      'Move a booking: `{date, time}` for a spa appointment, `{class_instance_id}` (same provider) for a class; nothing is charged again',
    body: rescheduleInput,
    idempotent: true,
    success: { status: 201, description: 'The new PENDING `booking` (`rescheduled_from` names the old one)', schema: bookingSchema },
    errors: [
      ...authErrors,
      'resource_not_found',
      'not_reschedulable',
      'slot_unavailable',
      'class_full',
      'already_booked',
      'class_not_bookable',
      'pass_not_active',
      ...idempotencyErrors,
    ],
    async handler(ctx, { params, body }) {
      return { status: 201, body: presentBooking(await rescheduleBooking(ctx, params.id, body as RescheduleInput)) };
    },
  },
]);
