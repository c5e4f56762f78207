import { z } from 'zod';
import { pageQuerySchema } from '../../platform/pagination.ts';
import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { bookingStatuses, bookingTypes } from './bookings.service.ts';
import { bookingSchema, presentBooking } from './bookings.presenter.ts';
import { checkInProviderBooking, confirmProviderBooking, getProviderBooking, listProviderBookings } from './provider-bookings.ts';

// The provider API's booking routes, mounted under /v3/api/provider for provider keys (src/rest/router.ts).
// They take no Idempotency-Key: its records are kept per reseller, and a repeated confirm or
// check-in is a harmless 409 booking_status_conflict that changes nothing.

const authErrors = ['validation_error', 'invalid_api_key', 'permission_denied'] as const;
const NO_KEY = 'No Idempotency-Key (its records are kept per reseller): a repeat is 409 booking_status_conflict and changes nothing';

const providerBookingsQuery = pageQuerySchema.extend({
  status: z
    .string()
    .optional()
    .describe(`Only bookings in this status: ${bookingStatuses.join(', ')} (any case)`),
  type: z
    .string()
    .optional()
    .describe(`Only bookings of this type: ${bookingTypes.join(', ')} (any case)`),
});

export const providerBookingsRoutes = defineRoutes([
  listRoute({
    path: '/bookings',
    operationId: 'listProviderBookings',
    tag: 'Provider bookings',
    summary: "Get the provider's bookings (every reseller's), newest first, optionally of one status and type",
    query: providerBookingsQuery,
    item: bookingSchema,
    description: 'A list of `booking` objects',
    errors: [...authErrors],
    url: () => '/v3/api/provider/bookings',
    message: 'Bookings retrieved successfully',
    list: (ctx, page, { query }) => listProviderBookings(ctx, { status: query.status, type: query.type }, page),
    present: presentBooking,
  }),
  {
    method: 'GET',
    path: '/bookings/{id}',
    operationId: 'getProviderBooking',
    tag: 'Provider bookings',
    summary: "Get one of the provider's bookings",
    success: { status: 200, description: 'A `booking`', schema: bookingSchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentBooking(await getProviderBooking(ctx, params.id)) };
    },
  },
  {
    method: 'POST',
    path: '/bookings/{id}/confirm',
    operationId: 'confirmProviderBooking',
    tag: 'Provider bookings',
    summary: `Confirm a PENDING booking (CONFIRMED; event booking.confirmed). ${NO_KEY}`,
    success: { status: 200, description: 'The CONFIRMED `booking`', schema: bookingSchema },
    errors: [...authErrors, 'resource_not_found', 'booking_status_conflict'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentBooking(await confirmProviderBooking(ctx, params.id)) };
    },
  },
  {
    method: 'POST',
    path: '/bookings/{id}/check-in',
    operationId: 'checkInProviderBooking',
    tag: 'Provider bookings',
    summary: `Check the client in for a CONFIRMED booking (COMPLETED; event booking.completed). ${NO_KEY}`,
    success: { status: 200, description: 'The COMPLETED `booking`', schema: bookingSchema },
    errors: [...authErrors, 'resource_not_found', 'booking_status_conflict'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentBooking(await checkInProviderBooking(ctx, params.id)) };
    },
  },
]);
