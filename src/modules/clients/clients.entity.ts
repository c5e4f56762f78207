import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const ClientSchema = defineEntity({
  name: 'Client',
  tableName: 'client',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    firstName: p.string(),
    lastName: p.string(),
    email: p.string(),
    phone: p.string().nullable(),
    externalId: p.string().nullable(),
    // The credit wallet balance; changed only together with a credit_transaction row.
    creditBalance: p.bigint('number'),
    createdAt: p.datetime(),
  },
});
export type Client = InferEntity<typeof ClientSchema>;
