import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import { deliveryStatuses, endpointStatuses, type WebhookDelivery, type WebhookEndpoint } from './webhooks.entity.ts';

// V3 presenters of webhooks (docs/partner-guide.md "Webhooks"); each returns z.infer of the schema the OpenAPI
// document publishes. The secret appears only in the answers of create and rotate.

const unixTime = (what: string) => z.int().min(0).describe(`${what}, Unix seconds`);

const endpointFields = {
  object: z.literal('webhook_endpoint').describe('Always `webhook_endpoint`'),
  id: z.string().describe('Webhook endpoint id (`we_…`)'),
  url: z.string().describe('Where events are POSTed'),
  enabled_events: z.array(z.string()).describe('The event types it receives (docs/partner-guide.md "Events"), or `["*"]` for every type'),
  status: z
    .enum(endpointStatuses)
    .describe('ENABLED: events are delivered; DISABLED: the receiver answered 410 Gone, nothing more is sent'),
  description: z.string().nullable().describe('What the endpoint is for; null when none was given'),
  created: unixTime('Creation time'),
};

export const webhookEndpointSchema = z
  .object(endpointFields)
  .meta({ id: 'WebhookEndpoint', description: 'A URL the reseller receives its events at, signed with its secret' });
export type WebhookEndpointObject = z.infer<typeof webhookEndpointSchema>;

export const webhookEndpointWithSecretSchema = z
  .object({
    ...endpointFields,
    secret: z.string().describe('The signing secret (`whsec_…`, Standard Webhooks): shown in this answer only, keep it now'),
  })
  .meta({
    id: 'WebhookEndpointWithSecret',
    description: 'A webhook endpoint with its new signing secret, shown once (create and rotate_secret)',
  });
export type WebhookEndpointWithSecretObject = z.infer<typeof webhookEndpointWithSecretSchema>;

export function presentWebhookEndpoint(e: WebhookEndpoint): WebhookEndpointObject {
  return {
    object: 'webhook_endpoint',
    id: e.id,
    url: e.url,
    enabled_events: e.enabledEvents,
    status: e.status,
    description: e.description ?? null,
    created: unixSeconds(e.createdAt),
  };
}

export function presentWebhookEndpointWithSecret(r: { endpoint: WebhookEndpoint; secret: string }): WebhookEndpointWithSecretObject {
  return { ...presentWebhookEndpoint(r.endpoint), secret: r.secret };
}

export const deletedWebhookEndpointSchema = z
  .object({
    object: z.literal('webhook_endpoint').describe('Always `webhook_endpoint`'),
    id: z.string().describe('The deleted endpoint'),
    deleted: z.literal(true).describe('Always true'),
  })
  .meta({ id: 'DeletedWebhookEndpoint', description: 'A webhook endpoint that was deleted, with its deliveries' });

export const presentDeletedWebhookEndpoint = (e: WebhookEndpoint): z.infer<typeof deletedWebhookEndpointSchema> => ({
  object: 'webhook_endpoint',
  id: e.id,
  deleted: true,
});

export const webhookDeliverySchema = z
  .object({
    object: z.literal('webhook_delivery').describe('Always `webhook_delivery`'),
    id: z.string().describe('Delivery id (`whd_…`)'),
    webhook_endpoint_id: z.string().describe('The endpoint it goes to'),
    event_id: z.string().describe('The event it carries; its `webhook-id` header'),
    event_type: z.string().describe('The type of that event'),
    status: z
      .enum(deliveryStatuses)
      .describe('PENDING: an attempt is due at `next_attempt_at`; SUCCEEDED: a 2xx came back; FAILED: no more attempts'),
    attempts: z.int().min(0).describe('Attempts started so far'),
    next_attempt_at: unixTime('When the next attempt is due')
      .nullable()
      .describe('When the next attempt is due, Unix seconds; null unless PENDING'),
    last_response_status: z
      .int()
      .nullable()
      .describe('The HTTP status of the last attempt; null when none came back (timeout, unreachable) or none was made'),
    last_error: z.string().nullable().describe('Why the last attempt failed; null after a success or before any attempt'),
    created: unixTime('When the event was queued for this endpoint'),
    updated: unixTime('When the delivery last changed'),
  })
  .meta({ id: 'WebhookDelivery', description: 'One event on its way to one webhook endpoint' });
export type WebhookDeliveryObject = z.infer<typeof webhookDeliverySchema>;

export function presentWebhookDelivery(d: WebhookDelivery): WebhookDeliveryObject {
  return {
    object: 'webhook_delivery',
    id: d.id,
    webhook_endpoint_id: d.endpointId,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.nextAttemptAt ? unixSeconds(d.nextAttemptAt) : null,
    last_response_status: d.lastResponseStatus ?? null,
    last_error: d.lastError ?? null,
    created: unixSeconds(d.createdAt),
    updated: unixSeconds(d.updatedAt),
  };
}
