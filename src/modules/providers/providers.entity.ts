import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { Weekday } from '../../platform/time.ts';

export const providerCategories = ['GYM', 'SPA'] as const;
export type ProviderCategory = (typeof providerCategories)[number];

/** Local wall-clock opening intervals per ISO weekday; a missing or empty day is closed. */
export type OpeningHours = Partial<Record<Weekday, { open: string; close: string }[]>>;

/** A provider branch: a gym, or a spa (category SPA). Shared by all resellers. */
export const ProviderSchema = defineEntity({
  name: 'Provider',
  tableName: 'provider',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    category: p.enum(providerCategories),
    tier: p.string(),
    description: p.string(),
    address: p.string(),
    city: p.string(),
    country: p.string(),
    lat: p.float().columnType('double precision'),
    lon: p.float().columnType('double precision'),
    timezone: p.string(),
    freeCancellationHours: p.integer(),
    lateCancellationRefundPercent: p.integer(),
    openingHours: p.json<OpeningHours>(),
    roomCapacity: p.integer(),
    createdAt: p.datetime(),
  },
});
export type Provider = InferEntity<typeof ProviderSchema>;

/** A gym co-pay package (spec 2.4 co-pay option). */
export const CopayOptionSchema = defineEntity({
  name: 'CopayOption',
  tableName: 'copay_option',
  properties: {
    id: p.string().primary(),
    providerId: p.string(),
    name: p.string(),
    currency: p.string(),
    tiers: p.json<string[]>(),
    maxVisits: p.integer(),
    visitDurationDays: p.integer(),
    clientCopayAmount: p.bigint('number'),
    clientCopayCredits: p.bigint('number'),
    createdAt: p.datetime(),
  },
});
export type CopayOption = InferEntity<typeof CopayOptionSchema>;

/** A provider's API key for the provider API (docs/partner-guide.md "Provider side"): only its SHA-256 is stored. */
export const ProviderApiKeySchema = defineEntity({
  name: 'ProviderApiKey',
  tableName: 'provider_api_key',
  properties: {
    id: p.string().primary(),
    providerId: p.string(),
    secretHash: p.string(),
    last4: p.string(),
    label: p.string().nullable(),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
  },
});
export type ProviderApiKey = InferEntity<typeof ProviderApiKeySchema>;
