import { DomainError, notFound } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { ClientSessionSchema, type ClientSession } from './client-sessions.entity.ts';

// Other modules reach client sessions only through this file (docs/architecture.md "Module boundaries").
// Authentication reads the table itself, by plain SQL (src/platform/auth.ts).
export type { ClientSession } from './client-sessions.entity.ts';
export { clientSessionScopes } from './client-sessions.entity.ts';

const noTokenHere = () => new DomainError('permission_denied', 'A client-session token cannot read or revoke client sessions');

/** A client session of the caller's reseller (never its token: only the hash is kept); any other id is 404. */
export async function getOwnClientSession(ctx: Ctx, id: string): Promise<ClientSession> {
  const { resellerId, clientSession } = resellerOf(ctx);
  if (clientSession) throw noTokenHere();
  const session = isId('clientSession', id) ? await ctx.em.findOne(ClientSessionSchema, { id, resellerId }) : null;
  if (!session) throw notFound('client session', id);
  return session;
}

/**
 * The session of the client-session token making the request (GraphQL `currentClientSession`): a
 * frontend given only the token learns which client it acts for, its scopes and its expiry. Any
 * other caller (an API key) has none: null. The token was checked moments ago (src/platform/auth.ts),
 * so its row exists; read as it is now, a revocation since then shows in `revokedAt`.
 */
export async function getCurrentClientSession(ctx: Ctx): Promise<ClientSession | null> {
  const { resellerId, clientSession } = resellerOf(ctx);
  if (!clientSession) return null;
  const session = await ctx.em.findOne(ClientSessionSchema, { id: clientSession.sessionId, resellerId });
  // Nothing deletes sessions, so the row is there; were it not, a 404 answers rather than a failure.
  if (!session) throw notFound('client session', clientSession.sessionId);
  return session;
}

/**
 * DELETE /client_sessions/{id}: the token stops working, within 1 s on every process (the cache of
 * src/platform/auth.ts). Revoking a revoked session answers it as it is: the first `revoked_at` stays.
 */
export async function revokeClientSession(ctx: TxCtx, id: string): Promise<ClientSession> {
  const session = await getOwnClientSession(ctx, id);
  if (session.revokedAt == null) {
    session.revokedAt = ctx.clock.now();
    await ctx.em.flush();
  }
  return session;
}
