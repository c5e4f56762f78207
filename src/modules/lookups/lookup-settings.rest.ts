import { defineRoutes } from '../../rest/route.ts';
import { getOwnReseller, lookupSettingsInput, type LookupSettingsInput } from '../resellers/index.ts';
import { setLookupEnabled } from './lookup-settings.ts';
import { lookupSettingsSchema, presentLookupSettings } from './lookup-settings.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;

// A reseller's lookup setting (docs/partner-guide.md "Lookup"): whether its clients can be looked up.
export const lookupSettingsRoutes = defineRoutes([
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
]);
