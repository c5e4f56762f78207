import { unixSeconds } from '../../platform/clock.ts';
import { kilometres } from '../../platform/geo.ts';
import type { CopayOption, Provider } from './providers.entity.ts';

// V3 presenters (decisions §8): allow-lists from rows to the wire.

export function presentProvider(provider: Provider, distanceM?: number) {
  return {
    object: 'provider' as const,
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

/** Spec 2.4 co-pay option. */
export function presentCopayOption(option: CopayOption) {
  return {
    object: 'copay_option' as const,
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
