import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { listIssuers } from './resellers.service.ts';
import { issuerSchema, presentIssuer } from './resellers.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;

// The issuers a reseller can look up clients at (docs/partner-guide.md "Lookup"); its own lookup setting is
// the lookups module's (lookup-settings.rest.ts).
export const resellersRoutes = defineRoutes([
  listRoute({
    path: '/issuers',
    operationId: 'listIssuers',
    tag: 'Lookups',
    summary: 'Get the resellers whose clients can be looked up (lookup enabled; the caller too when it is one), newest first',
    item: issuerSchema,
    description: 'A list of `issuer` objects',
    errors: [...authErrors],
    url: () => '/v3/api/business/reseller/issuers',
    message: 'Issuers retrieved successfully',
    list: listIssuers,
    present: presentIssuer,
  }),
]);
