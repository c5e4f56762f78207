import { LockMode } from '@mikro-orm/core';
import { notFound } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { buyVisits, checkOpen, holderOf, purchaseInput, purchaseOf, type PurchaseInput } from '../bookings/index.ts';
import { findProviders } from '../providers/index.ts';
import { AccessCodeSessionSchema, type AccessCodeSession } from './access-codes.entity.ts';
import { issueAccessCode, newAccessCodeId, type IssuedAccessCode } from './issue-access-code.ts';

// The confirm of an access-code session is one transaction, as a class session's is (docs/partner-guide.md
// "Bookings", "Access codes"): lock the session, check it is open, debit the business account,
// grant the visits bought, make the code holding one of them, mark the session used, record
// access_code.created. The purchase itself is the class confirm's (src/modules/bookings/eligibility.ts).

/** The body: `{number_of_visits, duration}` for an extra-visits session, `{copay_package_id}` for a co-pay session. */
export const confirmAccessCodeInput = purchaseInput;
export type ConfirmAccessCodeInput = PurchaseInput;

/** An access-code session of the caller's reseller, locked for its confirm; unknown, another reseller's or a booking's session: 404. */
async function lockOwnAccessCodeSession(ctx: TxCtx, id: string): Promise<AccessCodeSession> {
  const { resellerId } = resellerOf(ctx);
  const session = isId('session', id)
    ? await ctx.em.findOne(AccessCodeSessionSchema, { id, resellerId }, { lockMode: LockMode.PESSIMISTIC_WRITE })
    : null;
  if (!session) throw notFound('access code session', id);
  return session;
}

/**
 * POST /access-codes/{sessionId}/confirm: 409 session_already_confirmed for a used session, 422
 * session_expired past its 24 hours, 400 for a field of the other kind of session, 422
 * insufficient_balance; the client's pass must still be ACTIVE. Answers the new code (shown once).
 */
export async function confirmAccessCodeSession(ctx: TxCtx, sessionId: string, raw: ConfirmAccessCodeInput): Promise<IssuedAccessCode> {
  const session = await lockOwnAccessCodeSession(ctx, sessionId);
  const now = ctx.clock.now();
  checkOpen(session, now);
  const purchase = await purchaseOf(ctx, session, session.kind, raw, now);
  const holder = await holderOf(ctx, { user_pass_id: session.issuedPassId }, now);
  const [provider] = session.providerId ? await findProviders(ctx.em, [session.providerId]) : [];
  const category = provider?.category ?? 'GYM';
  const id = newAccessCodeId(now);
  // The entitlement names no booking session (its column references booking_session): the code names this session.
  const { entitlementId } = await buyVisits(ctx, session, purchase, {
    category,
    providerId: provider?.id,
    at: now,
    referenceId: id,
    bookingSessionId: null,
    accessCodeId: id,
    reason: 'ACCESS_CODE',
  });
  const issued = await issueAccessCode(ctx, holder, provider, category, { visitEntitlementId: entitlementId }, id, session.id);
  session.status = 'CONFIRMED';
  session.updatedAt = now;
  await ctx.em.flush();
  return issued;
}
