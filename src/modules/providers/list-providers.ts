import type { FilterQuery } from '@mikro-orm/core';
import { z } from 'zod';
import { proximityPage, type Near } from '../../platform/geo.ts';
import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import type { PassPackage } from '../passes/index.ts';
import { coveredTiers, type CoveredTiers } from './pass-coverage.ts';
import { ProviderSchema, providerCategories, type Provider, type ProviderCategory } from './providers.entity.ts';
import { providersFromRows } from './providers.service.ts';
import { lagTolerant } from '../../db/engine/index.ts';

// Filters accept any case (docs/domain-rules.md "Decisions recorded here"). Tiers are open labels (BRONZE, SILVER, GOLD …), so an
// unknown tier is not an error but an empty list; only a malformed label is refused.
export const providerFilterSchema = z.object({
  category: z
    .string()
    .transform((s) => s.toUpperCase())
    .pipe(z.enum(providerCategories, `category must be one of ${providerCategories.join(', ')}`))
    .optional(),
  tier: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'tier must be a tier label: 1 to 64 letters, digits, - or _')
    .transform((s) => s.toUpperCase())
    .optional(),
});

/** A provider with the distance from the searched point, when the query had one. */
export type ProviderShape = Provider & { distanceM?: number };

export interface ProviderFilter {
  category?: ProviderCategory;
  tier?: string;
}

/** Providers of the catalogue: nearest first within the radius when `near` is given, else newest first. */
export async function listProviders(
  ctx: Ctx,
  filter: ProviderFilter,
  near: Near | undefined,
  page: PageArgs,
): Promise<Page<ProviderShape>> {
  resellerOf(ctx);
  return providersPage(ctx, scopeOf(filter), near, page);
}

/** The filter as the same scope a pass's coverage uses: categories, each with its tiers. */
function scopeOf(filter: ProviderFilter): CoveredTiers[] | undefined {
  if (!filter.category && !filter.tier) return undefined;
  const categories = filter.category ? [filter.category] : providerCategories;
  return categories.map((category) => ({ category, tiers: filter.tier ? [filter.tier] : [] }));
}

/** Providers one of the pass's categories covers (category and tier), with the same proximity filter. */
export async function listCoveredProviders(
  ctx: Ctx,
  pass: PassPackage,
  near: Near | undefined,
  page: PageArgs,
): Promise<Page<ProviderShape>> {
  resellerOf(ctx);
  return providersPage(ctx, coveredTiers(pass), near, page);
}

/**
 * `scope` undefined: every provider; otherwise providers of one of its categories and, when that
 * entry lists tiers, of one of those tiers (an entry without tiers takes any tier; an empty
 * scope matches nothing).
 */
async function providersPage(
  ctx: Ctx,
  scope: CoveredTiers[] | undefined,
  near: Near | undefined,
  page: PageArgs,
): Promise<Page<ProviderShape>> {
  if (!near) {
    const where: FilterQuery<Provider> =
      scope === undefined
        ? {}
        : {
            $or:
              scope.length === 0
                ? [{ id: { $in: [] } }]
                : scope.map((s) => ({ category: s.category, ...(s.tiers.length ? { tier: { $in: s.tiers } } : {}) })),
          };
    return lagTolerant(ctx, (connectionType) => keysetPage(ctx.em, ProviderSchema, where, page, 'provider', connectionType));
  }
  const where: string[] = [];
  const params: unknown[] = [];
  if (scope !== undefined) {
    const alternatives = scope.map((s) => {
      params.push(s.category, ...s.tiers);
      return s.tiers.length ? `(p.category = ? and p.tier in (${s.tiers.map(() => '?').join(', ')}))` : '(p.category = ?)';
    });
    where.push(alternatives.length ? `(${alternatives.join(' or ')})` : 'false');
  }
  const rows = await proximityPage<Record<string, unknown> & { id: string }>(
    ctx.em,
    {
      from: 'provider p',
      pointAlias: 'p',
      idColumn: 'p.id',
      select: 'p.*',
      where,
      params,
    },
    near,
    page,
  );
  const providers = providersFromRows(ctx.em, rows.data);
  return { ...rows, data: providers.map((p, i) => withDistance(p, rows.data[i].distance_m)) };
}

/**
 * The provider seen from a searched point. A view over the managed entity rather than a change to
 * it: two searches in one request may see the same provider at different distances.
 */
export function withDistance(provider: Provider, distanceM: number): ProviderShape {
  return Object.assign(Object.create(provider) as Provider, { distanceM });
}
