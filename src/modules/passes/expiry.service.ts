import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Logger } from '../../platform/logger.ts';
import { backgroundCtx } from '../../platform/request-context.ts';
import { sweepInBatches } from '../../platform/sweep.ts';
import { IssuedPassSchema, PassPackageSchema } from './passes.entity.ts';
import { recordPassEvent } from './passes.events.ts';

// The pass expiry sweep, a service file of its own: the events it records are presented
// (passes.events.ts, passes.presenter.ts) with functions of passes.service.ts.

/**
 * The issued-pass expiry sweep (in `serve` and `worker` every SESSION_SWEEP_MS, docs/partner-guide.md "Events"):
 * an ACTIVE pass past `expires_at` is stored EXPIRED, with issued_pass.expired in the same
 * transaction. Reads never waited for it (an ACTIVE pass past its expiry reads EXPIRED already);
 * it is the one moment the change is announced. A later expiry or renewal makes the pass ACTIVE
 * again, and its next expiry is announced again. In batches (src/platform/sweep.ts: a renewal
 * holding the row is not waited for; the next run sees whether it still expired). Returns how
 * many passes expired.
 */
export function expireIssuedPasses(em: EntityManager, deps: { clock: Clock; config: Config; log: Logger }): Promise<number> {
  return sweepInBatches(
    em,
    deps.clock,
    {
      sql: `select id from issued_pass where status = 'ACTIVE' and expires_at <= ? order by expires_at limit ? for update skip locked`,
    },
    async (tx, ids, now) => {
      const passes = await tx.find(IssuedPassSchema, { id: { $in: ids } });
      const packages = new Map(
        (await tx.find(PassPackageSchema, { id: { $in: [...new Set(passes.map((p) => p.passId))] } })).map((p) => [p.id, p]),
      );
      for (const issuedPass of passes) {
        issuedPass.status = 'EXPIRED';
        issuedPass.updatedAt = now;
      }
      await tx.flush();
      // The sweep is no reseller's request: each event names the pass's reseller.
      const ctx = backgroundCtx(tx, deps);
      for (const issuedPass of passes) {
        await recordPassEvent(
          ctx,
          'issued_pass.expired',
          { issuedPass, pass: packages.get(issuedPass.passId)! },
          { resellerId: issuedPass.resellerId, now },
        );
      }
      return passes.length;
    },
  );
}
