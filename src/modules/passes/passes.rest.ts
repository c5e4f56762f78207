import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { issuePass, issuePassInput, type IssuePassInput } from './issue-pass.ts';
import {
  setExpiryInput,
  setIssuedPassExpiry,
  updateIssuedPass,
  updateIssuedPassInput,
  type SetExpiryInput,
  type UpdateIssuedPassInput,
} from './change-issued-pass.ts';
import { renewInput, renewIssuedPass, type RenewInput } from './renew-issued-pass.ts';
import { getIssuedPassOfClient, getPass, listPassesWithProviderCounts } from './passes.service.ts';
import { issuedPassSchema, passRenewalSchema, passSchema, presentIssuedPass, presentPass, presentRenewal } from './passes.presenter.ts';
import { countCoveredProviders } from './provider-counts.ts';

const passErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;

export const passesRoutes = defineRoutes([
  listRoute({
    path: '/passes',
    operationId: 'listPasses',
    tag: 'Passes',
    summary: 'Get all reseller passes (pass packages), newest first',
    item: passSchema,
    description: 'A list of `pass` objects',
    errors: [...passErrors],
    url: () => '/v3/api/business/reseller/passes',
    message: 'Passes retrieved successfully',
    list: listPassesWithProviderCounts,
    present: (p) => presentPass(p.pass, p.providerCount),
  }),
  {
    method: 'GET',
    path: '/passes/{id}',
    operationId: 'getPass',
    tag: 'Passes',
    summary: 'Get one pass package',
    success: { status: 200, description: 'A `pass` object', schema: passSchema },
    errors: [...passErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      const pass = await getPass(ctx, params.id);
      const counts = await countCoveredProviders(ctx.em, [pass.id]);
      return { status: 200, body: presentPass(pass, counts.get(pass.id) ?? 0) };
    },
  },
  {
    method: 'POST',
    path: '/issued_passes',
    operationId: 'issuePass',
    tag: 'Issued passes',
    summary: 'Create a client and issue it a pass (PREPAID debits the business account)',
    body: issuePassInput,
    idempotent: true,
    success: { status: 201, description: 'The `issued_pass`', schema: issuedPassSchema },
    errors: [...passErrors, 'insufficient_balance', 'idempotency_key_reused', 'idempotency_request_in_progress'],
    async handler(ctx, { body }) {
      const result = await issuePass(ctx, body as IssuePassInput);
      return { status: 201, body: presentIssuedPass(result, ctx.clock.now()) };
    },
  },
  {
    method: 'POST',
    path: '/issued_passes/update',
    operationId: 'updateIssuedPass',
    tag: 'Issued passes',
    summary:
      "Change the pass type of the client's issued pass (a PREPAID package starts a paid period; leaving one refunds its unused days)",
    body: updateIssuedPassInput,
    idempotent: true,
    success: { status: 200, description: 'The updated `issued_pass`', schema: issuedPassSchema },
    errors: [
      ...passErrors,
      'resource_not_found',
      'pass_cancelled',
      'pass_unchanged',
      'insufficient_balance',
      'idempotency_key_reused',
      'idempotency_request_in_progress',
    ],
    async handler(ctx, { body }) {
      const result = await updateIssuedPass(ctx, body as UpdateIssuedPassInput);
      return { status: 200, body: presentIssuedPass(result, ctx.clock.now()) };
    },
  },
  {
    method: 'POST',
    path: '/issued_passes/{client_id}/expiry',
    operationId: 'setIssuedPassExpiry',
    tag: 'Issued passes',
    summary: "Set the expiry of the client's issued pass (an expired pass becomes ACTIVE again)",
    body: setExpiryInput,
    idempotent: true,
    success: { status: 200, description: 'The updated `issued_pass`', schema: issuedPassSchema },
    errors: [
      ...passErrors,
      'resource_not_found',
      'pass_cancelled',
      'renewal_required',
      'idempotency_key_reused',
      'idempotency_request_in_progress',
    ],
    async handler(ctx, { params, body }) {
      const result = await setIssuedPassExpiry(ctx, params.client_id, body as SetExpiryInput);
      return { status: 200, body: presentIssuedPass(result, ctx.clock.now()) };
    },
  },
  {
    method: 'POST',
    path: '/issued_passes/{client_id}/renew',
    operationId: 'renewIssuedPass',
    tag: 'Issued passes',
    summary: 'Renew a PREPAID pass for one more period (debits the price, resets visits, grants credits)',
    body: renewInput,
    idempotent: true,
    success: { status: 201, description: 'A `pass_renewal`', schema: passRenewalSchema },
    errors: [
      ...passErrors,
      'resource_not_found',
      'not_prepaid',
      'pass_cancelled',
      'insufficient_balance',
      'idempotency_key_reused',
      'idempotency_request_in_progress',
    ],
    async handler(ctx, { params, body }) {
      const result = await renewIssuedPass(ctx, params.client_id, body as RenewInput);
      return { status: 201, body: presentRenewal(result, ctx.clock.now()) };
    },
  },
  {
    method: 'GET',
    path: '/issued_passes/{client_id}',
    operationId: 'getIssuedPass',
    tag: 'Issued passes',
    summary: "Get the client's current issued pass",
    success: { status: 200, description: 'An `issued_pass`', schema: issuedPassSchema },
    errors: [...passErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      const current = await getIssuedPassOfClient(ctx, params.client_id);
      return { status: 200, body: presentIssuedPass(current, ctx.clock.now()) };
    },
  },
]);
