import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import { kilometres } from '../../platform/geo.ts';
import { providerCategories, type CopayOption, type Provider } from './providers.entity.ts';

// V3 presenters (docs/openapi.json documents them): allow-lists from rows to the wire. Each returns z.infer of its
// schema, which the OpenAPI document publishes (docs/openapi.json).

export const providerSchema = z
  .object({
    object: z.literal('provider').describe('Always `provider`'),
    id: z.string().describe('Provider branch id'),
    name: z.string().describe('Name of the provider branch'),
    category: z.enum(providerCategories).describe('GYM or SPA'),
    tier: z.string().describe('Tier label (BRONZE, SILVER, GOLD …) a pass category must cover'),
    description: z.string().describe('Description of the provider'),
    address: z.string().describe('Street address'),
    city: z.string().describe('City'),
    country: z.string().describe('ISO 3166-1 alpha-2 country code'),
    lat: z.number().min(-90).max(90).describe('Latitude'),
    lon: z.number().min(-180).max(180).describe('Longitude'),
    timezone: z.string().describe('IANA time zone; dates and times at this provider are local to it'),
    cancellation_policy: z
      .object({
        free_cancellation_hours: z.int().min(0).describe('Cancelling at least this many hours before the start refunds in full'),
        late_cancellation_refund_percent: z.int().min(0).max(100).describe('Share of credits and co-pay refunded for a later cancellation'),
      })
      .meta({ id: 'CancellationPolicy', description: "The provider's refund rules for cancelled bookings" })
      .describe('How much of a cancelled booking at this provider is refunded'),
    distance_km: z
      .number()
      .min(0)
      .optional()
      .describe('Kilometres from `lat`+`lon` of the query, to the metre; only in a search near a point'),
    created: z.int().min(0).describe('Creation time, Unix seconds'),
  })
  .meta({ id: 'Provider', description: 'A provider branch: a gym, or a spa (category SPA); the catalogue is shared by all resellers' });
export type ProviderResource = z.infer<typeof providerSchema>;

/** Spec 2.4 co-pay option. */
export const copayOptionSchema = z
  .object({
    object: z.literal('copay_option').describe('Always `copay_option`'),
    id: z.string().describe('Option id'),
    name: z.string().describe('Option name'),
    currency: z.string().describe('ISO-4217 currency code'),
    tiers: z.array(z.string()).describe('Tier labels the option is for'),
    max_visits: z.int().min(0).describe('Maximum visits of the option'),
    visit_duration_days: z.int().min(0).describe('Duration of a visit period in days'),
    client_copay_amount: z.int().min(0).describe('Co-pay amount for the client, minor units of `currency`'),
    client_copay_credits: z.int().min(0).describe('The same co-pay in credits'),
  })
  .meta({ id: 'CopayOption', description: 'A gym co-pay package (spec 2.4): what a client whose pass does not cover the gym can buy' });
export type CopayOptionResource = z.infer<typeof copayOptionSchema>;

export function presentProvider(provider: Provider, distanceM?: number): ProviderResource {
  return {
    object: 'provider',
    id: provider.id,
    name: provider.name,
    category: provider.category,
    tier: provider.tier,
    description: provider.description,
    address: provider.address,
    city: provider.city,
    country: provider.country,
    lat: provider.lat,
    lon: provider.lon,
    timezone: provider.timezone,
    cancellation_policy: {
      free_cancellation_hours: provider.freeCancellationHours,
      late_cancellation_refund_percent: provider.lateCancellationRefundPercent,
    },
    ...(distanceM !== undefined ? { distance_km: kilometres(distanceM) } : {}),
    created: unixSeconds(provider.createdAt),
  };
}

export function presentCopayOption(option: CopayOption): CopayOptionResource {
  return {
    object: 'copay_option',
    id: option.id,
    name: option.name,
    currency: option.currency,
    tiers: [...option.tiers],
    max_visits: option.maxVisits,
    visit_duration_days: option.visitDurationDays,
    client_copay_amount: option.clientCopayAmount,
    client_copay_credits: option.clientCopayCredits,
  };
}
