import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isId, newId } from '../../platform/ids.ts';
import { keyListing, newKey, revokeKey, type KeyListing } from '../../platform/api-keys.ts';
import { notFound } from '../../platform/errors.ts';
import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { parseInput, shortText } from '../../platform/validation.ts';
import { businessAccountBalance, businessAccountBalances, creditBusinessAccount, openBusinessAccount } from '../ledger/index.ts';
import { preparedRead, withTransaction, type TxCtx } from '../../db/engine/index.ts';
import { ApiKeySchema, ResellerSchema, type Reseller } from './resellers.entity.ts';

// Operator use cases (the CLI): resellers, their API keys and business-account funding; and a
// reseller's own lookup setting and the issuers it can look clients up at (docs/partner-guide.md "Lookup").
// Other modules reach resellers only through this file (docs/architecture.md "Module boundaries").
export type { Reseller } from './resellers.entity.ts';

export const lookupSettingsInput = z.strictObject({
  enabled: z.boolean({ error: 'Expected true or false' }).describe("true: other resellers may look up this reseller's clients"),
});
export type LookupSettingsInput = z.input<typeof lookupSettingsInput>;

/** The caller's own reseller row. */
export async function getOwnReseller(ctx: Ctx): Promise<Reseller> {
  return ctx.em.findOneOrFail(ResellerSchema, { id: resellerOf(ctx).resellerId });
}

/**
 * Stores whether other resellers (and the caller itself) may look up this reseller's clients. The
 * use case is the lookups module's setLookupEnabled, which also revokes lookups when it turns off.
 */
export async function storeLookupEnabled(ctx: TxCtx, raw: LookupSettingsInput): Promise<Reseller> {
  const input = parseInput(lookupSettingsInput, raw);
  const reseller = await getOwnReseller(ctx);
  reseller.lookupEnabled = input.enabled;
  await ctx.em.flush();
  return reseller;
}

/**
 * Stores whether the reseller's client-session callers run only its trusted documents
 * (docs/partner-guide.md "Trusted documents"); the trusted-documents module's use case calls it.
 */
export async function storeTrustedDocumentsOnly(em: EntityManager, resellerId: string, only: boolean): Promise<Reseller> {
  const reseller = await getReseller(em, resellerId);
  reseller.trustedDocumentsOnly = only;
  await em.flush();
  return reseller;
}

/** Whether the reseller's client-session callers run only its trusted documents; false for an unknown id. */
export async function trustedDocumentsOnlyOf(em: EntityManager, resellerId: string): Promise<boolean> {
  const [row] = await preparedRead<{ trusted_only: boolean }>(
    em,
    'select trusted_documents_only as trusted_only from reseller where id = ?',
    [resellerId],
  );
  return row?.trusted_only === true;
}

/** Who can be looked up at: active resellers with lookup enabled, the caller included when it is one. */
const issuerWhere = { lookupEnabled: true, status: 'ACTIVE' as const };

/** GET /issuers: the issuers, newest first. */
export function listIssuers(ctx: Ctx, page: PageArgs): Promise<Page<Reseller>> {
  resellerOf(ctx);
  return keysetPage(ctx.em, ResellerSchema, issuerWhere, page, 'reseller');
}

/** An issuer by id, or null: a reseller that is not one (or not active) cannot be told from none. */
export async function findIssuer(em: EntityManager, id: string): Promise<Reseller | null> {
  return isId('reseller', id) ? em.findOne(ResellerSchema, { id, ...issuerWhere }) : null;
}

export const createResellerInput = z.strictObject({
  name: shortText(200),
  currency: z.string().regex(/^[A-Z]{3}$/, 'Expected an ISO-4217 currency code such as EUR'),
});

/** A reseller and its business account (balance 0; `fundReseller` credits it), in one transaction. */
export async function createReseller(em: EntityManager, raw: z.input<typeof createResellerInput>, at: Date): Promise<Reseller> {
  const input = parseInput(createResellerInput, raw);
  return withTransaction(em, async (tx) => {
    const reseller = tx.create(ResellerSchema, {
      id: newId('reseller', at.getTime()),
      name: input.name,
      currency: input.currency,
      status: 'ACTIVE',
      lookupEnabled: false,
      trustedDocumentsOnly: false,
      createdAt: at,
    });
    await tx.flush();
    await openBusinessAccount(tx, reseller.id);
    return reseller;
  });
}

export async function getReseller(em: EntityManager, id: string): Promise<Reseller> {
  const reseller = await em.findOne(ResellerSchema, { id });
  if (!reseller) throw notFound('reseller', id);
  return reseller;
}

export async function setResellerStatus(em: EntityManager, id: string, status: 'ACTIVE' | 'DISABLED'): Promise<Reseller> {
  const reseller = await getReseller(em, id);
  reseller.status = status;
  await em.flush();
  return reseller;
}

/**
 * The operator sets a reseller's own rate limit (`resellers limits`), or clears it back to the
 * configured default with null. Every process takes it within the API-key cache's 500 ms.
 */
export async function setResellerRateLimit(
  em: EntityManager,
  id: string,
  limit: { perSecond: number; burst: number } | null,
): Promise<Reseller> {
  const reseller = await getReseller(em, id);
  reseller.rateLimitPerSecond = limit?.perSecond ?? null;
  reseller.rateLimitBurst = limit?.burst ?? null;
  await em.flush();
  return reseller;
}

/** Operator funding: a CREDIT ledger row on the business account, in its own transaction (a savepoint inside one). */
export async function fundReseller(
  em: EntityManager,
  id: string,
  amount: number,
  at: Date,
  description = 'Funded by operator',
): Promise<number> {
  await getReseller(em, id);
  return withTransaction(em, async (tx) => {
    await creditBusinessAccount(tx, { resellerId: id, amount, description, at });
    return businessAccountBalance(tx, id);
  });
}

/** Creates an API key; the secret is returned once and only its SHA-256 is stored. */
export async function createApiKey(
  em: EntityManager,
  resellerId: string,
  at: Date,
  label?: string,
): Promise<{ id: string; secret: string }> {
  await getReseller(em, resellerId);
  const { secret, columns } = newKey('sk', at, label);
  const key = em.create(ApiKeySchema, { id: newId('apiKey', at.getTime()), resellerId, ...columns });
  await em.flush();
  return { id: key.id, secret };
}

export async function revokeApiKey(em: EntityManager, keyId: string, at: Date): Promise<void> {
  const key = await em.findOne(ApiKeySchema, { id: keyId });
  if (!key) throw notFound('API key', keyId);
  revokeKey(key, at);
  await em.flush();
}

export interface ResellerListing {
  id: string;
  name: string;
  currency: string;
  status: string;
  balance: number;
  created_at: string;
}

/** Every reseller, oldest first (the operator's `resellers list`). */
export async function listResellers(em: EntityManager): Promise<ResellerListing[]> {
  const rows = await em.find(ResellerSchema, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const balances = await businessAccountBalances(em);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    currency: r.currency,
    status: r.status,
    balance: balances.get(r.id) ?? 0,
    created_at: r.createdAt.toISOString(),
  }));
}

export type ApiKeyListing = KeyListing;

/**
 * A reseller's keys, oldest first, without their secrets. When a key was last used is not
 * tracked: that would be a write on every request.
 */
export async function listApiKeys(em: EntityManager, resellerId: string): Promise<ApiKeyListing[]> {
  await getReseller(em, resellerId);
  const rows = await em.find(ApiKeySchema, { resellerId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return rows.map(keyListing);
}
