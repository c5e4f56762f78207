import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import {
  joinedColumns,
  lagTolerant,
  plainJoined,
  plainRows,
  preparedRead,
  type ConnectionType,
  type Plain,
} from '../../db/engine/index.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { CopayOptionSchema, ProviderSchema, type CopayOption, type Provider } from './providers.entity.ts';

// Other modules reach providers only through this file (docs/architecture.md "Module boundaries").
export { providerCategories } from './providers.entity.ts';
export type { CopayOption, OpeningHours, Provider, ProviderCategory } from './providers.entity.ts';
export { coveredTiers } from './pass-coverage.ts';

/** A provider of the shared catalogue; any authenticated reseller may read it. */
export async function getProvider(ctx: Ctx, id: string, param?: string): Promise<Provider> {
  resellerOf(ctx);
  const [provider] = isId('provider', id) ? await lagTolerant(ctx, (connectionType) => findProviders(ctx.em, [id], connectionType)) : [];
  if (!provider) throw notFound('provider', id, param);
  return provider;
}

/** Raw `select *` rows (snake_case, from proximity SQL) as Providers: plain, not managed, as no request writes one. */
export function providersFromRows(em: EntityManager, rows: Record<string, unknown>[]): Plain<Provider>[] {
  return plainRows(em, ProviderSchema, rows);
}

/**
 * The provider columns of a statement that joins `provider` as `alias` to another table's row (one
 * round trip instead of two: a class booking reads its instance with its provider), and the
 * provider such a row holds (plainRows' joinedColumns and plainJoined).
 */
export const joinedProviderColumns = (em: EntityManager, alias: string): string => joinedColumns(em, ProviderSchema, alias);
export const joinedProvider = (em: EntityManager, alias: string, row: Record<string, unknown>): Plain<Provider> | undefined =>
  plainJoined(em, ProviderSchema, alias, [row])[0];

/** Providers by id, in no particular order; unknown ids are left out. `connectionType` 'read': a lag-tolerant read (lagTolerant). */
export async function findProviders(
  em: EntityManager,
  ids: readonly string[],
  connectionType: ConnectionType = 'write',
): Promise<Provider[]> {
  // A prepared statement into plain rows (providersFromRows): every booking reads its provider,
  // and a find builds a query each time.
  const rows = await preparedRead<Record<string, unknown>>(
    em,
    'select * from provider where id in (select jsonb_array_elements_text(?::jsonb))',
    [JSON.stringify([...new Set(ids)])],
    { connectionType },
  );
  return providersFromRows(em, rows);
}

/** Whether the catalogue has this provider (a malformed id names none: no query). */
export async function providerExists(em: EntityManager, id: string, connectionType: ConnectionType = 'write'): Promise<boolean> {
  return isId('provider', id) && (await em.count(ProviderSchema, { id }, { connectionType })) > 0;
}

/** The provider's co-pay options in one currency, newest first (what a booking session offers). */
export function copayOptionsOf(em: EntityManager, providerId: string, currency: string): Promise<CopayOption[]> {
  return em.find(CopayOptionSchema, { providerId, currency }, { orderBy: { id: 'desc' } });
}

/** Co-pay options by id (a session's confirm re-reads the one chosen). */
export function findCopayOptions(em: EntityManager, ids: readonly string[]): Promise<CopayOption[]> {
  return em.find(CopayOptionSchema, { id: { $in: [...new Set(ids)] } }, { orderBy: { id: 'desc' } });
}

// Provider API keys, for the operator CLI (docs/partner-guide.md "Provider side").
export { createProviderKey, listProviderKeys, revokeProviderKey, type ProviderKeyListing } from './provider-keys.ts';
