import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { listDeliveries, retryDelivery } from './deliveries.ts';
import {
  createWebhookEndpoint,
  createWebhookEndpointInput,
  deleteWebhookEndpoint,
  getOwnEndpoint,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  type CreateWebhookEndpointInput,
} from './endpoints.ts';
import {
  deletedWebhookEndpointSchema,
  presentDeletedWebhookEndpoint,
  presentWebhookDelivery,
  presentWebhookEndpoint,
  presentWebhookEndpointWithSecret,
  webhookDeliverySchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
} from './webhooks.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;
const idempotencyErrors = ['idempotency_key_reused', 'idempotency_request_in_progress'] as const;
const BASE = '/v3/api/business/reseller';

export const webhooksRoutes = defineRoutes([
  listRoute({
    path: '/webhook_endpoints',
    operationId: 'listWebhookEndpoints',
    tag: 'Webhooks',
    summary: "Get the reseller's webhook endpoints, newest first",
    item: webhookEndpointSchema,
    description: 'A list of `webhook_endpoint` objects',
    errors: [...authErrors],
    url: () => `${BASE}/webhook_endpoints`,
    message: 'Webhook endpoints retrieved successfully',
    list: listWebhookEndpoints,
    present: presentWebhookEndpoint,
  }),
  {
    method: 'POST',
    path: '/webhook_endpoints',
    operationId: 'createWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Create a webhook endpoint; the answer shows its signing secret, once',
    body: createWebhookEndpointInput,
    idempotent: true,
    success: { status: 201, description: 'The `webhook_endpoint` with its `secret`', schema: webhookEndpointWithSecretSchema },
    errors: [...authErrors, ...idempotencyErrors, 'endpoint_limit_reached'],
    async handler(ctx, { body }) {
      return { status: 201, body: presentWebhookEndpointWithSecret(await createWebhookEndpoint(ctx, body as CreateWebhookEndpointInput)) };
    },
  },
  {
    method: 'GET',
    path: '/webhook_endpoints/{id}',
    operationId: 'getWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Get a webhook endpoint (never its secret)',
    success: { status: 200, description: 'A `webhook_endpoint`', schema: webhookEndpointSchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentWebhookEndpoint(await getOwnEndpoint(ctx, params.id)) };
    },
  },
  {
    method: 'DELETE',
    path: '/webhook_endpoints/{id}',
    operationId: 'deleteWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint and its deliveries: nothing more is sent to it',
    success: { status: 200, description: 'The deleted endpoint', schema: deletedWebhookEndpointSchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentDeletedWebhookEndpoint(await deleteWebhookEndpoint(ctx, params.id)) };
    },
  },
  {
    method: 'POST',
    path: '/webhook_endpoints/{id}/rotate_secret',
    operationId: 'rotateWebhookEndpointSecret',
    tag: 'Webhooks',
    summary: 'Give a webhook endpoint a new signing secret, shown once; the old one keeps signing beside it for 24 hours',
    idempotent: true,
    success: { status: 200, description: 'The `webhook_endpoint` with its new `secret`', schema: webhookEndpointWithSecretSchema },
    errors: [...authErrors, 'resource_not_found', ...idempotencyErrors],
    async handler(ctx, { params }) {
      return { status: 200, body: presentWebhookEndpointWithSecret(await rotateWebhookEndpointSecret(ctx, params.id)) };
    },
  },
  listRoute({
    path: '/webhook_endpoints/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    tag: 'Webhooks',
    summary: "Get a webhook endpoint's deliveries, newest first",
    item: webhookDeliverySchema,
    description: 'A list of `webhook_delivery` objects',
    errors: [...authErrors, 'resource_not_found'],
    url: (params) => `${BASE}/webhook_endpoints/${params.id}/deliveries`,
    message: 'Webhook deliveries retrieved successfully',
    list: (ctx, page, { params }) => listDeliveries(ctx, params.id, page),
    present: presentWebhookDelivery,
  }),
  {
    method: 'POST',
    path: '/webhook_endpoints/{id}/deliveries/{delivery_id}/retry',
    operationId: 'retryWebhookDelivery',
    tag: 'Webhooks',
    summary: 'Attempt a delivery once more, now (a FAILED one too)',
    success: { status: 200, description: 'The `webhook_delivery`, PENDING and due now', schema: webhookDeliverySchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentWebhookDelivery(await retryDelivery(ctx, params.id, params.delivery_id)) };
    },
  },
]);
