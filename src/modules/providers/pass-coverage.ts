import type { PassPackage } from '../passes/index.ts';
import type { ProviderCategory } from './providers.entity.ts';

// A pass covers a provider when one of its categories has the provider's category as `type` and
// the provider's tier among its `tiers`. Tier labels are upper case like every V3 enum value
// (docs/domain-rules.md "Decisions recorded here"), so a pass's labels are upper-cased and the provider's tier compared exactly,
// which keeps the (category, tier, id) index usable. A pass's provider count, the same rule in SQL,
// is the passes module's (src/modules/passes/provider-counts.ts).

export interface CoveredTiers {
  category: ProviderCategory;
  tiers: string[];
}

export function coveredTiers(pass: Pick<PassPackage, 'categories'>): CoveredTiers[] {
  return pass.categories
    .map((c) => ({ category: c.type, tiers: [...new Set(c.tiers.map((t) => t.toUpperCase()))] }))
    .filter((c) => c.tiers.length > 0);
}
