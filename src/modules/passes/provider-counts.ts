import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRead } from '../../db/engine/index.ts';

// A pass's provider count (`provider_count`): the providers it covers, by the rule of
// src/modules/providers/pass-coverage.ts (the pass's category as `type`, the provider's tier among
// its upper-cased `tiers`), read from provider_tier, which the providers module's triggers keep.

/**
 * How many providers each pass covers, for a whole page of passes in one statement. A provider
 * has one category and one tier, so a pass's count is the sum of the counts of the distinct
 * (category, tier) pairs it covers, which provider_tier keeps (migration
 * Migration20261127000000_provider_tiers): a few rows read, whatever the size of the catalogue.
 */
export async function countCoveredProviders(em: EntityManager, passIds: readonly string[]): Promise<Map<string, number>> {
  if (passIds.length === 0) return new Map();
  // The ids as one array parameter: one statement text, so one prepared statement, whatever the page's size.
  const rows = await preparedRead<{ pass_id: string; providers: string }>(
    em,
    coveredProviderCountsSql('(select id, categories from pass_package where id = any(?))'),
    [passIds],
  );
  return new Map(rows.map((r) => [r.pass_id, Number(r.providers)]));
}

/**
 * The same count as SQL over `passes` (a relation with `id` and `categories`), so a list of passes
 * can carry it in its own statement: rows (pass_id, providers) for passes covering at least one.
 */
export function coveredProviderCountsSql(passes: string): string {
  return `with pairs as (
       select distinct pp.id as pass_id, c->>'type' as category, upper(t) as tier
         from ${passes} pp
         cross join lateral jsonb_array_elements(pp.categories) c
         cross join lateral jsonb_array_elements_text(c->'tiers') t
     )
     select pairs.pass_id, sum(pt.providers) as providers
       from pairs
       join provider_tier pt using (category, tier)
      group by pairs.pass_id
     having sum(pt.providers) > 0`;
}
