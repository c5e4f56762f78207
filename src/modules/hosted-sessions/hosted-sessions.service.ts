import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import { notFound } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import type { Logger } from '../../platform/logger.ts';
import { backgroundCtx, resellerOf, type Ctx } from '../../platform/request-context.ts';
import { sweepInBatches } from '../../platform/sweep.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { HostedSessionSchema, type HostedSession } from './hosted-sessions.entity.ts';
import { recordHostedSessionEvent } from './hosted-sessions.events.ts';

// Other modules reach hosted sessions only through this file (docs/architecture.md "Module boundaries").
export type { HostedSession } from './hosted-sessions.entity.ts';

/** A hosted session of the caller's reseller (never its URL: only the secret's hash is kept); any other id is 404. */
export async function getOwnHostedSession(ctx: Ctx, id: string): Promise<HostedSession> {
  const { resellerId } = resellerOf(ctx);
  const session = isId('hostedSession', id) ? await ctx.em.findOne(HostedSessionSchema, { id, resellerId }) : null;
  if (!session) throw notFound('hosted session', id);
  return session;
}

/** A page secret: `hss_` and 40 base62 characters; anything else names no session (no query). */
const SECRET = /^hss_[0-9A-Za-z]{40}$/;

/** The session a page secret opens, whatever its status; undefined for an unknown or malformed secret. */
export async function sessionOfSecret(em: EntityManager, secret: string): Promise<HostedSession | undefined> {
  if (!SECRET.test(secret)) return undefined;
  return (await em.findOne(HostedSessionSchema, { secretHash: sha256Hex(secret) })) ?? undefined;
}

/** The same session locked for its one completion: two submits of the page's form finish it once. */
export async function lockSession(tx: TxCtx, id: string): Promise<HostedSession> {
  return tx.em.findOneOrFail(HostedSessionSchema, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/** Marks the (locked) session COMPLETED with what the client got, and records hosted_session.completed. */
export async function completeSession(
  tx: TxCtx,
  session: HostedSession,
  result: { bookingId: string } | { accessCodeId: string },
): Promise<void> {
  const now = tx.clock.now();
  session.status = 'COMPLETED';
  session.completedAt = now;
  session.updatedAt = now;
  if ('bookingId' in result) session.bookingId = result.bookingId;
  else session.accessCodeId = result.accessCodeId;
  await tx.em.flush();
  await recordHostedSessionEvent(tx, 'hosted_session.completed', session, { resellerId: session.resellerId, now });
}

/**
 * The hosted-session expiry sweep (in `serve` and `worker` every SESSION_SWEEP_MS, docs/partner-guide.md "Hosted
 * sessions"): OPEN sessions past `expires_at` become EXPIRED, each with hosted_session.expired in
 * the same transaction, in batches (src/platform/sweep.ts: a page completing a session, holding
 * its lock, is not waited for). Returns how many expired.
 */
export function expireHostedSessions(em: EntityManager, deps: { clock: Clock; config: Config; log: Logger }): Promise<number> {
  return sweepInBatches(
    em,
    deps.clock,
    {
      sql: `select id from hosted_session where status = 'OPEN' and expires_at <= ? order by expires_at limit ? for update skip locked`,
    },
    async (tx, ids, now) => {
      const sessions = await tx.find(HostedSessionSchema, { id: { $in: ids } });
      for (const session of sessions) {
        session.status = 'EXPIRED';
        session.updatedAt = now;
      }
      await tx.flush();
      // The sweep is no reseller's request: its events name each session's reseller.
      const ctx = backgroundCtx(tx, deps);
      for (const session of sessions)
        await recordHostedSessionEvent(ctx, 'hosted_session.expired', session, { resellerId: session.resellerId, now });
      return sessions.length;
    },
  );
}
