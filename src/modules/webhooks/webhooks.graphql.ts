import { builder } from '../../graphql/builder.ts';
import { mutationErrors } from '../../graphql/errors.ts';
import { childConnections, connectionCost, nodeOrNull, registerNode, rowsById } from '../../graphql/loaders.ts';
import { runMutation, runQuery } from '../../graphql/use-case.ts';
import { pageArgsFromConnection, toConnection } from '../../platform/pagination.ts';
import { EventRef } from '../events/events.graphql.ts';
import { deliveryPagesOfEndpoints, retryDelivery } from './deliveries.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  type EndpointWithSecret,
} from './endpoints.ts';
import {
  deliveryStatuses,
  endpointStatuses,
  WebhookEndpointSchema,
  type WebhookDelivery,
  type WebhookEndpoint,
} from './webhooks.entity.ts';

// The GraphQL surface of webhooks (docs/partner-guide.md "Webhooks"): the use cases of webhooks.rest.ts, with the
// V3 input mapped from camelCase, so both surfaces answer the same catalogue codes.

const WebhookEndpointStatusEnum = builder.enumType('WebhookEndpointStatus', {
  description: 'ENABLED: events are delivered; DISABLED: the receiver answered 410 Gone, nothing more is sent.',
  values: endpointStatuses,
});

const WebhookDeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', {
  description: 'PENDING: an attempt is due at `nextAttemptAt`; SUCCEEDED: a 2xx came back; FAILED: no more attempts.',
  values: deliveryStatuses,
});

const WebhookDeliveryRef = builder.objectRef<WebhookDelivery>('WebhookDelivery').implement({
  description: 'One event on its way to one webhook endpoint (the V3 `webhook_delivery`).',
  fields: (t) => ({
    id: t.id({ description: 'Delivery id (`whd_…`); also its cursor.', resolve: (d) => d.id }),
    event: t.field({
      type: EventRef,
      description: 'The event it carries; its id is the `webhook-id` header.',
      resolve: (d, _, ctx) => EventRef.getDataloader(ctx).load(d.eventId),
    }),
    eventType: t.exposeString('eventType', { description: 'The type of that event.' }),
    status: t.field({ type: WebhookDeliveryStatusEnum, description: 'PENDING, SUCCEEDED or FAILED.', resolve: (d) => d.status }),
    attempts: t.exposeInt('attempts', { description: 'Attempts started so far.' }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the next attempt is due; null unless PENDING.',
      resolve: (d) => d.nextAttemptAt ?? null,
    }),
    lastResponseStatus: t.int({
      nullable: true,
      description: 'The HTTP status of the last attempt; null when none came back (timeout, unreachable) or none was made.',
      resolve: (d) => d.lastResponseStatus ?? null,
    }),
    lastError: t.string({
      nullable: true,
      description: 'Why the last attempt failed; null after a success or before any attempt.',
      resolve: (d) => d.lastError ?? null,
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When the event was queued for this endpoint.', resolve: (d) => d.createdAt }),
    updatedAt: t.field({ type: 'DateTime', description: 'When the delivery last changed.', resolve: (d) => d.updatedAt }),
  }),
});

const WebhookDeliveriesConnection = builder.connectionObject(
  { type: WebhookDeliveryRef, name: 'WebhookDeliveriesConnection' },
  { name: 'WebhookDeliveriesConnectionEdge' },
);

export const WebhookEndpointRef = builder.loadableNode(builder.objectRef<WebhookEndpoint>('WebhookEndpoint'), {
  description:
    'A URL the reseller receives its events at, signed with its secret (the V3 `webhook_endpoint`); the secret is shown only by create and rotate.',
  id: { resolve: (e) => e.id },
  load: rowsById(WebhookEndpointSchema, 'reseller'),
  fields: (t) => ({
    url: t.exposeString('url', { description: 'Where events are POSTed.' }),
    enabledEvents: t.stringList({
      description: 'The event types it receives, or `["*"]` for every type.',
      resolve: (e) => e.enabledEvents,
    }),
    status: t.field({ type: WebhookEndpointStatusEnum, description: 'ENABLED or DISABLED.', resolve: (e) => e.status }),
    description: t.string({
      nullable: true,
      description: 'What the endpoint is for; null when none was given.',
      resolve: (e) => e.description ?? null,
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When the endpoint was created.', resolve: (e) => e.createdAt }),
    deliveries: t.loadable({
      type: WebhookDeliveriesConnection,
      description: "The endpoint's deliveries, newest first (as GET /webhook_endpoints/{id}/deliveries).",
      byPath: true,
      args: { ...t.arg.connectionArgs() },
      complexity: connectionCost,
      load: childConnections((ctx, endpointIds, page) => deliveryPagesOfEndpoints(ctx, endpointIds, page)),
      resolve: (e) => e.id,
    }),
  }),
});

registerNode('webhookEndpoint', WebhookEndpointRef);

builder.queryFields((t) => ({
  webhookEndpoints: t.connection({
    type: WebhookEndpointRef,
    description: "The reseller's webhook endpoints, newest first (as GET /webhook_endpoints).",
    authScopes: { reseller: true },
    complexity: connectionCost,
    resolve: (_, args, ctx) =>
      runQuery(async () => {
        const page = pageArgsFromConnection(args);
        return toConnection(await listWebhookEndpoints(ctx, page), page);
      }),
  }),
  webhookEndpoint: t.field({
    type: WebhookEndpointRef,
    nullable: true,
    description: 'A webhook endpoint of this reseller; null for an id this reseller cannot see.',
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => nodeOrNull(WebhookEndpointRef, ctx, id),
  }),
}));

const WebhookEndpointSecretPayloadRef = builder.objectRef<EndpointWithSecret>('WebhookEndpointSecretPayload').implement({
  description: 'A webhook endpoint with its new signing secret, shown in this answer only.',
  fields: (t) => ({
    webhookEndpoint: t.field({ type: WebhookEndpointRef, description: 'The endpoint as it is now.', resolve: (r) => r.endpoint }),
    secret: t.string({
      description: 'The signing secret (`whsec_…`, Standard Webhooks): keep it now, it is not shown again.',
      resolve: (r) => r.secret,
    }),
  }),
});

const DeletedWebhookEndpointRef = builder.objectRef<WebhookEndpoint>('DeletedWebhookEndpoint').implement({
  description: 'A webhook endpoint that was deleted, with its deliveries.',
  fields: (t) => ({
    id: t.id({ description: 'The deleted endpoint.', resolve: (e) => e.id }),
    deleted: t.boolean({ description: 'Always true.', resolve: () => true }),
  }),
});

const WebhookDeliveryPayloadRef = builder.objectRef<{ delivery: WebhookDelivery }>('WebhookDeliveryPayload').implement({
  description: 'The delivery a retry scheduled.',
  fields: (t) => ({
    delivery: t.field({ type: WebhookDeliveryRef, description: 'The delivery, PENDING and due now.', resolve: (r) => r.delivery }),
  }),
});

const CreateWebhookEndpointInputRef = builder.inputType('CreateWebhookEndpointInput', {
  description: 'A webhook endpoint to create (V3 POST /webhook_endpoints).',
  fields: (t) => ({
    url: t.string({
      required: true,
      description: 'Where events are POSTed: an http:// or https:// URL without credentials, to a public address.',
    }),
    enabledEvents: t.stringList({
      required: true,
      description: 'The event types to receive (docs/partner-guide.md "Events"), or `["*"]` for every type.',
    }),
    description: t.string({ description: 'What the endpoint is for; for people.' }),
  }),
});

const WebhookEndpointIdInputRef = builder.inputType('WebhookEndpointIdInput', {
  description: 'The webhook endpoint to act on.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'The webhook endpoint (`we_…`).' }),
  }),
});

const RetryWebhookDeliveryInputRef = builder.inputType('RetryWebhookDeliveryInput', {
  description: 'A delivery to attempt once more, now (V3 POST /webhook_endpoints/{id}/deliveries/{delivery_id}/retry).',
  fields: (t) => ({
    webhookEndpointId: t.id({ required: true, description: 'The endpoint the delivery goes to.' }),
    deliveryId: t.id({ required: true, description: 'The delivery (`whd_…`).' }),
  }),
});

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    type: WebhookEndpointSecretPayloadRef,
    description: 'Creates a webhook endpoint; the answer shows its signing secret, once. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: CreateWebhookEndpointInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'CreateWebhookEndpointResult' } },
    resolve: (_, { input }, ctx) =>
      runMutation(ctx, (c) =>
        createWebhookEndpoint(c, {
          url: input.url,
          enabled_events: input.enabledEvents,
          ...(input.description != null ? { description: input.description } : {}),
        }),
      ),
  }),
  deleteWebhookEndpoint: t.field({
    type: DeletedWebhookEndpointRef,
    description: 'Deletes a webhook endpoint and its deliveries: nothing more is sent to it.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: WebhookEndpointIdInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'DeleteWebhookEndpointResult' } },
    resolve: (_, { input }, ctx) => runMutation(ctx, (c) => deleteWebhookEndpoint(c, input.id)),
  }),
  rotateWebhookEndpointSecret: t.field({
    type: WebhookEndpointSecretPayloadRef,
    description:
      'Gives a webhook endpoint a new signing secret, shown once; the old one keeps signing beside it for 24 hours. ' +
      'Idempotency-Key accepted.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: WebhookEndpointIdInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'RotateWebhookEndpointSecretResult' } },
    resolve: (_, { input }, ctx) => runMutation(ctx, (c) => rotateWebhookEndpointSecret(c, input.id)),
  }),
  retryWebhookDelivery: t.field({
    type: WebhookDeliveryPayloadRef,
    description: 'Attempts a delivery once more, now, whatever its status (a FAILED one too).',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: RetryWebhookDeliveryInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'RetryWebhookDeliveryResult' } },
    resolve: async (_, { input }, ctx) => ({
      delivery: await runMutation(ctx, (c) => retryDelivery(c, input.webhookEndpointId, input.deliveryId)),
    }),
  }),
}));
