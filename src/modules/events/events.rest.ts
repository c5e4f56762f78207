import { z } from 'zod';
import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { pageQuerySchema } from '../../platform/pagination.ts';
import { getOwnEvent, listEvents } from './events.service.ts';
import { eventSchema, presentEvent } from './events.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;

const eventsQuerySchema = pageQuerySchema.extend({
  type: z.string().optional().describe('Only events of this type (docs/partner-guide.md "Events"), e.g. `booking.created`'),
});

export const eventsRoutes = defineRoutes([
  listRoute({
    path: '/events',
    operationId: 'listEvents',
    tag: 'Events',
    summary: "Get the reseller's events, newest first, optionally of one type",
    query: eventsQuerySchema,
    item: eventSchema,
    description: 'A list of `event` objects',
    errors: [...authErrors],
    url: () => '/v3/api/business/reseller/events',
    message: 'Events retrieved successfully',
    list: (ctx, page, { query }) => listEvents(ctx, { type: query.type }, page),
    present: presentEvent,
  }),
  {
    method: 'GET',
    path: '/events/{id}',
    operationId: 'getEvent',
    tag: 'Events',
    summary: 'Get an event',
    success: { status: 200, description: 'An `event`', schema: eventSchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentEvent(await getOwnEvent(ctx, params.id)) };
    },
  },
]);
