import { listEnvelope, listOf } from '../../rest/envelope.ts';
import { defineRoutes } from '../../rest/route.ts';
import { pageArgsFromQuery, pageQuerySchema } from '../../platform/pagination.ts';
import { listIssuers } from './resellers.service.ts';
import { issuerSchema, presentIssuer } from './resellers.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;

// The issuers a reseller can look up clients at (docs/partner-guide.md "Lookup"); its own lookup setting is
// the lookups module's (lookup-settings.rest.ts).
export const resellersRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/issuers',
    operationId: 'listIssuers',
    tag: 'Lookups',
    paginated: true,
    summary: 'Get the resellers whose clients can be looked up (lookup enabled; the caller too when it is one), newest first',
    query: pageQuerySchema,
    success: { status: 200, description: 'A list of `issuer` objects', schema: listOf(issuerSchema) },
    errors: [...authErrors, 'invalid_cursor'],
    async handler(ctx, { query }) {
      const page = await listIssuers(ctx, pageArgsFromQuery(query));
      return {
        status: 200,
        body: listEnvelope(page, '/v3/api/business/reseller/issuers', 'Issuers retrieved successfully', presentIssuer),
      };
    },
  },
]);
