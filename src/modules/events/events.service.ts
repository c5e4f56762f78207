import { unixSeconds } from '../../platform/clock.ts';
import { notFound, validationError } from '../../platform/errors.ts';
import { isId, newId } from '../../platform/ids.ts';
import { enqueue } from '../../platform/outbox.ts';
import { queueWrite } from '../../db/engine/index.ts';
import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { eventCatalog, type DomainEvent, type EventType } from './events.catalog.ts';
import { EventSchema, type EventRecord } from './events.entity.ts';
import {
  eventPayloads,
  type EmittedEventType,
  type EventOptions,
  type EventPayload,
  type EventRecorder,
  type EventSubjects,
} from './events.payloads.ts';

// Other modules record events only through this file (docs/architecture.md "Module boundaries", docs/partner-guide.md "Events").
export { eventCatalog } from './events.catalog.ts';
export type { DomainEvent, EventType } from './events.catalog.ts';
export type { EventRecord } from './events.entity.ts';
export type {
  EmittedEventType,
  EventObjects,
  EventOptions,
  EventPayload,
  EventPayloads,
  EventRecorder,
  EventSubjects,
} from './events.payloads.ts';

/** The outbox topic of domain events; the webhook dispatcher registers its handler under it. */
export const EVENT_TOPIC = 'event';

/**
 * Defines a module's event types: how each one's `data.object` is built from what its use cases
 * pass (events.payloads.ts). Call it once per module, in its `<m>.events.ts`, and record through
 * what it returns: a use case that records an event has thereby loaded its definition.
 */
export function defineEvents<
  const D extends { [T in keyof D]: T extends EventType ? EventPayload<never, { object: (typeof eventCatalog)[T]['object'] }> : never },
>(payloads: D): EventRecorder<D> {
  eventPayloads.define(payloads);
  return recordEvent;
}

/**
 * Records a domain event (`evt_…`) for webhook delivery, in the use case's transaction (ctx.em).
 * Only a catalogued type with the domain result its module defined type-checks; that module's
 * presenter builds `data.object` from it. Events go to the caller's reseller; a provider caller
 * acts on a reseller's booking, so it names that reseller (`resellerId`).
 * The `event` row (GET /events) and the outbox row that fans it out to webhook endpoints (docs/partner-guide.md
 * "Webhooks") are queued (src/db/engine/prepared-read.ts queueWrite): they go with the use case's
 * next statement or at its end, in its transaction, so recording an event costs no round trip of its own.
 */
export async function recordEvent<T extends EmittedEventType>(
  ctx: Ctx,
  type: T,
  subject: EventSubjects[T],
  options: EventOptions = {},
): Promise<void> {
  const at = ctx.clock.now();
  let { resellerId } = options;
  if (resellerId === undefined && ctx.caller.kind === 'provider')
    throw new Error(`${type}: a provider's event must name the reseller it goes to`);
  resellerId ??= ctx.caller.kind === 'reseller' ? ctx.caller.resellerId : undefined;
  if (resellerId === undefined) throw new Error(`${type}: an event must name the reseller it goes to`);
  const event: DomainEvent<T> = {
    id: newId('event', at.getTime()),
    object: 'event',
    type,
    created: unixSeconds(at),
    data: { object: eventPayloads.present(type, subject, options.now ?? at) as DomainEvent<T>['data']['object'] },
    request: { id: ctx.requestId, idempotency_key: ctx.idempotencyKey ?? null },
  };
  const payloadJson = JSON.stringify(event);
  // The client its object belongs to, so a client-session subscriber gets its own client's events
  // only (docs/partner-guide.md "Live booking status"); the row's position and its NOTIFY come from the table.
  const clientId = (event.data.object as { client_id?: unknown }).client_id;
  await queueWrite(ctx.em, 'insert into event (id, reseller_id, type, payload, created_at, client_id) values (?, ?, ?, ?::json, ?, ?)', [
    event.id,
    resellerId,
    type,
    payloadJson,
    at,
    typeof clientId === 'string' ? clientId : null,
  ]);
  await enqueue(ctx.em, { topic: EVENT_TOPIC, resellerId, payloadJson, at });
}

/** `type` filters in exactly the catalogue's spelling; anything else is a 400 naming `param`. */
export function parseEventType(type: string | undefined, param = 'type'): EventType | undefined {
  if (type === undefined) return undefined;
  if (!Object.hasOwn(eventCatalog, type))
    throw validationError(param, `'${type}' is not an event type (docs/partner-guide.md "Events" lists them)`);
  return type as EventType;
}

/** The caller's events, newest first, optionally of one type. */
export function listEvents(ctx: Ctx, filters: { type?: string }, page: PageArgs): Promise<Page<EventRecord>> {
  const type = parseEventType(filters.type);
  const { resellerId } = resellerOf(ctx);
  return keysetPage(ctx.em, EventSchema, { resellerId, ...(type ? { type } : {}) }, page, 'event');
}

/** An event of the caller's reseller; another reseller's or an unknown id is 404. */
export async function getOwnEvent(ctx: Ctx, id: string): Promise<EventRecord> {
  const { resellerId } = resellerOf(ctx);
  const event = isId('event', id) ? await ctx.em.findOne(EventSchema, { id, resellerId }) : null;
  if (!event) throw notFound('event', id);
  return event;
}
