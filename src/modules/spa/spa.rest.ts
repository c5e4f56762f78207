import { z } from 'zod';
import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { validationError } from '../../platform/errors.ts';
import { localDate } from '../../platform/validation.ts';
import { AVAILABILITY_DATES, checkLocalDate, getSpaAvailability, listSpaServices, MAX_SERVICES_PER_APPOINTMENT } from './spa.service.ts';
import { availabilitySchema, presentAvailability, presentSpaService, spaServiceSchema } from './spa.presenter.ts';

const catalogueErrors = ['validation_error', 'invalid_api_key', 'account_disabled', 'resource_not_found'] as const;

// Documents the query for OpenAPI; the handler reads service_ids from the raw query string,
// because a repeated parameter keeps only its last value in `query`.
const availabilityQuery = z.object({
  date: localDate.describe(
    `The local date at the spa (its \`timezone\`), YYYY-MM-DD, from ${AVAILABILITY_DATES.from} to ${AVAILABILITY_DATES.to}`,
  ),
  service_ids: z
    .string()
    .describe(
      `Ids of the services of one appointment (1–${MAX_SERVICES_PER_APPOINTMENT}, distinct, all of this spa), ` +
        'comma-separated (service_ids=svc_a,svc_b), or the parameter repeated (service_ids=svc_a&service_ids=svc_b), or both',
    ),
});

/** Every id of every `service_ids` value, split on commas; an empty piece is malformed. */
function serviceIdsOf(search: URLSearchParams): string[] {
  const values = search.getAll('service_ids');
  if (values.length === 0) throw validationError('service_ids', "Missing required parameter 'service_ids'");
  const ids = values.flatMap((v) => v.split(','));
  if (ids.some((id) => id.trim() === '')) throw validationError('service_ids', 'Expected service ids separated by commas, with none empty');
  return ids;
}

export const spaRoutes = defineRoutes([
  listRoute({
    path: '/spas/{spa_id}/services',
    operationId: 'listSpaServices',
    tag: 'Spas',
    summary: "The spa's services, newest first (a provider that is not a spa is not found)",
    item: spaServiceSchema,
    description: 'A list of `service` objects',
    errors: [...catalogueErrors],
    url: (params) => `/v3/api/business/reseller/spas/${encodeURIComponent(params.spa_id)}/services`,
    message: 'Services retrieved successfully',
    list: (ctx, page, { params }) => listSpaServices(ctx, params.spa_id, page),
    present: presentSpaService,
  }),
  {
    method: 'GET',
    path: '/spas/{spa_id}/availability',
    operationId: 'getSpaAvailability',
    tag: 'Spas',
    summary:
      'Appointment slots of a spa on a local date for a set of services: every 15 minutes inside opening hours; ' +
      'unavailable when past or when the room capacity is in use. A local time skipped by a DST change is not listed; ' +
      'a repeated one (autumn) is listed once, at its first occurrence.',
    query: availabilityQuery,
    repeatableQuery: ['service_ids'],
    success: { status: 200, description: 'An `availability` object', schema: availabilitySchema },
    errors: [...catalogueErrors],
    async handler(ctx, { params, query, search }) {
      const date = checkLocalDate(query.date);
      const availability = await getSpaAvailability(ctx, params.spa_id, { date, serviceIds: serviceIdsOf(search) });
      return { status: 200, body: presentAvailability(availability) };
    },
  },
]);
