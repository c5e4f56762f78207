import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * Stored statuses; EXPIRED is read from `expiresAt` (a PENDING lookup) or the pass (an ACTIVE one).
 * REVOKED: its issuer turned lookup off, which ends it for good.
 */
export const lookupStatuses = ['PENDING', 'ACTIVE', 'FAILED', 'REVOKED'] as const;
export const presentedLookupStatuses = ['PENDING', 'ACTIVE', 'FAILED', 'EXPIRED', 'REVOKED'] as const;
export type LookupStatus = (typeof presentedLookupStatuses)[number];

export const LookupSchema = defineEntity({
  name: 'Lookup',
  tableName: 'lookup',
  properties: {
    id: p.string().primary(),
    /** The reseller that started it, and verifies and uses it. */
    resellerId: p.string(),
    /** The client's reseller. */
    issuerId: p.string(),
    clientId: p.string(),
    issuedPassId: p.string(),
    status: p.enum(lookupStatuses),
    codeHash: p.string(),
    attemptsRemaining: p.integer(),
    expiresAt: p.datetime(),
    tokenHash: p.string().nullable(),
    verifiedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Lookup = InferEntity<typeof LookupSchema>;
