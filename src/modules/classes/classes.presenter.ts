import { unixSeconds } from '../../platform/clock.ts';
import { kilometres } from '../../platform/geo.ts';
import { localTimeOf } from '../../platform/time.ts';
import type { Provider } from '../providers/providers.entity.ts';
import type { ClassCategory, ClassInstance } from './classes.entity.ts';
import { spotsRemaining, type ClassListing } from './classes.service.ts';

// V3 presenters (decisions §8): allow-lists from rows to the wire.

export function presentClassCategory(category: ClassCategory) {
  return {
    object: 'class_category' as const,
    id: category.id,
    name: category.name,
    description: category.description,
  };
}

export function presentClass(listing: ClassListing) {
  const { cls, provider, category, distanceM } = listing;
  return {
    object: 'class' as const,
    id: cls.id,
    name: cls.name,
    description: cls.description,
    category: category.name,
    provider_id: provider.id,
    provider_name: provider.name,
    tier: provider.tier,
    duration_minutes: cls.durationMinutes,
    ...(distanceM !== undefined ? { distance_km: kilometres(distanceM) } : {}),
  };
}

/** `date` and `time` are wall-clock at the provider; `starts_at` is the instant. */
export function presentClassInstance(instance: ClassInstance, provider: Provider) {
  return {
    object: 'class_instance' as const,
    id: instance.id,
    starts_at: unixSeconds(instance.startsAt),
    date: instance.localDate,
    time: localTimeOf(instance.startsAt, provider.timezone),
    capacity: instance.capacity,
    spots_remaining: spotsRemaining(instance),
    status: instance.status,
  };
}

export function presentClassWithInstances(listing: ClassListing & { instances: ClassInstance[] }) {
  return {
    ...presentClass(listing),
    instances: listing.instances.map((i) => presentClassInstance(i, listing.provider)),
  };
}
