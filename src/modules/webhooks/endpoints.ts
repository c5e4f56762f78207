import { LockMode } from '@mikro-orm/core';
import { z } from 'zod';
import { DomainError, notFound, validationError } from '../../platform/errors.ts';
import { isId, newId } from '../../platform/ids.ts';
import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { advisoryXactLock, type TxCtx } from '../../db/engine/index.ts';
import { noNul, parseInput } from '../../platform/validation.ts';
import { eventCatalog } from '../events/index.ts';
import { newWebhookSecret, secretsBox } from './signing.ts';
import { checkEndpointUrl, MAX_URL_LENGTH } from './urls.ts';
import { WebhookEndpointSchema, type WebhookEndpoint } from './webhooks.entity.ts';

// Webhook endpoints (docs/partner-guide.md "Webhooks"): created, listed, read, deleted and their secret rotated.
// The secret is answered only by create and rotate; the row keeps it sealed.

/** How long the secret a rotation replaced keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;
/** Endpoints a reseller may have at once: each is polled and retried, so their number bounds one reseller's delivery load. */
export const MAX_ENDPOINTS_PER_RESELLER = 16;
/** `enabled_events` value that subscribes to every type, today's and those added later. */
export const ALL_EVENTS = '*';

export const createWebhookEndpointInput = z.strictObject({
  url: z
    .string()
    .min(1)
    .max(MAX_URL_LENGTH)
    .describe('Where events are POSTed: an http:// or https:// URL without credentials, to a public address'),
  enabled_events: z
    .array(z.string().max(100))
    .min(1)
    .max(100)
    .describe('The event types to receive (docs/partner-guide.md "Events"), or `["*"]` for every type'),
  description: z
    .string()
    .max(500)
    .refine(noNul, 'Must not contain NUL characters')
    .nullable()
    .optional()
    .describe('What the endpoint is for; for people'),
});
export type CreateWebhookEndpointInput = z.input<typeof createWebhookEndpointInput>;

/** An endpoint and its secret in plain text, as create and rotate answer once. */
export interface EndpointWithSecret {
  endpoint: WebhookEndpoint;
  secret: string;
}

/** `["*"]` alone, or catalogue types (each once, in the order sent); anything else is a 400 on `enabled_events`. */
function checkEnabledEvents(types: string[]): string[] {
  if (types.includes(ALL_EVENTS)) {
    if (types.length > 1) throw validationError('enabled_events', `'*' subscribes to every type: send it alone`);
    return [ALL_EVENTS];
  }
  const unknown = types.find((t) => !Object.hasOwn(eventCatalog, t));
  if (unknown !== undefined)
    throw validationError('enabled_events', `'${unknown}' is not an event type (docs/partner-guide.md "Events" lists them)`);
  return [...new Set(types)];
}

export async function createWebhookEndpoint(ctx: TxCtx, raw: CreateWebhookEndpointInput): Promise<EndpointWithSecret> {
  const input = parseInput(createWebhookEndpointInput, raw);
  const url = checkEndpointUrl(input.url, ctx.config.WEBHOOK_ALLOW_PRIVATE_URLS);
  const enabledEvents = checkEnabledEvents(input.enabled_events);
  const { resellerId } = resellerOf(ctx);
  await checkEndpointRoom(ctx, resellerId);
  const now = ctx.clock.now();
  const secret = newWebhookSecret();
  const box = await secretsBox(ctx.em, ctx.config);
  const endpoint = ctx.em.create(WebhookEndpointSchema, {
    id: newId('webhookEndpoint', now.getTime()),
    resellerId,
    url,
    enabledEvents,
    status: 'ENABLED',
    description: input.description ?? null,
    secret: box.seal(secret),
    previousSecret: null,
    previousSecretExpiresAt: null,
    createdAt: now,
    updatedAt: now,
  });
  await ctx.em.flush();
  return { endpoint, secret };
}

/**
 * 409 endpoint_limit_reached at MAX_ENDPOINTS_PER_RESELLER (disabled ones count: delete one to add
 * another). Counted under a transaction-scoped advisory lock of the reseller's, so two creates
 * cannot both see room for one; nothing else waits for it.
 */
async function checkEndpointRoom(ctx: TxCtx, resellerId: string): Promise<void> {
  await advisoryXactLock(ctx.em, `webhook_endpoints:${resellerId}`);
  const count = await ctx.em.count(WebhookEndpointSchema, { resellerId });
  if (count >= MAX_ENDPOINTS_PER_RESELLER) {
    throw new DomainError(
      'endpoint_limit_reached',
      `A reseller has at most ${MAX_ENDPOINTS_PER_RESELLER} webhook endpoints; delete one to add another`,
    );
  }
}

export function listWebhookEndpoints(ctx: Ctx, page: PageArgs): Promise<Page<WebhookEndpoint>> {
  const { resellerId } = resellerOf(ctx);
  return keysetPage(ctx.em, WebhookEndpointSchema, { resellerId }, page, 'webhookEndpoint');
}

/** An endpoint of the caller's reseller (locked for a change with `lock`); another reseller's or an unknown id is 404. */
export async function getOwnEndpoint(ctx: Ctx, id: string, lock = false): Promise<WebhookEndpoint> {
  const { resellerId } = resellerOf(ctx);
  const endpoint = isId('webhookEndpoint', id)
    ? await ctx.em.findOne(WebhookEndpointSchema, { id, resellerId }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {})
    : null;
  if (!endpoint) throw notFound('webhook endpoint', id);
  return endpoint;
}

/** Deletes the endpoint and its deliveries: nothing more is sent to it, whatever was pending. */
export async function deleteWebhookEndpoint(ctx: TxCtx, id: string): Promise<WebhookEndpoint> {
  const endpoint = await getOwnEndpoint(ctx, id, true);
  ctx.em.remove(endpoint);
  await ctx.em.flush();
  return endpoint;
}

/**
 * A new secret; the one it replaces keeps signing beside it for ROTATION_OVERLAP_MS, so receivers
 * can switch without losing a delivery. A secret older than that one stops signing now.
 */
export async function rotateWebhookEndpointSecret(ctx: TxCtx, id: string): Promise<EndpointWithSecret> {
  const endpoint = await getOwnEndpoint(ctx, id, true);
  const now = ctx.clock.now();
  const secret = newWebhookSecret();
  const box = await secretsBox(ctx.em, ctx.config);
  endpoint.previousSecret = endpoint.secret;
  endpoint.previousSecretExpiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  endpoint.secret = box.seal(secret);
  endpoint.updatedAt = now;
  await ctx.em.flush();
  return { endpoint, secret };
}
