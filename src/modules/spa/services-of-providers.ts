import type { EntityManager } from '@mikro-orm/postgresql';
import type { Page, PageArgs } from '../../platform/pagination.ts';
import { mapPages, pagesPerParent } from '../../platform/pages-per-parent.ts';
import { plainRow } from '../../db/engine/index.ts';
import { SpaServiceSchema, type SpaService } from './spa.entity.ts';

/**
 * One page of services for each of many providers in one statement (Provider.services on a page
 * of providers), newest first like the REST list. Gyms have no services, whatever rows exist.
 */
export async function servicesOfProviders(
  em: EntityManager,
  providerIds: readonly string[],
  args: PageArgs,
): Promise<Map<string, Page<SpaService> | Error>> {
  const pages = await pagesPerParent(
    em,
    {
      table: 'spa_service s',
      alias: 's',
      parentColumn: 'provider_id',
      descending: true,
      where: [`exists (select 1 from provider p where p.id = s.provider_id and p.category = 'SPA')`],
      params: [],
    },
    [...new Set(providerIds)],
    args,
  );
  return mapPages(pages, (row) => plainRow(em, SpaServiceSchema, row));
}
