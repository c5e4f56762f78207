import { z } from 'zod';
import { eventCatalog, type DomainEvent, type EventRecord } from './events.service.ts';
import { eventPayloads } from './events.payloads.ts';

// The V3 `event` (docs/partner-guide.md "Events"): exactly what webhooks deliver, so it is the stored payload as
// recordEvent wrote it. `data.object` is the V3 representation of its type's object, owned by the
// module that records it: its schema is the one that module defined (events.payloads.ts), read
// when the schema is first used (the OpenAPI document, a response's check), once the modules have loaded.

const eventTypes = Object.keys(eventCatalog) as [keyof typeof eventCatalog, ...(keyof typeof eventCatalog)[]];

/** The union of the defined `data.object` schemas (the registry keeps the list, built once). */
const dataObject = (): z.ZodType =>
  z
    .union(eventPayloads.objectSchemas() as [z.ZodType, z.ZodType, ...z.ZodType[]])
    .describe(
      'The object the event is about, as its own operations answer it; its `object` says which (docs/partner-guide.md "Events" maps types to objects)',
    );

export const eventSchema = z
  .object({
    id: z.string().describe('Event id (`evt_…`); the `webhook-id` of its deliveries'),
    object: z.literal('event').describe('Always `event`'),
    type: z.enum(eventTypes).describe('The event type (docs/partner-guide.md "Events")'),
    created: z.int().min(0).describe('When it happened, Unix seconds'),
    data: z
      .object({
        get object() {
          return dataObject();
        },
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
