import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRead } from '../../db/engine/index.ts';
import type { Near } from '../../platform/geo.ts';
import type { Page, PageArgs } from '../../platform/pagination.ts';
import { providersFromRows } from './providers.service.ts';
import { withDistance, type ProviderShape } from './list-providers.ts';

// Pass.providers for a page of passes in one statement: a lateral subquery per pass takes its
// first limit + 1 covered providers (nearest first over the GiST index, or newest first), so a
// page of passes does not cost a query each. The coverage rule is the one of pass-coverage.ts,
// written against the pass row: a category of the pass has the provider's category as `type`
// and the provider's tier among its (upper-cased) `tiers`.
const COVERS = `exists (select 1 from jsonb_array_elements(pp.categories) c
   where c->>'type' = p.category
     and p.tier in (select upper(t) from jsonb_array_elements_text(c->'tiers') t))`;

/** First pages (no cursor) of the providers each pass covers, keyed by pass id. */
export async function firstCoveredProviderPages(
  em: EntityManager,
  passIds: readonly string[],
  near: Near | undefined,
  page: PageArgs,
): Promise<Map<string, Page<ProviderShape>>> {
  const backward = page.backward === true;
  const dir = backward ? 'desc' : 'asc';
  const conditions = [COVERS];
  // `rank_key` carries the list order out of the lateral subquery, where the outer ORDER BY needs it.
  let rankKey = 'null::float8';
  let distance = 'null::float8';
  let order = `p.id ${backward ? 'asc' : 'desc'}`;
  let outerOrder = `covered.id ${backward ? 'asc' : 'desc'}`;
  let params: unknown[] = [];
  if (near) {
    const point = 'p.earth_point';
    const origin = 'll_to_earth(?::float8, ?::float8)';
    const radiusM = near.radiusKm * 1000;
    rankKey = `(${point} <-> ${origin})`;
    distance = `earth_distance(${point}, ${origin})`;
    conditions.push(`earth_box(${origin}, ?::float8) @> ${point}`, `earth_distance(${point}, ${origin}) <= ?::float8`);
    order = `${point} <-> ${origin} ${dir}, p.id ${dir}`;
    outerOrder = `covered.rank_key ${dir}, covered.id ${dir}`;
    // In statement order: rank_key, distance_m, the two conditions, then the order.
    const at = [near.lat, near.lon];
    params = [...at, ...at, ...at, radiusM, ...at, radiusM, ...at];
  }
  // The passes as one array parameter: one statement text, so one prepared statement, whatever their number.
  const rows =
    passIds.length === 0
      ? []
      : await preparedRead<Record<string, unknown>>(
          em,
          `select covered.*
       from pass_package pp
       cross join lateral (
         select p.*, pp.id as covering_pass_id, ${rankKey} as rank_key, ${distance} as distance_m
           from provider p
          where ${conditions.join(' and ')}
          order by ${order}
          limit ?
       ) covered
      where pp.id = any(?)
      order by covered.covering_pass_id, ${outerOrder}`,
          [...params, page.limit + 1, passIds],
        );
  const byPass = new Map<string, ProviderShape[]>(passIds.map((id) => [id, []]));
  for (const { covering_pass_id: passId, distance_m: distanceM, rank_key: _, ...columns } of rows) {
    const [provider] = providersFromRows(em, [columns]);
    byPass.get(passId as string)?.push(near ? withDistance(provider, distanceM as number) : provider);
  }
  return new Map(
    [...byPass].map(([id, providers]) => {
      const data = providers.slice(0, page.limit);
      if (backward) data.reverse();
      return [
        id,
        { data, hasMore: providers.length > page.limit, direction: backward ? 'backward' : 'forward' } satisfies Page<ProviderShape>,
      ];
    }),
  );
}
