import { z } from 'zod';
import { accessCodeSchema } from '../access-codes/access-codes.presenter.ts';
import { bookingSchema, bookingSessionSchema } from '../bookings/bookings.presenter.ts';
import { creditPurchaseSchema } from '../credits/credits.presenter.ts';
import { hostedSessionSchema } from '../hosted-sessions/hosted-sessions.presenter.ts';
import { lookupSchema } from '../lookups/lookups.presenter.ts';
import { issuedPassSchema, passRenewalSchema } from '../passes/passes.presenter.ts';
import { eventCatalog, type DomainEvent, type EmittedEventType, type EventObjects, type EventRecord } from './events.service.ts';

// The V3 `event` (docs/partner-guide.md "Events"): exactly what webhooks deliver, so it is the stored payload as
// recordEvent wrote it. `data.object` is the V3 representation of its type's object, owned by the
// module that records it: its schema comes from that module's presenter.

/**
 * The schema of each recorded type's `data.object`. Keyed by EmittedEventType, so a type that
 * starts being recorded (docs/partner-guide.md "Events": planned to yes) does not type-check until it is listed.
 */
const payloadSchemas: { [T in EmittedEventType]: z.ZodType<EventObjects[T]> } = {
  'issued_pass.created': issuedPassSchema,
  'issued_pass.updated': issuedPassSchema,
  'issued_pass.renewed': passRenewalSchema,
  'issued_pass.expired': issuedPassSchema,
  'booking.created': bookingSchema,
  'booking.confirmed': bookingSchema,
  'booking.cancelled': bookingSchema,
  'booking.completed': bookingSchema,
  'booking.rescheduled': bookingSchema,
  'booking_session.created': bookingSessionSchema,
  'booking_session.expired': bookingSessionSchema,
  'access_code.created': accessCodeSchema,
  'access_code.redeemed': accessCodeSchema,
  'credits.purchased': creditPurchaseSchema,
  'lookup.verified': lookupSchema,
  'hosted_session.completed': hostedSessionSchema,
  'hosted_session.expired': hostedSessionSchema,
};

const objectSchemas = [...new Set<z.ZodType>(Object.values(payloadSchemas))] as [z.ZodType, z.ZodType, ...z.ZodType[]];
const eventTypes = Object.keys(eventCatalog) as [keyof typeof eventCatalog, ...(keyof typeof eventCatalog)[]];

export const eventSchema = z
  .object({
    id: z.string().describe('Event id (`evt_…`); the `webhook-id` of its deliveries'),
    object: z.literal('event').describe('Always `event`'),
    type: z.enum(eventTypes).describe('The event type (docs/partner-guide.md "Events")'),
    created: z.int().min(0).describe('When it happened, Unix seconds'),
    data: z
      .object({
        object: z
          .union(objectSchemas)
          .describe(
            'The object the event is about, as its own operations answer it; its `object` says which (docs/partner-guide.md "Events" maps types to objects)',
          ),
      })
      .describe('What the event is about'),
    request: z
      .object({
        id: z.string().describe('The request that caused it (`Request-Id`)'),
        idempotency_key: z.string().nullable().describe('The Idempotency-Key of that request; null when none was sent'),
      })
      .describe('The request that caused the event'),
  })
  .meta({ id: 'Event', description: 'Something that happened to a resource of this reseller; webhooks deliver exactly this' });

export type EventObject = z.infer<typeof eventSchema>;

export function presentEvent(e: EventRecord): DomainEvent {
  return e.payload;
}
