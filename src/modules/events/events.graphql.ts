import { builder } from '../../graphql/builder.ts';
import { connectionCost, nodeOrNull, registerNode, rowsById } from '../../graphql/loaders.ts';
import { runQuery } from '../../graphql/use-case.ts';
import { pageArgsFromConnection, toConnection } from '../../platform/pagination.ts';
import { listEvents, type EventRecord } from './events.service.ts';
import { EventSchema } from './events.entity.ts';

// The GraphQL surface of events (docs/partner-guide.md "Events"): the same reads as events.rest.ts. The event's
// `data.object` is another module's V3 representation, so GraphQL gives the whole event as the
// JSON text webhooks deliver (`json`) beside its typed envelope fields.

export const EventRef = builder.loadableNode(builder.objectRef<EventRecord>('Event'), {
  description: 'Something that happened to a resource of this reseller (the V3 `event`); webhooks deliver it.',
  id: { resolve: (e) => e.id },
  load: rowsById(EventSchema, 'reseller'),
  fields: (t) => ({
    type: t.exposeString('type', { description: 'The event type, e.g. `booking.created` (docs/partner-guide.md "Events").' }),
    objectType: t.string({ description: 'What `data.object` is, e.g. `booking`.', resolve: (e) => e.payload.data.object.object }),
    createdAt: t.field({ type: 'DateTime', description: 'When it happened.', resolve: (e) => e.createdAt }),
    requestId: t.string({ description: 'The request that caused it (its `Request-Id`).', resolve: (e) => e.payload.request.id }),
    idempotencyKey: t.string({
      nullable: true,
      description: 'The Idempotency-Key of that request; null when none was sent.',
      resolve: (e) => e.payload.request.idempotency_key,
    }),
    json: t.string({
      description: 'The whole event as JSON text, exactly the body its webhook deliveries POST (the V3 `event`, `data.object` included).',
      resolve: (e) => JSON.stringify(e.payload),
    }),
  }),
});

registerNode('event', EventRef);

builder.queryFields((t) => ({
  events: t.connection({
    type: EventRef,
    description: "The reseller's events, newest first, optionally of one type (as GET /events).",
    authScopes: { reseller: true },
    args: { type: t.arg.string({ description: 'Only events of this type, e.g. `booking.created`.' }) },
    complexity: connectionCost,
    resolve: (_, args, ctx) =>
      runQuery(async () => {
        const page = pageArgsFromConnection(args);
        return toConnection(await listEvents(ctx, { type: args.type ?? undefined }, page), page);
      }),
  }),
  event: t.field({
    type: EventRef,
    nullable: true,
    description: 'An event of this reseller; null for an id this reseller cannot see.',
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => nodeOrNull(EventRef, ctx, id),
  }),
}));
