import { randomFrom, sha256Hex } from '../../platform/crypto.ts';
import { newId } from '../../platform/ids.ts';
import { resellerOf } from '../../platform/request-context.ts';
import { addDays, localDateOf, timeOfMinutes, zonedInstant } from '../../platform/time.ts';
import { preparedWrite, type TxCtx } from '../../db/engine/index.ts';
import { SESSION_LIFETIME_MS, type Holder } from '../bookings/index.ts';
import type { CategoryType } from '../passes/index.ts';
import type { CopayOption, Provider } from '../providers/index.ts';
import { AccessCodeSchema, AccessCodeSessionSchema, type AccessCode, type AccessCodeSession } from './access-codes.entity.ts';
import { qrPngDataUrl, signingKey, signQrPayload } from './qr.ts';
import { recordAccessCodeEvent } from './access-codes.events.ts';

// Making a code and opening a session, shared by POST /access-codes and the session confirm
// (docs/partner-guide.md "Access codes").

/** Upper-case letters and digits without the look-alikes 0/O and 1/I: 32 symbols, 5 bits each. */
export const ACCESS_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const ACCESS_CODE_LENGTH = 8;
const CODE = new RegExp(`^[${ACCESS_CODE_ALPHABET}]{${ACCESS_CODE_LENGTH}}$`);

/** A typed code, in any case, as it was issued; undefined when it cannot be one. */
export function normalisedCode(text: string): string | undefined {
  const code = text.trim().toUpperCase();
  return CODE.test(code) ? code : undefined;
}

/** Codes are kept as their SHA-256 only, like API keys (src/platform/crypto.ts). */
export const accessCodeHash = (code: string): string => sha256Hex(code);

/** What an access code was made with: the row, and the secret shown once (the code and its QR). */
export interface IssuedAccessCode {
  accessCode: AccessCode;
  code: string;
  qrCode: string;
}

/** Where an access code's visit came from: this month's pass counter, or an entitlement. */
export type VisitSource = { visitPeriod: string; visitEntitlementId?: undefined } | { visitPeriod?: undefined; visitEntitlementId: string };

/**
 * The end of the local day of `at` in `timeZone`: the next local midnight. Where the clocks skip
 * midnight, the day ends at the first wall time that exists.
 */
export function endOfLocalDay(at: Date, timeZone: string): Date {
  const next = addDays(localDateOf(at, timeZone), 1);
  for (let minutes = 0; minutes <= 180; minutes += 15) {
    const end = zonedInstant(next, timeOfMinutes(minutes), timeZone);
    if (end) return end;
  }
  throw new Error(`no start of ${next} in ${timeZone}`);
}

/**
 * Makes the code holding the visit already taken (`source`, recorded for `id` in the visit ledger):
 * valid until the end of the local day at its provider (UTC without one), never past the pass's
 * expiry. The code is drawn until its hash is new (a clash of 32^8 codes is rare, never a 500), only
 * the hash is stored, and `access_code.created` carries neither the code nor the QR. The reseller
 * acting (`holder.resellerId`, the caller's) owns the code, as it owns the bookings it makes.
 */
export async function issueAccessCode(
  ctx: TxCtx,
  holder: Holder,
  provider: Provider | undefined,
  category: CategoryType,
  source: VisitSource,
  id: string,
  sessionId?: string,
): Promise<IssuedAccessCode> {
  const now = ctx.clock.now();
  const endOfDay = endOfLocalDay(now, provider?.timezone ?? 'UTC');
  const expiresAt = holder.issuedPass.expiresAt.getTime() < endOfDay.getTime() ? holder.issuedPass.expiresAt : endOfDay;
  let code: string | undefined;
  let row: Record<string, unknown> | undefined;
  for (let attempt = 0; attempt < 5 && !row; attempt++) {
    code = randomFrom(ACCESS_CODE_ALPHABET, ACCESS_CODE_LENGTH);
    [row] = await preparedWrite<Record<string, unknown>>(
      ctx.em,
      `insert into access_code (id, reseller_id, client_id, issued_pass_id, provider_id, category, code_hash, status,
                                visit_period, visit_entitlement_id, session_id, expires_at, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, 'ACTIVE', ?, ?, ?, ?, ?, ?)
       on conflict (code_hash) do nothing
       returning *`,
      [
        id,
        holder.resellerId,
        holder.client.id,
        holder.issuedPass.id,
        provider?.id ?? null,
        category,
        accessCodeHash(code),
        source.visitPeriod ?? null,
        source.visitEntitlementId ?? null,
        sessionId ?? null,
        expiresAt,
        now,
        now,
      ],
    );
  }
  if (!row || code === undefined) throw new Error('access_code: no unused code in five draws');
  const accessCode = ctx.em.map(AccessCodeSchema, row);
  const key = await signingKey(ctx.em, ctx.config);
  const payload = signQrPayload(key, {
    id,
    code,
    client_id: accessCode.clientId,
    provider_id: accessCode.providerId ?? null,
    exp: Math.floor(expiresAt.getTime() / 1000),
  });
  const qrCode = await qrPngDataUrl(payload);
  await recordAccessCodeEvent(ctx, 'access_code.created', accessCode, { now });
  return { accessCode, code, qrCode };
}

/** What an access-code session offers to buy. */
export interface SessionPurchase {
  kind: AccessCodeSession['kind'];
  copayOptions: CopayOption[];
  costPerVisit: number | null;
  visitsUsed: number | null;
  maxVisits: number | null;
}

/**
 * Opens an access-code session, as long as a booking session (SESSION_LIFETIME_MS): its confirm buys
 * the extra visits or the co-pay and makes the code. No event: the answer is the notice.
 */
export async function openAccessCodeSession(
  ctx: TxCtx,
  holder: Holder,
  provider: Provider | undefined,
  purchase: SessionPurchase,
): Promise<AccessCodeSession> {
  const now = ctx.clock.now();
  const session = ctx.em.create(AccessCodeSessionSchema, {
    id: newId('session', now.getTime()),
    resellerId: holder.resellerId,
    clientId: holder.client.id,
    issuedPassId: holder.issuedPass.id,
    providerId: provider?.id ?? null,
    kind: purchase.kind,
    currency: resellerOf(ctx).currency,
    copayOptionIds: purchase.copayOptions.map((o) => o.id),
    costPerVisit: purchase.costPerVisit,
    visitsUsed: purchase.visitsUsed,
    maxVisits: purchase.maxVisits,
    status: 'OPEN',
    expiresAt: new Date(now.getTime() + SESSION_LIFETIME_MS),
    createdAt: now,
    updatedAt: now,
  });
  await ctx.em.flush();
  return session;
}

export const newAccessCodeId = (at: Date): string => newId('accessCode', at.getTime());
