import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * One row per change of a client's credit wallet (`ctxn_…`). Append-only. The table's `seq`
 * (drawn under the client row's lock, docs/domain-rules.md "Money") orders the rows as the balance moved;
 * it is read by plain SQL only, so it is not mapped here.
 */
export const CreditTransactionSchema = defineEntity({
  name: 'CreditTransaction',
  tableName: 'credit_transaction',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    clientId: p.string(),
    type: p.enum(['CREDIT', 'DEBIT'] as const),
    amount: p.bigint('number'),
    balanceAfter: p.bigint('number'),
    description: p.string(),
    bookingId: p.string().nullable(),
    creditPurchaseId: p.string().nullable(),
    createdAt: p.datetime(),
  },
});
export type CreditTransaction = InferEntity<typeof CreditTransactionSchema>;

/** A package of credits a reseller sells to its clients (`cpkg_…`), priced in the reseller's currency. */
export const CreditPackageSchema = defineEntity({
  name: 'CreditPackage',
  tableName: 'credit_package',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    name: p.string(),
    credits: p.bigint('number'),
    /** Minor units of `currency`, > 0. */
    price: p.bigint('number'),
    currency: p.string(),
    createdAt: p.datetime(),
  },
});
export type CreditPackage = InferEntity<typeof CreditPackageSchema>;

/** A credit package bought into a client's wallet (`cpur_…`); its two ledger rows reference it. */
export const CreditPurchaseSchema = defineEntity({
  name: 'CreditPurchase',
  tableName: 'credit_purchase',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    clientId: p.string(),
    creditPackageId: p.string(),
    credits: p.bigint('number'),
    /** What the business account paid, minor units of `currency`. */
    amount: p.bigint('number'),
    currency: p.string(),
    /** The wallet's balance right after the purchase. */
    balanceAfter: p.bigint('number'),
    businessTransactionId: p.string(),
    creditTransactionId: p.string(),
    createdAt: p.datetime(),
  },
});
export type CreditPurchase = InferEntity<typeof CreditPurchaseSchema>;
