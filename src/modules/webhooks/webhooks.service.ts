// Other code reaches webhooks only through this file (docs/architecture.md "Module boundaries"): src/cli/serve.ts
// registers the outbox handler that fans events out and runs the delivery worker beside it.
export {
  deliverDueWebhooks,
  webhookDeliveryLoop,
  webhookFanOut,
  leaseMs,
  MAX_ATTEMPTS,
  RETRY_SCHEDULE_SECONDS,
  type DeliveryDeps,
} from './dispatch.ts';
export { EVENT_TOPIC as WEBHOOK_EVENT_TOPIC } from '../events/index.ts';
export type { WebhookDelivery, WebhookEndpoint } from './webhooks.entity.ts';
