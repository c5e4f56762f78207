import type { TxCtx } from '../../db/engine/index.ts';
import { storeLookupEnabled, type LookupSettingsInput, type Reseller } from '../resellers/index.ts';
import { LookupSchema } from './lookups.entity.ts';

/**
 * POST /settings/lookup: whether other resellers (and the caller itself) may look up this
 * reseller's clients. Turning it off revokes every PENDING or ACTIVE lookup of its clients for
 * good: their tokens stop working (within the token cache's 1 s) and turning it on again revives
 * none of them, so a client's consent is never renewed without a new code (docs/partner-guide.md "Lookup").
 */
export async function setLookupEnabled(ctx: TxCtx, raw: LookupSettingsInput): Promise<Reseller> {
  const reseller = await storeLookupEnabled(ctx, raw);
  if (!reseller.lookupEnabled) {
    await ctx.em.nativeUpdate(
      LookupSchema,
      { issuerId: reseller.id, status: { $in: ['PENDING', 'ACTIVE'] } },
      { status: 'REVOKED', updatedAt: ctx.clock.now() },
    );
  }
  return reseller;
}
