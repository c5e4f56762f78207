import type { EntityManager } from '@mikro-orm/postgresql';
import { autocommitWrite } from '../../db/engine/index.ts';
import type { Clock } from '../../platform/clock.ts';
import { sweepInBatches } from '../../platform/sweep.ts';
import { restoreVisit } from '../passes/index.ts';
import { AccessCodeSchema } from './access-codes.entity.ts';

export interface AccessCodeSweep {
  expired: number;
  visitsRestored: number;
  sessionsExpired: number;
}

/**
 * The access-code expiry sweep (in `serve` and `worker` every SESSION_SWEEP_MS, and the one-shot
 * `access-codes expire`; docs/partner-guide.md "Access codes"): ACTIVE codes past `expires_at` become EXPIRED and
 * give their visit back, to its entitlement or to the pass counter while it is still that month's
 * (restoreVisit's rule), with an ACCESS_CODE_EXPIRED row in the visit ledger; in batches
 * (src/platform/sweep.ts: a redeem holding a code's lock is not waited for; it refuses an expired
 * code itself). Then OPEN sessions past their 24 hours become EXPIRED (a confirm refuses them by
 * their time anyway). No events: the catalogue has none for either.
 */
export async function expireAccessCodes(em: EntityManager, deps: { clock: Clock }): Promise<AccessCodeSweep> {
  let visitsRestored = 0;
  const expired = await sweepInBatches(
    em,
    deps.clock,
    {
      sql: `select id from access_code where status = 'ACTIVE' and expires_at <= ? order by expires_at limit ? for update skip locked`,
    },
    async (tx, ids, now) => {
      const codes = await tx.find(AccessCodeSchema, { id: { $in: ids } });
      let restored = 0;
      for (const code of codes) {
        const back = await restoreVisit(tx, {
          issuedPassId: code.issuedPassId,
          category: code.category,
          entitlementId: code.visitEntitlementId ?? null,
          period: code.visitPeriod ?? null,
          at: now,
          accessCodeId: code.id,
          reason: 'ACCESS_CODE_EXPIRED',
        });
        code.status = 'EXPIRED';
        code.visitRestored = back > 0;
        code.updatedAt = now;
        restored += back;
      }
      await tx.flush();
      visitsRestored += restored;
      return codes.length;
    },
  );
  const now = deps.clock.now();
  // Counted in the statement: the engine's calls give rows, not a command's row count.
  const [sessions] = await autocommitWrite<{ count: number }>(
    em.fork(),
    `with expired as (update access_code_session set status = 'EXPIRED', updated_at = ? where status = 'OPEN' and expires_at <= ? returning 1)
     select count(*)::int as count from expired`,
    [now, now],
  );
  return { expired, visitsRestored, sessionsExpired: sessions.count };
}
