import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export type CategoryType = 'GYM' | 'SPA';
export interface PassCategory {
  type: CategoryType;
  tiers: string[];
  /** Visits a calendar month; null = unlimited. */
  visits_allowed: number | null;
  /** Credits granted to the client's wallet each period. */
  credit_allocated: number;
}

export const durations = ['MONTHLY', 'QUARTERLY', 'ANNUALLY'] as const;
export type Duration = (typeof durations)[number];
export const paymentModels = ['PAYG', 'PREPAID'] as const;
export type PaymentModel = (typeof paymentModels)[number];

export const PassPackageSchema = defineEntity({
  name: 'PassPackage',
  tableName: 'pass_package',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    name: p.string(),
    description: p.string(),
    price: p.bigint('number'),
    currency: p.string(),
    duration: p.enum(durations),
    // Set by the operator for each reseller and package, never through the API.
    paymentModel: p.enum(paymentModels),
    categories: p.json<PassCategory[]>(),
    createdAt: p.datetime(),
  },
});
export type PassPackage = InferEntity<typeof PassPackageSchema>;

export const issuedPassStatuses = ['ACTIVE', 'EXPIRED', 'CANCELLED'] as const;
export type IssuedPassStatus = (typeof issuedPassStatuses)[number];

export const IssuedPassSchema = defineEntity({
  name: 'IssuedPass',
  tableName: 'issued_pass',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    clientId: p.string(),
    passId: p.string(),
    passcode: p.string(),
    status: p.enum(issuedPassStatuses),
    paymentModel: p.enum(paymentModels),
    startDate: p.string().columnType('date'),
    expiresAt: p.datetime(),
    // PREPAID: the end of the last paid period; expiry may not pass it (docs/domain-rules.md "Decisions recorded here"). PAYG: null.
    paidThrough: p.datetime().nullable(),
    // Visit counters belong to one calendar month (YYYY-MM, UTC); another month reads as zero.
    visitsPeriod: p.string(),
    visitsUsed: p.json<Partial<Record<CategoryType, number>>>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type IssuedPass = InferEntity<typeof IssuedPassSchema>;

// Visits bought on top of the pass (src/modules/passes/visits.ts).
export const VisitEntitlementSchema = defineEntity({
  name: 'VisitEntitlement',
  tableName: 'visit_entitlement',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    clientId: p.string(),
    issuedPassId: p.string(),
    kind: p.enum(['EXTRA_VISITS', 'COPAY'] as const),
    category: p.enum(['GYM', 'SPA'] as const),
    providerId: p.string().nullable(),
    copayOptionId: p.string().nullable(),
    visitsTotal: p.integer(),
    visitsUsed: p.integer(),
    amountPaid: p.bigint('number'),
    currency: p.string(),
    validFrom: p.datetime(),
    validUntil: p.datetime(),
    sessionId: p.string().nullable(),
    createdAt: p.datetime(),
  },
});
export type VisitEntitlement = InferEntity<typeof VisitEntitlementSchema>;
