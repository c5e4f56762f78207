import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import { copayOptionSchema, presentCopayOption } from '../providers/providers.presenter.ts';
import { accessCodeStatusAt, accessCodeStatuses, type AccessCode } from './access-codes.entity.ts';
import type { AccessCodeSessionOpened } from './create-access-code.ts';

// V3 presenters of access codes and their sessions (docs/partner-guide.md "Access codes"); each returns z.infer of
// the schema the OpenAPI document publishes. The code and its QR are a secret shown once: only the
// answer that made the code carries them (IssuedAccessCode), never a later read or an event.

const unixTime = (what: string) => z.int().min(0).describe(`${what}, Unix seconds`);

const accessCodeFields = {
  client_id: z.string().describe('Id of the client the code is for'),
  issued_pass_id: z.string().describe('The issued pass whose visit the code holds'),
  provider_id: z.string().nullable().describe('The provider the code is valid at; null: any provider the pass covers (gyms)'),
  status: z.enum(accessCodeStatuses).describe('ACTIVE until redeemed (REDEEMED) or past `expires_at` (EXPIRED)'),
  expires_at: unixTime("End of the local day at the provider (UTC without one), or the pass's expiry when sooner"),
  redeemed_at: unixTime('When a provider redeemed it').nullable().describe('When a provider redeemed it, Unix seconds; null until then'),
  redeemed_provider_id: z.string().nullable().describe('The provider that redeemed it; null until then'),
  created: unixTime('Creation time'),
};

/** An access code without its secret: the provider's redeem answer and the `access_code.*` events. */
export const accessCodeSchema = z
  .object({
    object: z.literal('access_code').describe('Always `access_code`'),
    id: z.string().describe('Access code id'),
    ...accessCodeFields,
  })
  .meta({ id: 'AccessCode', description: 'A single-use access code for one visit, without its code (shown only when made)' });
export type AccessCodeObject = z.infer<typeof accessCodeSchema>;

/** The access code as made: with the code and its QR, shown this once. */
export const issuedAccessCodeSchema = z
  .object({
    object: z.literal('access_code').describe('Always `access_code`'),
    id: z.string().describe('Access code id'),
    code: z.string().describe('The 8-character single-use code (A–Z and 2–9 without 0/O and 1/I); shown only in this answer'),
    qr_code: z
      .string()
      .describe(
        '`data:image/png;base64,…`: a QR of the signed payload `AC1.<payload>.<signature>` (docs/partner-guide.md "Access codes"); shown only in this answer',
      ),
    ...accessCodeFields,
  })
  .meta({ id: 'IssuedAccessCode', description: 'A new single-use access code for one visit, with its code and QR (shown once)' });
export type IssuedAccessCodeObject = z.infer<typeof issuedAccessCodeSchema>;

export function presentAccessCode(c: AccessCode, now: Date): AccessCodeObject {
  return {
    object: 'access_code',
    id: c.id,
    client_id: c.clientId,
    issued_pass_id: c.issuedPassId,
    provider_id: c.providerId ?? null,
    status: accessCodeStatusAt(c, now),
    expires_at: unixSeconds(c.expiresAt),
    redeemed_at: c.redeemedAt ? unixSeconds(c.redeemedAt) : null,
    redeemed_provider_id: c.redeemedProviderId ?? null,
    created: unixSeconds(c.createdAt),
  };
}

export function presentIssuedAccessCode(
  issued: { accessCode: AccessCode; code: string; qrCode: string },
  now: Date,
): IssuedAccessCodeObject {
  const { object, id, ...rest } = presentAccessCode(issued.accessCode, now);
  return { object, id, code: issued.code, qr_code: issued.qrCode, ...rest };
}

/** Spec 2.4: an access code that needs a purchase first; fields of the other kind are null. */
export const accessCodeSessionSchema = z
  .object({
    object: z.literal('access_code_session').describe('Always `access_code_session`'),
    message: z.string().describe('Human-readable result'),
    copay_required: z.boolean().describe("true: the pass does not cover the provider's tier; confirm with one of `copay_options`"),
    additional_visits_required: z.boolean().describe("true: the month's visits are used up; confirm with extra visits at `cost_per_visit`"),
    session_id: z.string().describe('The session to confirm (POST /access-codes/{session_id}/confirm)'),
    session_expires_at: unixTime('When the session expires (24 hours after creation)'),
    copay_options: z.array(copayOptionSchema).nullable().describe('What can be bought, when a co-pay is required; null otherwise'),
    visits_used: z.int().min(0).nullable().describe('Visits used this month, when extra visits are required; null otherwise'),
    max_visits: z.int().min(0).nullable().describe('Visits the pass allows a month, when extra visits are required; null otherwise'),
    cost_per_visit: z
      .int()
      .min(0)
      .nullable()
      .describe("Price of one extra visit in the reseller's currency, when extra visits are required; null otherwise"),
  })
  .meta({ id: 'AccessCodeSession', description: 'An access code waiting for a co-pay or extra visits (spec 2.4)' });
export type AccessCodeSessionObject = z.infer<typeof accessCodeSessionSchema>;

export function presentAccessCodeSession(r: AccessCodeSessionOpened): AccessCodeSessionObject {
  const s = r.session;
  const copay = r.copayRequired;
  return {
    object: 'access_code_session',
    message: r.message,
    copay_required: r.copayRequired,
    additional_visits_required: r.additionalVisitsRequired,
    session_id: s.id,
    session_expires_at: unixSeconds(s.expiresAt),
    copay_options: copay ? r.copayOptions.map(presentCopayOption) : null,
    visits_used: copay ? null : (s.visitsUsed ?? 0),
    max_visits: copay ? null : (s.maxVisits ?? 0),
    cost_per_visit: copay ? null : (s.costPerVisit ?? 0),
  };
}

/** What POST /access-codes answers: the code made now, or a session to confirm. */
export const accessCodeCreationSchema = z.discriminatedUnion('object', [issuedAccessCodeSchema, accessCodeSessionSchema]);

export const verificationKeySchema = z
  .object({
    object: z.literal('access_code_verification_key').describe('Always `access_code_verification_key`'),
    kid: z.string().describe('Id of the key; a QR payload carries the `kid` it was signed with (fetch again when they differ)'),
    algorithm: z.literal('HMAC-SHA256').describe('The signature: HMAC-SHA256 over `AC1.<payload>` (docs/partner-guide.md "Access codes")'),
    key: z.string().describe('The key, base64url'),
  })
  .meta({ id: 'AccessCodeVerificationKey', description: "The key a provider's scanner verifies access-code QR payloads with, offline" });
export type VerificationKeyObject = z.infer<typeof verificationKeySchema>;

export function presentVerificationKey(key: { kid: string; key: Buffer }): VerificationKeyObject {
  return { object: 'access_code_verification_key', kid: key.kid, algorithm: 'HMAC-SHA256', key: key.key.toString('base64url') };
}
