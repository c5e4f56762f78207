import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** One row per change of a client's credit wallet (`ctxn_…`). Append-only. */
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
    createdAt: p.datetime(),
  },
});
export type CreditTransaction = InferEntity<typeof CreditTransactionSchema>;
