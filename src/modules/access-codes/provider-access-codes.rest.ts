import { defineRoutes } from '../../rest/route.ts';
import { redeemAccessCode, redeemAccessCodeInput, verificationKey, type RedeemAccessCodeInput } from './redeem-access-code.ts';
import { accessCodeSchema, presentAccessCode, presentVerificationKey, verificationKeySchema } from './access-codes.presenter.ts';

// The provider API's access-code routes, mounted under /v3/api/provider for provider keys
// (src/rest/router.ts; docs/partner-guide.md "Access codes"). No Idempotency-Key: its records are kept per
// reseller, and a repeated redeem is a 409 access_code_used that changes nothing.

const authErrors = ['validation_error', 'invalid_api_key', 'permission_denied'] as const;
/** The provider API's one tag in docs/openapi.json (test/bookings/provider-side.test.ts holds every provider route to it). */
const PROVIDER_TAG = 'Provider bookings';

export const providerAccessCodesRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/access-codes/verification-key',
    operationId: 'getAccessCodeVerificationKey',
    tag: PROVIDER_TAG,
    summary: 'The key to verify access-code QR payloads offline (HMAC-SHA256); a check that passes is a screen, redeeming is the authority',
    success: { status: 200, description: 'An `access_code_verification_key`', schema: verificationKeySchema },
    errors: [...authErrors],
    async handler(ctx) {
      return { status: 200, body: presentVerificationKey(await verificationKey(ctx)) };
    },
  },
  {
    method: 'POST',
    path: '/access-codes/redeem',
    operationId: 'redeemAccessCode',
    tag: PROVIDER_TAG,
    summary:
      'Redeem an access code (the 8 characters, or the scanned QR payload): once, recording the visit here (event ' +
      'access_code.redeemed). No Idempotency-Key (its records are kept per reseller): a repeat is 409 access_code_used and changes nothing',
    body: redeemAccessCodeInput,
    limit: 'redeem',
    success: { status: 200, description: 'The REDEEMED `access_code`', schema: accessCodeSchema },
    errors: [...authErrors, 'resource_not_found', 'provider_not_covered', 'access_code_used', 'access_code_expired', 'pass_not_active'],
    async handler(ctx, { body }) {
      return { status: 200, body: presentAccessCode(await redeemAccessCode(ctx, body as RedeemAccessCodeInput), ctx.clock.now()) };
    },
  },
]);
