import { notFound } from '../../platform/errors.ts';
import { isId, newId } from '../../platform/ids.ts';
import type { DomainError } from '../../platform/errors.ts';
import { mapPages, pagesPerParent } from '../../platform/pages-per-parent.ts';
import type { Page, PageArgs } from '../../platform/pagination.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { preparedWrite, type TxCtx } from '../../db/engine/index.ts';
import { getOwnEndpoint } from './endpoints.ts';
import { WebhookDeliverySchema, type WebhookDelivery } from './webhooks.entity.ts';

// Deliveries (docs/partner-guide.md "Webhooks"): one row per event and endpoint, listed under the endpoint,
// newest first, and retried by hand.

/** A delivery id, `whd_<ULID>`: time-ordered like every id (src/platform/ids.ts). */
export const newDeliveryId = (at: Date): string => newId('webhookDelivery', at.getTime());
const isDeliveryId = (id: string): boolean => isId('webhookDelivery', id);

/**
 * A page of deliveries for each of `endpointIds` (endpoints of the caller's reseller), in one
 * statement; a cursor must be a delivery of the endpoint it pages (else 400 invalid_cursor).
 */
export async function deliveryPagesOfEndpoints(
  ctx: Ctx,
  endpointIds: readonly string[],
  page: PageArgs,
): Promise<Map<string, Page<WebhookDelivery> | DomainError>> {
  const { resellerId } = resellerOf(ctx);
  const pages = await pagesPerParent(
    ctx.em,
    {
      table: 'webhook_delivery d',
      alias: 'd',
      parentColumn: 'endpoint_id',
      descending: true,
      where: ['d.reseller_id = ?'],
      params: [resellerId],
    },
    [...new Set(endpointIds)],
    page,
  );
  return mapPages(pages, (row) => ctx.em.map(WebhookDeliverySchema, row));
}

/** An endpoint's deliveries, newest first; another reseller's or an unknown endpoint is 404. */
export async function listDeliveries(ctx: Ctx, endpointId: string, page: PageArgs): Promise<Page<WebhookDelivery>> {
  const endpoint = await getOwnEndpoint(ctx, endpointId);
  const result = (await deliveryPagesOfEndpoints(ctx, [endpoint.id], page)).get(endpoint.id)!;
  if (result instanceof Error) throw result;
  return result;
}

/**
 * One more attempt, due now, whatever the delivery's status (a FAILED one too); the attempt counts
 * like any other. An attempt under way finishes first: the delivery is not sent twice at once.
 */
export async function retryDelivery(ctx: TxCtx, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
  const endpoint = await getOwnEndpoint(ctx, endpointId);
  const [row] = isDeliveryId(deliveryId)
    ? await preparedWrite<Record<string, unknown>>(
        ctx.em,
        `update webhook_delivery set status = 'PENDING', next_attempt_at = ?, updated_at = ?
        where id = ? and endpoint_id = ? and reseller_id = ? returning *`,
        [ctx.clock.now(), ctx.clock.now(), deliveryId, endpoint.id, endpoint.resellerId],
      )
    : [];
  if (!row) throw notFound('webhook delivery', deliveryId);
  return ctx.em.map(WebhookDeliverySchema, row);
}
