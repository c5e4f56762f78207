import type { EntityManager } from '@mikro-orm/postgresql';
import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import type { Ctx } from '../../platform/request-context.ts';
import { mapPages, pagesPerParent } from '../../platform/pages-per-parent.ts';
import { plainRow } from '../../db/engine/index.ts';
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
 * A page of co-pay options for each of many providers in one statement (Provider.copayOptions on
 * a page of providers, see pagesPerParent); a cursor of one provider's list fails the others'.
 */
export async function copayOptionPagesOf(
  em: EntityManager,
  providerIds: readonly string[],
  page: PageArgs,
): Promise<Map<string, Page<CopayOption> | Error>> {
  const pages = await pagesPerParent(
    em,
    {
      table: 'copay_option o',
      alias: 'o',
      parentColumn: 'provider_id',
      descending: true,
      where: [],
      params: [],
    },
    [...new Set(providerIds)],
    page,
  );
  return mapPages(pages, (row) => plainRow(em, CopayOptionSchema, row));
}
