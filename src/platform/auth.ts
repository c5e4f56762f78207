import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from './errors.ts';
import { sha256Hex } from './crypto.ts';
import type { KeyCaller, ProviderCaller, ResellerCaller } from './request-context.ts';

/** Reseller keys are `sk_…`, provider keys `pk_…` (README "Provider side"); the prefix says which table holds the hash. */
const API_KEY = /^(sk|pk)_[0-9A-Za-z]{40}$/;

/**
 * How long a process may answer from its key → caller cache. A revoked key or a disabled reseller
 * is refused within this time on every process (the project's rule is "within 1 s"), and a busy
 * key costs one SELECT per interval instead of one per request. Unknown keys are never cached.
 */
export const KEY_CACHE_MS = 500;
const KEY_CACHE_MAX = 10_000;

export type KeyKind = KeyCaller['kind'];

/** What a key stands for; a disabled reseller's key is remembered as such (and refused with 403). */
type Verdict = { kind: KeyKind; caller: KeyCaller } | { kind: 'reseller'; disabled: true };
const cache = new Map<string, { verdict: Verdict; until: number }>();

const otherKind: Record<KeyKind, string> = {
  reseller: 'A reseller API key (sk_…) is not accepted here: the provider API (/v3/api/provider) takes a provider key (pk_…)',
  provider: 'A provider API key (pk_…) is not accepted here: the reseller API and GraphQL take a reseller key (sk_…)',
};

/**
 * `Authorization: Bearer sk_…|pk_…` → the caller it acts for, which must be of the kind the surface
 * takes (`accepts`). Keys are compared by SHA-256 only. Missing, malformed, unknown and revoked keys
 * all answer the same 401; a valid key of the other kind is 403 `permission_denied`, checked before
 * the reseller's account state, and before anything runs (docs/errors.md).
 */
export async function authenticate<K extends KeyKind>(em: EntityManager, authorization: string | undefined, accepts: K): Promise<Extract<KeyCaller, { kind: K }>> {
  // Process time, not the domain clock: tests move that clock, and the cache bound is real time.
  const nowMs = performance.now();
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) {
    throw new DomainError('invalid_api_key', authorization
      ? 'Authorization must be "Bearer <API key>"'
      : 'No API key: send "Authorization: Bearer <API key>"');
  }
  const secret = match[1];
  if (!API_KEY.test(secret)) throw invalidKey();
  const hash = sha256Hex(secret);
  let entry = cache.get(hash);
  if (!entry || entry.until <= nowMs) {
    const verdict = secret.startsWith('pk_') ? await lookUpProviderKey(em, hash) : await lookUpResellerKey(em, hash);
    if (!verdict) {
      cache.delete(hash);
      throw invalidKey();
    }
    if (cache.size >= KEY_CACHE_MAX) cache.clear(); // bounded; a full cache only costs one SELECT per key again
    entry = { verdict, until: nowMs + KEY_CACHE_MS };
    cache.set(hash, entry);
  }
  const { verdict } = entry;
  if (verdict.kind !== accepts) throw new DomainError('permission_denied', otherKind[verdict.kind]);
  if ('disabled' in verdict) throw new DomainError('account_disabled', 'This reseller account is disabled');
  return verdict.caller as Extract<KeyCaller, { kind: K }>;
}

const invalidKey = () => new DomainError('invalid_api_key', 'Invalid API key');

async function lookUpResellerKey(em: EntityManager, hash: string): Promise<Verdict | undefined> {
  const [row] = await em.execute<{ key_id: string; reseller_id: string; status: string; currency: string }[]>(
    `select k.id as key_id, r.id as reseller_id, r.status, r.currency
       from api_key k join reseller r on r.id = k.reseller_id
      where k.secret_hash = ? and k.revoked_at is null`,
    [hash],
  );
  if (!row) return undefined;
  if (row.status !== 'ACTIVE') return { kind: 'reseller', disabled: true };
  const caller: ResellerCaller = { kind: 'reseller', resellerId: row.reseller_id, apiKeyId: row.key_id, currency: row.currency.trim() };
  return { kind: 'reseller', caller };
}

async function lookUpProviderKey(em: EntityManager, hash: string): Promise<Verdict | undefined> {
  const [row] = await em.execute<{ key_id: string; provider_id: string }[]>(
    'select id as key_id, provider_id from provider_api_key where secret_hash = ? and revoked_at is null',
    [hash],
  );
  if (!row) return undefined;
  const caller: ProviderCaller = { kind: 'provider', providerId: row.provider_id, providerKeyId: row.key_id };
  return { kind: 'provider', caller };
}
