import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { ProviderSchema, type Provider } from './providers.entity.ts';

/** A provider of the shared catalogue; any authenticated reseller may read it. */
export async function getProvider(ctx: Ctx, id: string, param?: string): Promise<Provider> {
  resellerOf(ctx);
  const provider = isId('provider', id) ? await ctx.em.findOne(ProviderSchema, { id }) : null;
  if (!provider) throw notFound('provider', id, param);
  return provider;
}

/** Raw rows (snake_case, from proximity SQL) as managed Provider entities. */
export function providersFromRows(em: EntityManager, rows: Record<string, unknown>[]): Provider[] {
  return rows.map((row) => em.map(ProviderSchema, row));
}
