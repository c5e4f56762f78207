import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import type { SpaService } from './spa.entity.ts';
import type { SpaAvailability } from './spa.service.ts';

// V3 presenters (docs/openapi.json documents them): allow-lists from rows to the wire. Each returns z.infer of its
// schema, which the OpenAPI document publishes (docs/openapi.json).

export const spaServiceSchema = z
  .object({
    object: z.literal('service').describe('Always `service`'),
    id: z.string().describe('Service id'),
    name: z.string().describe('Service name'),
    duration_minutes: z.int().min(1).describe('Length of the service in minutes'),
    credits: z.int().min(0).describe('Credits a covered booking debits from the client wallet'),
    copay_amount: z
      .int()
      .min(0)
      .nullable()
      .describe('Co-pay for a client whose pass does not cover the spa, minor units of `currency`; null: offered to covered clients only'),
    currency: z.string().describe('ISO-4217 currency code'),
  })
  .meta({ id: 'SpaService', description: 'A service a spa offers: priced in credits for covered clients, and optionally as a co-pay' });
export type SpaServiceResource = z.infer<typeof spaServiceSchema>;

const slotSchema = z
  .object({
    time: z.string().describe('Local wall-clock time at the spa, HH:MM'),
    available: z.boolean().describe('false when the start has passed or the room capacity is in use'),
    scheduled_for: z.int().min(0).describe('The start, Unix seconds'),
  })
  .meta({ id: 'SpaSlot', description: 'A possible appointment start' });

export const availabilitySchema = z
  .object({
    object: z.literal('availability').describe('Always `availability`'),
    spa_id: z.string().describe('Id of the spa (a provider of category SPA)'),
    date: z.string().describe('The local date at the spa, YYYY-MM-DD'),
    timezone: z.string().describe("The spa's IANA time zone; `date` and slot times are local to it"),
    service_ids: z.array(z.string()).describe('The services of the appointment, as asked for'),
    duration_minutes: z.int().min(0).describe('The length of the appointment: the sum of the services'),
    slots: z.array(slotSchema).describe('Every 15 minutes inside opening hours where the whole appointment fits before closing'),
  })
  .meta({ id: 'SpaAvailability', description: 'Appointment slots of a spa on one local date for a set of services' });
export type AvailabilityResource = z.infer<typeof availabilitySchema>;

export function presentSpaService(service: SpaService): SpaServiceResource {
  return {
    object: 'service',
    id: service.id,
    name: service.name,
    duration_minutes: service.durationMinutes,
    credits: service.credits,
    // null: the service is offered to covered clients only, with no co-pay price.
    copay_amount: service.copayAmount ?? null,
    currency: service.currency,
  };
}

export function presentAvailability(a: SpaAvailability): AvailabilityResource {
  return {
    object: 'availability',
    spa_id: a.spa.id,
    date: a.date,
    timezone: a.spa.timezone,
    service_ids: a.services.map((s) => s.id),
    duration_minutes: a.durationMinutes,
    slots: a.slots.map((s) => ({ time: s.time, available: s.available, scheduled_for: unixSeconds(s.startsAt) })),
  };
}
