import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { DomainEvent } from './events.catalog.ts';

/**
 * A recorded event (`evt_…`, docs/partner-guide.md "Events"), written by recordEvent with its outbox row. Its
 * `payload` is the event as webhooks deliver it; the column is json, so its text is kept as written.
 */
export const EventSchema = defineEntity({
  name: 'Event',
  tableName: 'event',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    type: p.string(),
    payload: p.json<DomainEvent>().columnType('json'),
    createdAt: p.datetime(),
  },
});
export type EventRecord = InferEntity<typeof EventSchema>;
