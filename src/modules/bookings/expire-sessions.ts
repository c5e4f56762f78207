import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Logger } from '../../platform/logger.ts';
import { backgroundCtx } from '../../platform/request-context.ts';
import { sweepInBatches } from '../../platform/sweep.ts';
import { BookingSessionSchema } from './bookings.entity.ts';
import { recordBookingEvent } from './bookings.events.ts';

/**
 * The session expiry sweep (in `serve` and `worker`, docs/partner-guide.md "Bookings"): OPEN sessions past their
 * `expires_at` become EXPIRED, each with its `booking_session.expired` event in the same
 * transaction, in batches (src/platform/sweep.ts: a confirm holding a session's lock is never
 * waited for; its own check refuses an expired session anyway). Returns how many sessions expired.
 */
export function expireBookingSessions(em: EntityManager, deps: { clock: Clock; config: Config; log: Logger }): Promise<number> {
  return sweepInBatches(
    em,
    deps.clock,
    {
      sql: `select id from booking_session where status = 'OPEN' and expires_at <= ? order by expires_at limit ? for update skip locked`,
    },
    async (tx, ids, now) => {
      const sessions = await tx.find(BookingSessionSchema, { id: { $in: ids } });
      for (const session of sessions) {
        session.status = 'EXPIRED';
        session.updatedAt = now;
      }
      await tx.flush();
      // The sweep is no reseller's request: its events name the reseller that opened each session.
      const ctx = backgroundCtx(tx, deps);
      for (const session of sessions) {
        await recordBookingEvent(ctx, 'booking_session.expired', session, { resellerId: session.resellerId });
      }
      return sessions.length;
    },
  );
}
