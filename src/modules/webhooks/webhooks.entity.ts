import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const endpointStatuses = ['ENABLED', 'DISABLED'] as const;
export type EndpointStatus = (typeof endpointStatuses)[number];
export const deliveryStatuses = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

/**
 * A reseller's webhook endpoint (`we_…`, docs/partner-guide.md "Webhooks"). `secret` and `previousSecret` are
 * sealed (docs/operator-guide.md "Secrets at rest"); the previous one signs too until `previousSecretExpiresAt`.
 */
export const WebhookEndpointSchema = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoint',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    url: p.string(),
    enabledEvents: p.json<string[]>(),
    status: p.enum(endpointStatuses),
    description: p.string().nullable(),
    secret: p.string(),
    previousSecret: p.string().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type WebhookEndpoint = InferEntity<typeof WebhookEndpointSchema>;

/** One event for one endpoint (`whd_…`): PENDING until an attempt succeeds, or FAILED. */
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_delivery',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    endpointId: p.string(),
    eventId: p.string(),
    eventType: p.string(),
    status: p.enum(deliveryStatuses),
    attempts: p.integer(),
    nextAttemptAt: p.datetime().nullable(),
    lockedUntil: p.datetime().nullable(),
    lastResponseStatus: p.integer().nullable(),
    lastError: p.string().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type WebhookDelivery = InferEntity<typeof WebhookDeliverySchema>;
