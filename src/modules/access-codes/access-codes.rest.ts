import { defineRoutes } from '../../rest/route.ts';
import { confirmAccessCodeInput, confirmAccessCodeSession, type ConfirmAccessCodeInput } from './confirm-access-code.ts';
import { createAccessCode, createAccessCodeInput, type CreateAccessCodeInput } from './create-access-code.ts';
import {
  accessCodeCreationSchema,
  issuedAccessCodeSchema,
  presentAccessCodeSession,
  presentIssuedAccessCode,
} from './access-codes.presenter.ts';

// The reseller API's access-code routes (docs/partner-guide.md "Access codes").

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;
const idempotencyErrors = ['idempotency_key_reused', 'idempotency_request_in_progress'] as const;

export const accessCodesRoutes = defineRoutes([
  {
    method: 'POST',
    path: '/access-codes',
    operationId: 'createAccessCode',
    tag: 'Access codes',
    summary:
      'Generate a single-use access code (with a signed QR) for one visit: at `provider_id`, or at any gym the pass covers; ' +
      'or a session when a co-pay or extra visits must be bought first',
    body: createAccessCodeInput,
    idempotent: true,
    takesLookupToken: true,
    success: {
      status: 201,
      description: 'An `access_code` (its `code` and `qr_code` are shown only here), or an `access_code_session` to confirm (spec 2.4)',
      schema: accessCodeCreationSchema,
    },
    errors: [...authErrors, 'resource_not_found', 'provider_not_covered', 'pass_not_active', ...idempotencyErrors],
    async handler(ctx, { body }) {
      const made = await createAccessCode(ctx, body as CreateAccessCodeInput);
      const now = ctx.clock.now();
      return {
        status: 201,
        body: made.issued ? presentIssuedAccessCode(made.issued, now) : presentAccessCodeSession(made),
      };
    },
  },
  {
    method: 'POST',
    path: '/access-codes/{session_id}/confirm',
    operationId: 'confirmAccessCodeSession',
    tag: 'Access codes',
    summary:
      'Confirm an access-code session: `{number_of_visits, duration}` for extra visits, `{copay_package_id}` for a co-pay; ' +
      'debits the business account and makes the code, atomically',
    body: confirmAccessCodeInput,
    idempotent: true,
    takesLookupToken: true,
    success: {
      status: 201,
      description: 'The `access_code` (its `code` and `qr_code` are shown only here)',
      schema: issuedAccessCodeSchema,
    },
    errors: [
      ...authErrors,
      'resource_not_found',
      'session_already_confirmed',
      'session_expired',
      'insufficient_balance',
      'pass_not_active',
      ...idempotencyErrors,
    ],
    async handler(ctx, { params, body }) {
      const issued = await confirmAccessCodeSession(ctx, params.session_id, body as ConfirmAccessCodeInput);
      return { status: 201, body: presentIssuedAccessCode(issued, ctx.clock.now()) };
    },
  },
]);
