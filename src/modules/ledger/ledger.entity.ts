import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** One row per change of a reseller's business-account balance (`btxn_…`). Append-only. */
export const BusinessTransactionSchema = defineEntity({
  name: 'BusinessTransaction',
  tableName: 'business_transaction',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    type: p.enum(['CREDIT', 'DEBIT'] as const),
    amount: p.bigint('number'),
    /** Set when the row's transaction commits, by the trigger that applies it to the balance (ledger.service.ts). */
    balanceAfter: p.bigint('number').nullable(),
    description: p.string(),
    referenceId: p.string().nullable(),
    createdAt: p.datetime(),
  },
});
export type BusinessTransaction = InferEntity<typeof BusinessTransactionSchema>;
