import { errorBody } from '../../platform/errors.ts';
import { defineRoutes } from '../../rest/route.ts';
import { getOwnLookup } from './lookups.service.ts';
import { startLookup, startLookupInput, type StartLookupInput } from './start-lookup.ts';
import { verifyLookup, verifyLookupInput, type VerifyLookupInput } from './verify-lookup.ts';
import { lookupSchema, lookupVerificationSchema, presentLookup, presentLookupVerification } from './lookups.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;

// docs/partner-guide.md "Lookup". Neither POST takes an Idempotency-Key: a start mails a new code each time (the
// rate limit bounds retries), and a verify answers its token once and never stores it.
export const lookupsRoutes = defineRoutes([
  {
    method: 'POST',
    path: '/lookups',
    operationId: 'startLookup',
    tag: 'Lookups',
    summary:
      "Start a lookup of another reseller's client (or one's own): a 6-digit code is mailed to the client, valid 15 minutes " +
      '(no Idempotency-Key: each call mails a new code; at most 5 lookups a client an hour)',
    body: startLookupInput,
    success: { status: 201, description: 'The PENDING `lookup`', schema: lookupSchema },
    errors: [...authErrors, 'resource_not_found', 'rate_limited'],
    async handler(ctx, { body }) {
      return { status: 201, body: presentLookup(await startLookup(ctx, body as StartLookupInput), ctx.clock.now()) };
    },
  },
  {
    method: 'POST',
    path: '/lookups/{id}/verify',
    operationId: 'verifyLookup',
    tag: 'Lookups',
    summary:
      'Verify a lookup with the code the client received: answers the lookup token once (a wrong code uses one of 5 attempts; ' +
      'no Idempotency-Key: the token is never stored)',
    body: verifyLookupInput,
    success: { status: 200, description: 'The ACTIVE `lookup` with its `lookup_token`', schema: lookupVerificationSchema },
    errors: [...authErrors, 'invalid_lookup_code', 'resource_not_found', 'lookup_not_pending', 'lookup_expired'],
    async handler(ctx, { params, body }) {
      const outcome = await verifyLookup(ctx, params.id, body as VerifyLookupInput);
      // A wrong code is answered with its attempt kept (not thrown: a throw would roll it back).
      if ('wrongCode' in outcome) return { status: outcome.wrongCode.status, body: errorBody(outcome.wrongCode, ctx.requestId) };
      return { status: 200, body: presentLookupVerification(outcome.view, outcome.token, ctx.clock.now()) };
    },
  },
  {
    method: 'GET',
    path: '/lookups/{id}',
    operationId: 'getLookup',
    tag: 'Lookups',
    summary: 'Get a lookup this reseller started (never its token)',
    success: { status: 200, description: 'A `lookup`', schema: lookupSchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentLookup(await getOwnLookup(ctx, params.id), ctx.clock.now()) };
    },
  },
]);
