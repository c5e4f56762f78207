import { z } from 'zod';
import { listEnvelope, listOf } from '../../rest/envelope.ts';
import { defineRoutes } from '../../rest/route.ts';
import { pageArgsFromQuery, pageQuerySchema } from '../../platform/pagination.ts';
import { getOwnEvent, listEvents } from './events.service.ts';
import { eventSchema, presentEvent } from './events.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;

const eventsQuerySchema = pageQuerySchema.extend({
  type: z.string().optional().describe('Only events of this type (docs/partner-guide.md "Events"), e.g. `booking.created`'),
});

export const eventsRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/events',
    operationId: 'listEvents',
    tag: 'Events',
    paginated: true,
    summary: "Get the reseller's events, newest first, optionally of one type",
    query: eventsQuerySchema,
    success: { status: 200, description: 'A list of `event` objects', schema: listOf(eventSchema) },
    errors: [...authErrors, 'invalid_cursor'],
    async handler(ctx, { query }) {
      const page = await listEvents(ctx, { type: query.type }, pageArgsFromQuery(query));
      return { status: 200, body: listEnvelope(page, '/v3/api/business/reseller/events', 'Events retrieved successfully', presentEvent) };
    },
  },
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
