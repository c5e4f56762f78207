import type { EntityManager } from '@mikro-orm/postgresql';
import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import type { Ctx } from '../../platform/request-context.ts';
import { pagesPerParent } from '../../platform/pages-per-parent.ts';
import { CopayOptionSchema, type CopayOption } from './providers.entity.ts';
import { getProvider } from './providers.service.ts';

/**
 * A provider's gym co-pay options, newest first. A spa has none by nature: its list is empty
 * rather than 404, as the provider itself exists.
 */
export async function listCopayOptions(ctx: Ctx, providerId: string, page: PageArgs): Promise<Page<CopayOption>> {
  const provider = await getProvider(ctx, providerId);
  return keysetPage(ctx.em, CopayOptionSchema, { providerId: provider.id }, page, 'copayOption');
}

/**
 * The first page (no cursor) of co-pay options of many providers in one statement (see
 * pagesPerParent); a connection with a cursor pages one provider's list through keysetPage.
 */
export async function firstCopayOptionPages(em: EntityManager, providerIds: readonly string[], page: PageArgs): Promise<Map<string, Page<CopayOption>>> {
  const pages = await pagesPerParent(em, {
    table: 'copay_option o', alias: 'o', parentColumn: 'provider_id', descending: true, where: [], params: [],
  }, [...new Set(providerIds)], { limit: page.limit, backward: page.backward });
  return new Map(providerIds.map((id) => {
    const p = pages.get(id) as Page<Record<string, unknown>>; // no cursor, so never an error
    return [id, { ...p, data: p.data.map((row) => em.map(CopayOptionSchema, row)) }];
  }));
}
