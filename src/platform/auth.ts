import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from './errors.ts';
import { sha256Hex } from './crypto.ts';
import type { ResellerCaller } from './request-context.ts';

const API_KEY = /^sk_[0-9A-Za-z]{40}$/;

/**
 * `Authorization: Bearer sk_…` → the reseller it acts for. Keys are compared by SHA-256 only.
 * Missing, malformed, unknown and revoked keys all answer the same 401.
 */
export async function authenticateReseller(em: EntityManager, authorization: string | undefined): Promise<ResellerCaller> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) {
    throw new DomainError('invalid_api_key', authorization
      ? 'Authorization must be "Bearer <API key>"'
      : 'No API key: send "Authorization: Bearer <API key>"');
  }
  const secret = match[1];
  const invalid = new DomainError('invalid_api_key', 'Invalid API key');
  if (!API_KEY.test(secret)) throw invalid;
  const [row] = await em.execute<{ key_id: string; reseller_id: string; status: string; currency: string }[]>(
    `select k.id as key_id, r.id as reseller_id, r.status, r.currency
       from api_key k join reseller r on r.id = k.reseller_id
      where k.secret_hash = ? and k.revoked_at is null`,
    [sha256Hex(secret)],
  );
  if (!row) throw invalid;
  if (row.status !== 'ACTIVE') throw new DomainError('account_disabled', 'This reseller account is disabled');
  return { kind: 'reseller', resellerId: row.reseller_id, apiKeyId: row.key_id, currency: row.currency.trim() };
}
