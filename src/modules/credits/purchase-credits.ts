import { z } from 'zod';
import { notFound } from '../../platform/errors.ts';
import { isId, newId } from '../../platform/ids.ts';
import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { noNul, parseInput } from '../../platform/validation.ts';
import { getOwnClient } from '../clients/index.ts';
import { debitBusinessAccount } from '../ledger/index.ts';
import { CreditPackageSchema, CreditPurchaseSchema, type CreditPurchase } from './credits.entity.ts';
import { creditWalletShowingBalance } from './credits.service.ts';
import { recordCreditEvent } from './credits.events.ts';

const idField = (what: string) => z.string().min(1).max(64).refine(noNul, 'Must not contain NUL characters').describe(what);

export const purchaseCreditsInput = z.strictObject({
  client_id: idField('The client whose wallet receives the credits'),
  credit_package_id: idField('One of the reseller’s credit packages (GET /credit_packages)'),
});
export type PurchaseCreditsInput = z.input<typeof purchaseCreditsInput>;

/**
 * POST /credit_purchases (docs/partner-guide.md "Credits"), one transaction: the business account pays the
 * package's price (422 insufficient_balance, nothing written), the client's wallet gets its
 * credits, each with its ledger row referencing the purchase, then the purchase row and the
 * credits.purchased event. The business account's row is locked before the client row, as a pass
 * renewal does. An unknown or another reseller's client or package is 404 naming the field.
 */
export async function purchaseCredits(ctx: TxCtx, raw: PurchaseCreditsInput): Promise<CreditPurchase> {
  const input = parseInput(purchaseCreditsInput, raw);
  const { resellerId } = resellerOf(ctx);
  const client = await getOwnClient(ctx, input.client_id, 'client_id');
  const pkg = isId('creditPackage', input.credit_package_id)
    ? await ctx.em.findOne(CreditPackageSchema, { id: input.credit_package_id, resellerId })
    : null;
  if (!pkg) throw notFound('credit package', input.credit_package_id, 'credit_package_id');

  const now = ctx.clock.now();
  const id = newId('creditPurchase', now.getTime());
  const debit = await debitBusinessAccount(ctx.em, {
    resellerId,
    amount: pkg.price,
    at: now,
    referenceId: id,
    description: `Credit package '${pkg.name}' (${pkg.credits} credits) for ${client.id}`,
  });
  const credit = await creditWalletShowingBalance(ctx.em, {
    resellerId,
    clientId: client.id,
    amount: pkg.credits,
    at: now,
    creditPurchaseId: id,
    description: `Credit package '${pkg.name}'`,
  });
  const purchase = ctx.em.create(CreditPurchaseSchema, {
    id,
    resellerId,
    clientId: client.id,
    creditPackageId: pkg.id,
    credits: pkg.credits,
    amount: pkg.price,
    currency: pkg.currency,
    balanceAfter: credit.balanceAfter,
    businessTransactionId: debit.id,
    creditTransactionId: credit.id,
    createdAt: now,
  });
  await ctx.em.flush();
  await recordCreditEvent(ctx, 'credits.purchased', purchase);
  return purchase;
}
