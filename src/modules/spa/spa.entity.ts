import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A service a spa offers, priced in credits (covered) and optionally as a co-pay (not covered). */
export const SpaServiceSchema = defineEntity({
  name: 'SpaService',
  tableName: 'spa_service',
  properties: {
    id: p.string().primary(),
    providerId: p.string(),
    name: p.string(),
    durationMinutes: p.integer(),
    credits: p.bigint('number'),
    copayAmount: p.bigint('number').nullable(),
    currency: p.string(),
    createdAt: p.datetime(),
  },
});
export type SpaService = InferEntity<typeof SpaServiceSchema>;
