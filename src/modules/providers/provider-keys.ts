import type { EntityManager } from '@mikro-orm/postgresql';
import { keyListing, newKey, revokeKey, type KeyListing } from '../../platform/api-keys.ts';
import { notFound } from '../../platform/errors.ts';
import { isId, newId } from '../../platform/ids.ts';
import { ProviderApiKeySchema, ProviderSchema } from './providers.entity.ts';

// Operator use cases (the CLI): a provider's API keys for the provider API (docs/partner-guide.md "Provider
// side"). They mirror the resellers' keys: `pk_` + 40 base62 characters, shown once, stored as
// SHA-256 only, refused within 1 s of their revocation (src/platform/auth.ts).

async function checkProvider(em: EntityManager, providerId: string): Promise<void> {
  if (!isId('provider', providerId) || (await em.count(ProviderSchema, { id: providerId })) === 0) throw notFound('provider', providerId);
}

/** Creates a provider key; the secret is returned once and only its SHA-256 is stored. */
export async function createProviderKey(
  em: EntityManager,
  providerId: string,
  at: Date,
  label?: string,
): Promise<{ id: string; secret: string }> {
  await checkProvider(em, providerId);
  const { secret, columns } = newKey('pk', at, label);
  const key = em.create(ProviderApiKeySchema, { id: newId('providerKey', at.getTime()), providerId, ...columns });
  await em.flush();
  return { id: key.id, secret };
}

/** Revokes a provider key; revoking it again keeps the first revocation time. */
export async function revokeProviderKey(em: EntityManager, keyId: string, at: Date): Promise<void> {
  const key = isId('providerKey', keyId) ? await em.findOne(ProviderApiKeySchema, { id: keyId }) : null;
  if (!key) throw notFound('provider API key', keyId);
  revokeKey(key, at);
  await em.flush();
}

export type ProviderKeyListing = KeyListing;

/** A provider's keys, oldest first, without their secrets. */
export async function listProviderKeys(em: EntityManager, providerId: string): Promise<ProviderKeyListing[]> {
  await checkProvider(em, providerId);
  const rows = await em.find(ProviderApiKeySchema, { providerId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return rows.map(keyListing);
}
