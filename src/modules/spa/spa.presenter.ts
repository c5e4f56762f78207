import { unixSeconds } from '../../platform/clock.ts';
import type { SpaService } from './spa.entity.ts';
import type { SpaAvailability } from './spa.service.ts';

// V3 presenters (decisions §8): allow-lists from rows to the wire.

export function presentSpaService(service: SpaService) {
  return {
    object: 'service' as const,
    id: service.id,
    name: service.name,
    duration_minutes: service.durationMinutes,
    credits: service.credits,
    // null: the service is offered to covered clients only, with no co-pay price.
    copay_amount: service.copayAmount ?? null,
    currency: service.currency,
  };
}

export function presentAvailability(a: SpaAvailability) {
  return {
    object: 'availability' as const,
    spa_id: a.spa.id,
    date: a.date,
    timezone: a.spa.timezone,
    service_ids: a.services.map((s) => s.id),
    duration_minutes: a.durationMinutes,
    slots: a.slots.map((s) => ({ time: s.time, available: s.available, scheduled_for: unixSeconds(s.startsAt) })),
  };
}
