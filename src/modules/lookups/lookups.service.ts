import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRead } from '../../db/engine/index.ts';
import { LockMode } from '@mikro-orm/core';
import { notFound } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { grantClientReads } from '../clients/index.ts';
import { LookupSchema, type Lookup, type LookupStatus } from './lookups.entity.ts';

// Lookups (docs/partner-guide.md "Lookup"): a reseller asks an issuer's client, by a 6-digit code mailed to the
// client, for a token to act for that client. The code and the token are kept only as hashes.
// Other modules reach lookups only through this file (docs/architecture.md "Module boundaries").

export type { Lookup, LookupStatus } from './lookups.entity.ts';
export { presentedLookupStatuses } from './lookups.entity.ts';
export { setLookupEnabled } from './lookup-settings.ts';

/** How long a mailed code works, how many wrong codes a lookup takes, how many lookups a client gets an hour. */
export const CODE_LIFETIME_MS = 15 * 60_000;
export const CODE_ATTEMPTS = 5;
export const LOOKUPS_PER_CLIENT_PER_HOUR = 5;

/** A lookup with what its status is read from: the pass its token lives with, and whether the issuer still allows lookups. */
export interface LookupView {
  lookup: Lookup;
  passStatus: string;
  passExpiresAt: Date;
  issuerEnabled: boolean;
}

/** PENDING past its code's lifetime, or ACTIVE with a token that no longer works, reads as EXPIRED. */
export function lookupStatus(view: LookupView, now: Date): LookupStatus {
  const { lookup } = view;
  if (lookup.status === 'PENDING' && lookup.expiresAt.getTime() <= now.getTime()) return 'EXPIRED';
  if (lookup.status === 'ACTIVE' && !tokenWorks(view, now)) return 'EXPIRED';
  return lookup.status;
}

/** The same rule src/platform/auth.ts applies to a presented token, and the read grant below in SQL. */
export const tokenWorks = (view: LookupView, now: Date) =>
  view.passStatus === 'ACTIVE' && view.passExpiresAt.getTime() > now.getTime() && view.issuerEnabled;

/** GET /lookups/{id}: a lookup the caller started; another reseller's is 404. */
export async function getOwnLookup(ctx: Ctx, id: string): Promise<LookupView> {
  return viewOf(ctx.em, await findOwnLookup(ctx, id, false));
}

export async function findOwnLookup(ctx: Ctx, id: string, lock: boolean): Promise<Lookup> {
  const { resellerId } = resellerOf(ctx);
  const lookup = isId('lookup', id)
    ? await ctx.em.findOne(LookupSchema, { id, resellerId }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {})
    : null;
  if (!lookup) throw notFound('lookup', id);
  return lookup;
}

export async function viewOf(em: EntityManager, lookup: Lookup): Promise<LookupView> {
  const [row] = await preparedRead<{ pass_status: string; pass_expires_at: Date; issuer_enabled: boolean }>(
    em,
    `select ip.status as pass_status, ip.expires_at as pass_expires_at, (i.lookup_enabled and i.status = 'ACTIVE') as issuer_enabled
       from issued_pass ip, reseller i where ip.id = ? and i.id = ?`,
    [lookup.issuedPassId, lookup.issuerId],
  );
  return { lookup, passStatus: row.pass_status, passExpiresAt: new Date(row.pass_expires_at), issuerEnabled: row.issuer_enabled };
}

// The read grant (docs/partner-guide.md "Lookup"): with a bearer key alone, a reseller reads a client of another
// reseller while it holds an ACTIVE lookup of it whose token would still work (the rule of tokenWorks).
grantClientReads({
  condition: (alias) => `exists (
    select 1 from lookup l
      join issued_pass ip on ip.id = l.issued_pass_id
      join reseller i on i.id = l.issuer_id
     where l.reseller_id = ? and l.client_id = ${alias}.id and l.status = 'ACTIVE'
       and ip.status = 'ACTIVE' and ip.expires_at > ? and i.lookup_enabled and i.status = 'ACTIVE')`,
  params: (resellerId, now) => [resellerId, now],
});
