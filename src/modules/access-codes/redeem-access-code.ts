import { LockMode } from '@mikro-orm/core';
import { z } from 'zod';
import { DomainError, validationError } from '../../platform/errors.ts';
import { providerOf, type Ctx } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { noNul, parseInput } from '../../platform/validation.ts';
import { coverageOf } from '../bookings/index.ts';
import { effectiveStatus, findIssuedPassWithPackage } from '../passes/index.ts';
import { findProviders } from '../providers/index.ts';
import { AccessCodeSchema, accessCodeStatusAt, type AccessCode } from './access-codes.entity.ts';
import { accessCodeHash, normalisedCode } from './issue-access-code.ts';
import { isQrPayload, signingKey, verifyQrPayload, type SigningKey } from './qr.ts';
import { recordAccessCodeEvent } from './access-codes.events.ts';

// The provider side of access codes (docs/partner-guide.md "Access codes"), with a provider key: the key to verify
// QR payloads offline, and redemption, which is the authority.

/** GET /access-codes/verification-key: the key QR payloads are signed with now. */
export function verificationKey(ctx: Ctx): Promise<SigningKey> {
  providerOf(ctx);
  return signingKey(ctx.em, ctx.config);
}

export const redeemAccessCodeInput = z.strictObject({
  code: z
    .string()
    .min(1)
    .max(2000)
    .refine(noNul, 'Must not contain NUL characters')
    .describe('The 8-character code as typed (any case), or the whole QR payload `AC1.<payload>.<signature>` as scanned'),
});
export type RedeemAccessCodeInput = z.input<typeof redeemAccessCodeInput>;

/** Neither the code nor the payload is repeated in a message: they are secrets (and end up in logs). */
const unknownCode = () => new DomainError('resource_not_found', 'No access code of that code is valid at this provider', { param: 'code' });

/** The code a body names: typed, or inside a QR payload whose signature verifies (400 otherwise), with the id it claims. */
async function codeOf(ctx: Ctx, text: string): Promise<{ code: string; id?: string }> {
  if (!isQrPayload(text.trim())) {
    const code = normalisedCode(text);
    if (!code) throw validationError('code', 'Expected the 8-character access code or its QR payload (AC1.<payload>.<signature>)');
    return { code };
  }
  const verified = verifyQrPayload(await signingKey(ctx.em, ctx.config), text.trim());
  if ('problem' in verified) throw validationError('code', verified.problem);
  const code = normalisedCode(verified.payload.code);
  if (!code) throw validationError('code', 'The QR payload carries no access code');
  return { code, id: verified.payload.id };
}

/**
 * POST /access-codes/redeem, under the code's row lock (so of concurrent redeems exactly one
 * succeeds): a code bound to another provider is 404 like an unknown one (no enumeration); a code
 * for any covered provider must be of this provider's category and tier on the client's pass (403
 * provider_not_covered); a redeemed code is 409 access_code_used, an expired one 422
 * access_code_expired, a pass no longer ACTIVE 409 pass_not_active. Redeemed: the visit it held is
 * recorded as used here, and access_code.redeemed goes to the code's reseller.
 */
export async function redeemAccessCode(ctx: TxCtx, raw: RedeemAccessCodeInput): Promise<AccessCode> {
  const { providerId } = providerOf(ctx);
  const input = parseInput(redeemAccessCodeInput, raw);
  const { code, id } = await codeOf(ctx, input.code);
  const accessCode = await ctx.em.findOne(AccessCodeSchema, { codeHash: accessCodeHash(code) }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!accessCode || (id !== undefined && id !== accessCode.id)) throw unknownCode();
  if (accessCode.providerId !== null && accessCode.providerId !== providerId) throw unknownCode();
  const now = ctx.clock.now();
  const held = await findIssuedPassWithPackage(ctx.em, accessCode.issuedPassId);
  if (!held) throw new Error(`access code ${accessCode.id}: its issued pass is gone`);
  if (accessCode.providerId === null) {
    const [provider] = await findProviders(ctx.em, [providerId]);
    if (provider.category !== accessCode.category || !coverageOf(held.pass, provider).covered) {
      throw new DomainError(
        'provider_not_covered',
        `The client's pass does not cover this provider (${provider.category} ${provider.tier}) for this code`,
      );
    }
  }
  const status = accessCodeStatusAt(accessCode, now);
  if (status === 'REDEEMED') throw new DomainError('access_code_used', `Access code '${accessCode.id}' was already redeemed`);
  if (status === 'EXPIRED') throw new DomainError('access_code_expired', `Access code '${accessCode.id}' expired`);
  const passStatus = effectiveStatus(held.issuedPass, now);
  if (passStatus !== 'ACTIVE') throw new DomainError('pass_not_active', `The client's pass is ${passStatus}`);
  accessCode.status = 'REDEEMED';
  accessCode.redeemedAt = now;
  accessCode.redeemedProviderId = providerId;
  accessCode.updatedAt = now;
  await ctx.em.flush();
  await recordAccessCodeEvent(ctx, 'access_code.redeemed', accessCode, { resellerId: accessCode.resellerId, now });
  return accessCode;
}
