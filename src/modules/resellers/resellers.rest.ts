import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { getOwnReseller, listIssuers, lookupSettingsInput, type LookupSettingsInput } from './resellers.service.ts';
import { setLookupEnabled } from '../lookups/index.ts';
import { issuerSchema, lookupSettingsSchema, presentIssuer, presentLookupSettings } from './resellers.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;

// A reseller's lookup setting and the issuers it can look up clients at (docs/partner-guide.md "Lookup").
export const resellersRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/settings/lookup',
    operationId: 'getLookupSettings',
    tag: 'Lookups',
    summary: "Whether other resellers may look up this reseller's clients",
    success: { status: 200, description: 'The `lookup_settings`', schema: lookupSettingsSchema },
    errors: [...authErrors],
    async handler(ctx) {
      return { status: 200, body: presentLookupSettings(await getOwnReseller(ctx)) };
    },
  },
  {
    method: 'POST',
    path: '/settings/lookup',
    operationId: 'setLookupEnabled',
    tag: 'Lookups',
    summary:
      "Let other resellers look up this reseller's clients (`enabled: true`), or stop it: off revokes every lookup of its clients for good",
    body: lookupSettingsInput,
    idempotent: true,
    success: { status: 200, description: 'The `lookup_settings`', schema: lookupSettingsSchema },
    errors: [...authErrors, 'idempotency_key_reused', 'idempotency_request_in_progress'],
    async handler(ctx, { body }) {
      return { status: 200, body: presentLookupSettings(await setLookupEnabled(ctx, body as LookupSettingsInput)) };
    },
  },
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
