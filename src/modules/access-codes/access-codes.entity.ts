import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const accessCodeStatuses = ['ACTIVE', 'REDEEMED', 'EXPIRED'] as const;
export type AccessCodeStatus = (typeof accessCodeStatuses)[number];

/** ACTIVE until its expiry, then EXPIRED even before the sweep marks it (as a pass's status is read). */
export function accessCodeStatusAt(code: Pick<AccessCode, 'status' | 'expiresAt'>, now: Date): AccessCodeStatus {
  return code.status === 'ACTIVE' && code.expiresAt.getTime() <= now.getTime() ? 'EXPIRED' : code.status;
}

/** A single-use code for one visit (docs/partner-guide.md "Access codes"); only the SHA-256 of the code is kept. */
export const AccessCodeSchema = defineEntity({
  name: 'AccessCode',
  tableName: 'access_code',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    clientId: p.string(),
    issuedPassId: p.string(),
    // The provider it is valid at; null: any provider of `category` the pass covers.
    providerId: p.string().nullable(),
    category: p.enum(['GYM', 'SPA'] as const),
    codeHash: p.string(),
    // Stored ACTIVE until redeemed or swept; presented EXPIRED from `expiresAt` on (accessCodeStatusAt).
    status: p.enum(accessCodeStatuses),
    // The visit it holds: the pass counter's month (YYYY-MM), or the entitlement it came from.
    visitPeriod: p.string().nullable(),
    visitEntitlementId: p.string().nullable(),
    sessionId: p.string().nullable(),
    expiresAt: p.datetime(),
    redeemedAt: p.datetime().nullable(),
    redeemedProviderId: p.string().nullable(),
    // Set when it expired: whether its visit went back.
    visitRestored: p.boolean().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type AccessCode = InferEntity<typeof AccessCodeSchema>;

/**
 * An access code waiting for a purchase (docs/partner-guide.md "Access codes"): a co-pay option at its provider
 * (`COPAY`), or extra visits (`EXTRA_VISITS`). A code for any covered gym has no provider.
 */
export const AccessCodeSessionSchema = defineEntity({
  name: 'AccessCodeSession',
  tableName: 'access_code_session',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    clientId: p.string(),
    issuedPassId: p.string(),
    providerId: p.string().nullable(),
    kind: p.enum(['COPAY', 'EXTRA_VISITS'] as const),
    currency: p.string(),
    copayOptionIds: p.json<string[]>(),
    costPerVisit: p.bigint('number').nullable(),
    visitsUsed: p.integer().nullable(),
    maxVisits: p.integer().nullable(),
    status: p.enum(['OPEN', 'CONFIRMED', 'EXPIRED'] as const),
    expiresAt: p.datetime(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type AccessCodeSession = InferEntity<typeof AccessCodeSessionSchema>;
