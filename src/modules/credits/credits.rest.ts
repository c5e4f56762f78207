import { z } from 'zod';
import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { MAX_LIMIT, pageArgsFromQuery, pageQuerySchema } from '../../platform/pagination.ts';
import { clientCredits, RECENT_TRANSACTIONS } from './client-credits.ts';
import { listCreditPackages } from './list-credit-packages.ts';
import { purchaseCredits, purchaseCreditsInput, type PurchaseCreditsInput } from './purchase-credits.ts';
import {
  creditBalanceSchema,
  creditPackageSchema,
  creditPurchaseSchema,
  presentCreditBalance,
  presentCreditPackage,
  presentCreditPurchase,
} from './credits.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;
const idempotencyErrors = ['idempotency_key_reused', 'idempotency_request_in_progress'] as const;

/**
 * The wallet's page: `limit` is checked by pageArgsFromQuery like every list's, but defaults to
 * RECENT_TRANSACTIONS; this schema only documents that (the router takes its parameter names).
 */
const creditsQuerySchema = pageQuerySchema.extend({
  limit: z
    .string()
    .optional()
    .meta({
      openapi: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: RECENT_TRANSACTIONS, description: 'Transactions a page' },
    }),
  starting_after: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe('A transaction id of this wallet: the page holds the older transactions after it'),
  ending_before: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe('A transaction id of this wallet: the page holds the newer transactions before it'),
});

export const creditsRoutes = defineRoutes([
  listRoute({
    path: '/credit_packages',
    operationId: 'listCreditPackages',
    tag: 'Credits',
    summary: "Get the reseller's credit packages (in its currency), newest first",
    item: creditPackageSchema,
    description: 'A list of `credit_package` objects',
    errors: [...authErrors],
    url: () => '/v3/api/business/reseller/credit_packages',
    message: 'Credit packages retrieved successfully',
    list: listCreditPackages,
    present: presentCreditPackage,
  }),
  {
    method: 'POST',
    path: '/credit_purchases',
    operationId: 'purchaseCredits',
    tag: 'Credits',
    summary: "Buy a credit package into a client's wallet: debits the business account its price and credits the wallet, atomically",
    body: purchaseCreditsInput,
    idempotent: true,
    success: { status: 201, description: 'The `credit_purchase`', schema: creditPurchaseSchema },
    errors: [...authErrors, 'resource_not_found', 'insufficient_balance', ...idempotencyErrors],
    async handler(ctx, { body }) {
      return { status: 201, body: presentCreditPurchase(await purchaseCredits(ctx, body as PurchaseCreditsInput)) };
    },
  },
  {
    method: 'GET',
    path: '/clients/{client_id}/credits',
    operationId: 'getClientCredits',
    tag: 'Credits',
    summary:
      `Get a client's credit balance and wallet transactions, newest first (the ${RECENT_TRANSACTIONS} most recent, ` +
      'or a page of them with limit, starting_after, ending_before)',
    query: creditsQuerySchema,
    takesLookupToken: true,
    success: { status: 200, description: 'A `credit_balance`', schema: creditBalanceSchema },
    errors: [...authErrors, 'resource_not_found', 'invalid_cursor'],
    async handler(ctx, { params, query }) {
      const args = pageArgsFromQuery(query);
      const page = query.limit === undefined ? { ...args, limit: RECENT_TRANSACTIONS } : args;
      return { status: 200, body: presentCreditBalance(await clientCredits(ctx, params.client_id, page)) };
    },
  },
]);
