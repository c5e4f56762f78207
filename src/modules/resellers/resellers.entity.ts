import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const ResellerSchema = defineEntity({
  name: 'Reseller',
  tableName: 'reseller',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    currency: p.string(),
    status: p.enum(['ACTIVE', 'DISABLED'] as const),
    lookupEnabled: p.boolean(),
    // Client-session callers run only the reseller's trusted documents (docs/partner-guide.md "Trusted documents").
    trustedDocumentsOnly: p.boolean().default(false),
    // Its own rate limit (docs/operator-guide.md "Rate limits"); null: the configured default.
    rateLimitPerSecond: p.integer().nullable(),
    rateLimitBurst: p.integer().nullable(),
    createdAt: p.datetime(),
  },
});
export type Reseller = InferEntity<typeof ResellerSchema>;

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_key',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    secretHash: p.string(),
    last4: p.string(),
    label: p.string().nullable(),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
  },
});
export type ApiKey = InferEntity<typeof ApiKeySchema>;

/** One origin of a reseller's CORS allow-list for /graphql (docs/partner-guide.md "Calling from a browser"). */
export const ResellerCorsOriginSchema = defineEntity({
  name: 'ResellerCorsOrigin',
  tableName: 'reseller_cors_origin',
  properties: {
    resellerId: p.string().primary(),
    origin: p.string().primary(),
    createdAt: p.datetime(),
  },
});
export type ResellerCorsOrigin = InferEntity<typeof ResellerCorsOriginSchema>;
