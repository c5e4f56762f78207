import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRead } from '../../db/engine/index.ts';
import type { PassPackage } from '../passes/index.ts';
import type { ProviderCategory } from './providers.entity.ts';

// A pass covers a provider when one of its categories has the provider's category as `type` and
// the provider's tier among its `tiers`. Tier labels are upper case like every V3 enum value
// (docs/domain-rules.md "Decisions recorded here"), so a pass's labels are upper-cased and the provider's tier compared exactly,
// which keeps the (category, tier, id) index usable.

export interface CoveredTiers {
  category: ProviderCategory;
  tiers: string[];
}

export function coveredTiers(pass: Pick<PassPackage, 'categories'>): CoveredTiers[] {
  return pass.categories
    .map((c) => ({ category: c.type, tiers: [...new Set(c.tiers.map((t) => t.toUpperCase()))] }))
    .filter((c) => c.tiers.length > 0);
}

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
