import { unixSeconds } from '../../platform/clock.ts';
import { newId } from '../../platform/ids.ts';
import { enqueue } from '../../platform/outbox.ts';
import type { Ctx } from '../../platform/request-context.ts';
import type { DomainEvent, EmittedEventType, EventObjects } from './events.catalog.ts';

// Other modules record events only through this file (README "Module boundaries", "Events").
export { eventCatalog } from './events.catalog.ts';
export type { DomainEvent, EmittedEventType, EventObjects, EventType } from './events.catalog.ts';

/** The outbox topic of domain events; the webhook dispatcher registers its handler under it. */
export const EVENT_TOPIC = 'event';

/**
 * Records a domain event (`evt_…`) for webhook delivery, in the use case's transaction (ctx.em).
 * Only a catalogued type with its declared payload type-checks. Events go to the caller's
 * reseller; a provider caller acts on a reseller's booking, so it names that reseller (`resellerId`).
 */
export async function recordEvent<T extends EmittedEventType>(ctx: Ctx, type: T, object: EventObjects[T], resellerId?: string): Promise<void> {
  const at = ctx.clock.now();
  if (resellerId === undefined && ctx.caller.kind === 'provider') throw new Error(`${type}: a provider's event must name the reseller it goes to`);
  resellerId ??= ctx.caller.kind === 'reseller' ? ctx.caller.resellerId : undefined;
  const event: DomainEvent<T> = {
    id: newId('event', at.getTime()),
    object: 'event',
    type,
    created: unixSeconds(at),
    data: { object },
    request: { id: ctx.requestId, idempotency_key: ctx.idempotencyKey ?? null },
  };
  await enqueue(ctx.em, { topic: EVENT_TOPIC, resellerId, at, payload: event });
}
